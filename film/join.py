"""Joining: a chapter's scenes into one MP4 (captions, thumbnail), and chapters into the film.

The scenes' pictures are concatenated without re-encoding, each part stated exactly
frames / fps long (no gap, no doubled frame at a join); narration, when voiced, is rebuilt
once for the whole chapter (voiceover.mixdown), so it cannot drift.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from data.files import write_json
from film.jobs import ChapterResult, SceneResult, chapter_file
from film.keys import PipelineError
from voiceover import captions, mixdown
from voiceover.media import stream_seconds, video_facts, video_seconds, write_ffconcat

FILM_NAME = "onepass-film"


def join_parts(parts: list[Path], cue_lists: list[list[dict]], final: Path, voiced: bool,
               durations: list[float] | None = None) -> dict:
    """Scene MP4s -> `final` (replaced only when complete): the picture joined by stream copy,
    each part exactly frames/fps long; with narration, the voice track rebuilt once for the
    whole chapter, exactly as long as the picture."""
    return mixdown.join(parts, cue_lists, final, voiced, durations) or {}


def thumbnail(video: Path, png: Path, at: float):
    tmp = png.with_name(png.stem + ".part.png")
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-ss", f"{max(at, 0):.2f}", "-i", str(video),
                    "-frames:v", "1", str(tmp)], check=True)
    os.replace(tmp, png)


def join_chapter(chapter: str, title: str, results: list[SceneResult], dest: Path, voiced: bool,
                 force: bool = False, burn_captions: bool = False) -> ChapterResult:
    """Join a chapter's scenes, write captions (burnt in too if asked) and a thumbnail; skipped
    when the joined files were made from exactly these scene renders."""
    final = dest / f"{chapter_file(chapter, title)}.mp4"
    stamp_path = dest / ".scenes" / f"{final.stem}.join.json"
    keys = [r.job.key for r in results]
    outputs = [final, final.with_suffix(".srt"), final.with_suffix(".vtt"), final.with_suffix(".png")]
    try:
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = {}
    if (not force and stamp.get("keys") == keys and stamp.get("voiced") == voiced
            and stamp.get("burnt", False) == burn_captions and all(p.exists() for p in outputs)
            and stamp.get("size") == final.stat().st_size):
        return ChapterResult(chapter, title, final, results, joined=False, report=stamp.get("report", {}))
    t0 = time.perf_counter()
    parts = [r.job.mp4 for r in results]
    cue_lists = [json.loads(r.job.cues.read_text(encoding="utf-8")) for r in results]
    durations = [r.seconds for r in results]
    report = join_parts(parts, cue_lists, final, voiced, durations)
    cues = captions.join_cues(cue_lists, durations)
    captions.write_srt(cues, final.with_suffix(".srt"))
    captions.write_vtt(cues, final.with_suffix(".vtt"))
    if burn_captions:
        mixdown.burn_captions(final, final.with_suffix(".srt"))
    total = sum(durations)
    thumbnail(final, final.with_suffix(".png"), at=min(total * 0.4, total - 0.1))
    frames, fps = video_facts(final)
    report = {k: v for k, v in dict(report).items() if isinstance(v, (int, float, str, list, dict, type(None)))}
    report.update({"frames": frames, "parts_frames": sum(r.frames for r in results), "seconds": frames / fps})
    if frames != report["parts_frames"]:
        raise PipelineError(f"joined chapter {chapter} has {frames} frames but its scenes have "
                            f"{report['parts_frames']}: {final}")
    write_json(stamp_path, {"keys": keys, "voiced": voiced, "burnt": burn_captions, "size": final.stat().st_size,
                            "report": report})
    return ChapterResult(chapter, title, final, results, joined=True, join_wall=time.perf_counter() - t0,
                         report=report)


# ---------------------------------------------------------------------------------------
# The film: every chapter in one file, with chapter markers

def film_metadata(titles: list[str], durations: list[float]) -> str:
    """An ffmetadata document with one chapter marker per chapter (millisecond timebase)."""
    lines, start = [";FFMETADATA1", "title=One forward pass of GPT-2 small"], 0.0
    for title, length in zip(titles, durations):
        end = start + length
        safe = "".join("\\" + ch if ch in "=;#\\\n" else ch for ch in title)   # ffmetadata escaping
        lines += ["[CHAPTER]", "TIMEBASE=1/1000", f"START={round(start * 1000)}", f"END={round(end * 1000)}",
                  f"title={safe}"]
        start = end
    return "\n".join(lines) + "\n"


def join_film(results: list[ChapterResult], dest: Path) -> Path:
    """Chapter MP4s -> one film MP4 with chapter markers, plus its captions.

    The picture is stream-copied; the audio (when there is any) is re-encoded once across the
    joins so no AAC priming gap accumulates. Replaced only when complete."""
    final = dest / f"{FILM_NAME}.mp4"
    parts = [r.final for r in results]
    durations = [video_seconds(p) for p in parts]
    has_audio = all(stream_seconds(p, "a") is not None for p in parts)
    part = final.with_name(final.stem + ".part.mp4")
    with tempfile.TemporaryDirectory(prefix="onepass-film-", dir=dest) as tmp:
        listing = write_ffconcat(Path(tmp) / "parts.txt", parts, durations)
        meta = Path(tmp) / "chapters.txt"
        meta.write_text(film_metadata([f"{r.chapter} · {r.title}" for r in results], durations), encoding="utf-8")
        audio_args = ["-map", "0:a:0", "-c:a", "aac", "-b:a", mixdown.AAC_BITRATE, "-ar", "48000"] if has_audio else []
        try:
            subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "concat", "-safe", "0", "-i", str(listing),
                            "-i", str(meta), "-map", "0:v:0", "-c:v", "copy", *audio_args, "-map_metadata", "1",
                            "-map_chapters", "1", "-movflags", "+faststart", str(part)], check=True)
            os.replace(part, final)
        finally:
            part.unlink(missing_ok=True)
    cues, offset = [], 0.0
    for p, length in zip(parts, durations):      # each chapter's captions, shifted into the film
        cues += [dict(c, start=c["start"] + offset, end=c["end"] + offset) for c in captions.read_srt(p.with_suffix(".srt"))]
        offset += length
    captions.write_srt(cues, final.with_suffix(".srt"))
    captions.write_vtt(cues, final.with_suffix(".vtt"))
    return final
