"""A chapter's picture and narration joined into one MP4, without drift.

Scenes render to separate MP4s. Joining their audio with a plain stream copy lets every
scene's small audio/video length mismatch (AAC priming, a track ending before the last
frame) accumulate. So the picture is joined alone (stream copy, each part's length stated
exactly as frames / fps), and the narration track is rebuilt once for the whole chapter from
the cues: every mastered clip placed at its exact sample, the track exactly as long as the
picture, encoded once to 48 kHz AAC. Captions come from the same cues, so they match.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from onepass.data import home
from onepass.data.files import discard, temp_name
from onepass.voiceover import audio, captions
from onepass.voiceover.captions import is_rtl
from onepass.voiceover.media import run_ffmpeg, video_height, video_seconds, write_ffconcat

AAC_BITRATE = "160k"
# ffmpeg's AAC encoder with its fast coder: a half to two thirds of the CPU of its default (twoloop) on
# narration (250 s: 3.7 s against 5.5 s; 550 s: 6.1 s against 13.1 s), the same loudness, and at this
# rate no less fidelity (250 s of a chapter's narration decoded: 53 dB signal to error against 35 dB)
AAC = ["-c:a", "aac", "-aac_coder", "fast", "-b:a", AAC_BITRATE]
DEAD_AIR_SECONDS = 2.5      # silences at least this long are reported after a render


def concat_video(parts: list[Path], durations: list[float], out: Path):
    """Join the parts' video streams (no re-encode), each part exactly `duration` long."""
    with tempfile.TemporaryDirectory(prefix=home.CONCAT_PREFIX, dir=out.parent) as tmp:
        listing = write_ffconcat(Path(tmp) / "parts.txt", parts, durations)
        # checked: with a damaged part, concat logs "Invalid data found" and still exits 0
        run_ffmpeg(["-f", "concat", "-safe", "0", "-i", listing, "-map", "0:v:0", "-c", "copy", out])


def build_track(cue_lists: list[list[dict]], durations: list[float], out_wav: Path) -> np.ndarray:
    """Every cue's clip at (scene offset + clip_start), in silence exactly as long as the picture."""
    total = int(round(sum(durations) * audio.SR))
    track = np.zeros(total, dtype=np.float32)
    offset = 0.0
    for cues, length in zip(cue_lists, durations):
        for cue in cues:
            if not cue.get("clip"):
                continue
            clip, sr = audio.read_wav(Path(cue["clip"]))
            clip = audio.resample(clip, sr)
            at = int(round((offset + cue["clip_start"]) * audio.SR))
            end = min(total, at + len(clip), int(round((offset + length) * audio.SR)))
            if end > at:
                track[at:end] += clip[: end - at]
        offset += length
    np.clip(track, -1.0, 1.0, out=track)
    audio.write_wav(out_wav, track)
    return track


def dead_air(track: np.ndarray, cue_lists: list[list[dict]], durations: list[float]) -> list[tuple[float, float]]:
    """Silences of DEAD_AIR_SECONDS or more between the first line and the last (a title card
    before the narration starts, or a closing hold after it ends, is not dead air)."""
    spans, offset = [], 0.0
    for cues, length in zip(cue_lists, durations):
        spans += [(offset + c["start"], offset + c["end"]) for c in cues if c.get("clip")]
        offset += length
    if not spans:
        return []
    first, last = min(a for a, _ in spans), max(b for _, b in spans)
    return [(max(a, first), min(b, last)) for a, b in audio.silent_stretches(track, min_s=DEAD_AIR_SECONDS)
            if min(b, last) - max(a, first) >= DEAD_AIR_SECONDS]


