"""A scene that speaks: manim's Scene with a narration line per block, timed to its clip.

What onepass used manim-voiceover's VoiceoverScene for, written against manim's public Scene API:
`with scene.voiceover(text=..., **kwargs) as tracker:` asks the scene's speech service for the
line's clip (`service.generate_from_text(text, **kwargs)`: onepass's services, voiceover/services.py,
cache and time every clip themselves), puts the clip on the scene's sound track where the block
starts, runs the block, then waits until the clip has ended (a wait of a frame or less is skipped).
The tracker says when the clip starts and ends in scene time, how long it lasts and what the
service said of it (`data`: its segments, markers, cache state).
"""
from __future__ import annotations

import wave
from contextlib import contextmanager
from pathlib import Path

from manim import Scene, config


def clip_seconds(path: Path) -> float:
    """A PCM WAV clip's length: its frames over its rate (what manim-voiceover read with mutagen)."""
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / w.getframerate()


class Narration:
    """One line while it is spoken: `data` (the service's record of its clip), `duration` (the clip's
    seconds), `start_t` and `end_t` (scene time)."""

    def __init__(self, data: dict, duration: float, start: float):
        self.data, self.duration = data, duration
        self.start_t, self.end_t = start, start + duration

    def remaining(self, now: float) -> float:
        return max(self.end_t - now, 0.0)


class NarratedScene(Scene):
    """Scene + set_speech_service(service) + the voiceover(text=...) block (module docstring)."""

    speech_service = None

    def set_speech_service(self, service) -> None:
        """The service every line of this scene is spoken by (before the first voiceover block)."""
        self.speech_service = service

    @contextmanager
    def voiceover(self, text: str, **kwargs):
        if self.speech_service is None:
            raise RuntimeError("set_speech_service() before the first voiceover block")
        data = self.speech_service.generate_from_text(" ".join(text.split()), **kwargs)
        clip = Path(self.speech_service.cache_dir) / data["final_audio"]
        tracker = Narration(data, clip_seconds(clip), float(self.time))
        self.add_sound(str(clip))
        yield tracker
        # the rest of the line, on a block that ended well only: a scene unwinding (SIGTERM, Ctrl-C, an
        # error) plays nothing more (manim's segment is still open; a wait would raise a second error)
        left = tracker.remaining(float(self.time))
        if left > 1 / config["frame_rate"]:
            self.wait(left)
