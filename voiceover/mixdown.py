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


def caption_style(lang: str) -> str:
    """libass's force_style for burnt captions in `lang`."""
    # libass sizes are in a 288-line script space: 16 there reads at any output height
    # an RTL language's captions in the Naskh face the film draws its words in (scenes/style.py)
    face = "Noto Naskh Arabic" if is_rtl(lang) else "DejaVu Sans"
    # Encoding=-1: libass takes each line's direction from its first strong letter (the RLM that
    # starts an RTL language's caption lines); otherwise it lays every line out left to right
    return f"FontName={face},FontSize=16,{'Encoding=-1,' if is_rtl(lang) else ''}PrimaryColour=&H00FFFFFF," \
           "OutlineColour=&H00000000,BackColour=&H80000000,BorderStyle=4,Outline=1,Shadow=0,MarginV=6"


def burn_captions(video: Path, srt: Path, out: Path | None = None, lang: str = "en", height: int | None = None):
    """Re-encode the picture with the captions drawn in the bottom band (audio copied), into
    `out` (default: over `video`, once complete); `height`: the video's (None: probed). Raises
    MediaError on any ffmpeg error."""
    burn_captions_together([(video, srt, out)], lang, height)


# How many clips one burn_captions_together takes: each input keeps its own decoder and x264
# encoder (and their frames) alive until it ends, so 20 clips of 1080p60 in one process peaked at
# 9.5 GB where one took 0.5 GB. So together no more picture than one 1080p clip (a chapter's
# 1080p clips one at a time, 480p ones 5 at a time, the tests' 160x90 all 14), and at most 16
# (a thread pool per encoder). A process start costs about 0.06 s: it only counts for small clips.
BURN_AREA = 1920 * 1080
BURN_MOST = 16


def clips_per_burn(height: int) -> int:
    """How many clips `height` lines high (16:9) one burn_captions_together should take."""
    return max(1, min(BURN_MOST, BURN_AREA // (height * height * 16 // 9)))


def burn_captions_together(jobs: list[tuple[Path, Path, Path | None]], lang: str = "en", height: int | None = None):
    """burn_captions of each (video, srt, out) by one ffmpeg process: a deck burns every clip of a
    chapter, and a process per clip spent most of its time starting. Each input has its own
    filter chain and captions, mapped to its own output, encoded as a burn of it alone would be.
    Every `out` is replaced only once all were written. `height`: every video's (a chapter's clips
    share it; None: each probed). Raises MediaError on any ffmpeg error."""
    style = caption_style(lang)
    outs = [Path(video if out is None else out) for video, _, out in jobs]
    parts = [temp_name(out) for out in outs]
    inputs, graph, outputs = [], [], []
    for i, ((video, _, _), part) in enumerate(zip(jobs, parts)):
        inputs += ["-i", Path(video).resolve()]
        graph.append(f"[{i}:v:0]subtitles=captions{i}.ass:force_style='{style}'[v{i}]")
        crf = "18" if (height or video_height(video)) >= 720 else "20"
        # its own input's sound, metadata and chapters (ffmpeg's default would take the first input's)
        outputs += ["-map", f"[v{i}]", "-map", f"{i}:a:0?", "-map_metadata", str(i), "-map_chapters", str(i),
                    "-c:v", "libx264", "-crf", crf, "-preset", "medium", "-pix_fmt", "yuv420p",
                    "-c:a", "copy", "-movflags", "+faststart", part.resolve()]
    # the captions are named in the filter graph, whose escaping rules (two levels of them) a
    # path with a quote or colon in it breaks: ffmpeg runs in a folder of its own holding them
    # under plain names, and every other path is passed as an argument
    # beside the output, not in $TMPDIR: a killed run's folder is removed by the next run into
    # that folder (film/make/build.py's remove_leftovers), which nothing could do for one in $TMPDIR
    try:
        with tempfile.TemporaryDirectory(prefix=home.BURN_PREFIX, dir=outs[0].resolve().parent) as tmp:
            for i, (_, srt, _) in enumerate(jobs):
                # an ASS script of our own, its text escaped: libass (and ffmpeg's SRT reader before
                # it) would take `{\...}`, `\N` or `<i>` in the SRT's text for markup and not show it
                captions.write_ass(captions.read_srt(srt), Path(tmp) / f"captions{i}.ass", lang)
            run_ffmpeg([*inputs, "-filter_complex", ";".join(graph), *outputs], cwd=tmp)
        for part, out in zip(parts, outs):
            os.replace(part, out)
    finally:
        discard(*parts)