def mux(video: Path, wav: Path | None, out: Path):
    """Video stream copied; narration (if any) encoded once: AAC, 48 kHz, mono."""
    cmd = ["-i", video]
    if wav is not None:
        cmd += ["-i", wav, "-map", "0:v:0", "-map", "1:a:0", "-c:v", "copy", *AAC, "-ar", str(audio.SR), "-ac", "1"]
    else:
        cmd += ["-map", "0:v:0", "-c", "copy"]
    run_ffmpeg(cmd + ["-movflags", "+faststart", out])


def join(parts: list[Path], cue_lists: list[list[dict]], final: Path, voiced: bool,
         durations: list[float] | None = None) -> dict:
    """Scene MP4s + their cues -> `final` (replaced only when complete: written to a unique
    temporary name beside it first; a caller that checks the result before anyone sees it
    passes a temporary name of its own as `final`). Returns a report. Raises MediaError when
    ffmpeg reports any error (a damaged part, say).

    durations: each part's exact length (frames / fps) when the caller knows it; else probed."""
    durations = durations or [video_seconds(p) for p in parts]
    report: dict = {"durations": durations, "seconds": sum(durations)}
    with tempfile.TemporaryDirectory(prefix=home.JOIN_PREFIX, dir=final.parent) as tmp:
        picture, wav = Path(tmp) / "picture.mp4", Path(tmp) / "narration.wav"
        concat_video(parts, durations, picture)
        if voiced:
            track = build_track(cue_lists, durations, wav)
            report["lufs"], report["true_peak_dbtp"] = audio.loudness(track)
            report["dead_air"] = dead_air(track, cue_lists, durations)
        part = temp_name(final)
        try:
            mux(picture, wav if voiced else None, part)
            os.replace(part, final)
        finally:
            discard(part)
    return report


def burn_captions(video: Path, srt: Path, out: Path | None = None, lang: str = "en"):
    """Re-encode the picture with the captions drawn in the bottom band (audio copied), into
    `out` (default: over `video`, once complete). Raises MediaError on any ffmpeg error."""
    height = video_height(video)
    # libass sizes are in a 288-line script space: 16 there reads at any output height
    # an RTL language's captions in the Naskh face the film draws its words in (scenes/style.py)
    face = "Noto Naskh Arabic" if is_rtl(lang) else "DejaVu Sans"
    # Encoding=-1: libass takes each line's direction from its first strong letter (the RLM that
    # starts an RTL language's caption lines); otherwise it lays every line out left to right
    style = f"FontName={face},FontSize=16,{'Encoding=-1,' if is_rtl(lang) else ''}PrimaryColour=&H00FFFFFF,OutlineColour=&H00000000," \
            "BackColour=&H80000000,BorderStyle=4,Outline=1,Shadow=0,MarginV=6"
    out = video if out is None else Path(out)
    part = temp_name(out)
    # the captions are named in the filter graph, whose escaping rules (two levels of them) a
    # path with a quote or colon in it breaks: ffmpeg runs in a folder of its own holding them
    # under a plain name, and every other path is passed as an argument
    # beside the output, not in $TMPDIR: a killed run's folder is removed by the next run into
    # that folder (film/make/build.py's remove_leftovers), which nothing could do for one in $TMPDIR
    with tempfile.TemporaryDirectory(prefix=home.BURN_PREFIX, dir=Path(out).resolve().parent) as tmp:
        # an ASS script of our own, its text escaped: libass (and ffmpeg's SRT reader before it)
        # would take `{\...}`, `\N` or `<i>` in the SRT's text for markup and not show it
        captions.write_ass(captions.read_srt(srt), Path(tmp) / "captions.ass", lang)
        try:
            run_ffmpeg(["-i", Path(video).resolve(), "-vf", f"subtitles=captions.ass:force_style='{style}'",
                        "-c:v", "libx264", "-crf", "18" if height >= 720 else "20", "-preset", "medium",
                        "-pix_fmt", "yuv420p", "-c:a", "copy", "-movflags", "+faststart", part.resolve()], cwd=tmp)
            os.replace(part, out)
        finally:
            discard(part)
