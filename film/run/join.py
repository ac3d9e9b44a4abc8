"""Joining: a chapter's scenes into one MP4 (captions, thumbnail), and chapters into the film.

The scenes' pictures are concatenated without re-encoding, each part stated exactly
frames / fps long (no gap, no doubled frame at a join); narration, when voiced, is rebuilt
once for the whole chapter (onepass.voiceover.mixdown), so it cannot drift.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from onepass.data import home
from onepass.data.bundle import sha256_file
from onepass.data.files import FolderLock, discard, replace_together, temp_name, write_json
from onepass.film.plan.errors import PipelineError
from onepass.film.plan.jobs import ChapterResult, SceneResult, chapter_file
from onepass.words.catalog import SOURCE
from onepass.voiceover import captions, mixdown
from onepass.voiceover.media import (
    MediaError, decode_problems, frame_rate, packet_hashes, run_ffmpeg, stream_seconds, video_facts,
    write_ffconcat,
)

FILM_NAME = "onepass-film"


def join_parts(parts: list[Path], cue_lists: list[list[dict]], final: Path, voiced: bool,
               durations: list[float] | None = None) -> dict:
    """Scene MP4s -> `final` (replaced only when complete): the picture joined by stream copy,
    each part exactly frames/fps long; with narration, the voice track rebuilt once for the
    whole chapter, exactly as long as the picture."""
    return mixdown.join(parts, cue_lists, final, voiced, durations) or {}


THUMB_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"   # fonts-dejavu-core (Makefile)
# a right-to-left language's title band: the Naskh face its words are drawn in (fonts-noto-core),
# set by libass in a 288-line script space (40 there matches drawtext's h*0.08 for Latin capitals)
THUMB_STYLE_RTL = ("FontName=Noto Naskh Arabic,Bold=1,FontSize=40,PrimaryColour=&H00FFFFFF,BorderStyle=1,Outline=0,"
                   "Shadow=0,Alignment=2,MarginV=6,Encoding=-1")


def settled_moment(cue_lists: list[list[dict]], durations: list[float], near: float = 0.4) -> float | None:
    """A moment of the chapter where the picture is settled: the last frame of a beat (its
    animations done, the next beat not yet begun), the one nearest `near` of the way in; the
    title card is skipped. Chapter time, in seconds; None when no cue says where a beat ends."""
    ends, offset = [], 0.0
    for cues, length in zip(cue_lists, durations):
        starts = [c.get("clip_start", c["start"]) for c in cues] + [length]
        for cue, close in zip(cues, starts[1:]):
            if cue.get("beat") != "title" and 0.2 < close <= length:
                ends.append(offset + close - 0.15)
        offset += length
    if not ends:
        return None
    return min(ends, key=lambda t: abs(t - near * offset))


def thumbnail(video: Path, png: Path, at: float, title: str | None = None, lang: str = SOURCE,
              size: tuple[int, int] | None = None):
    """One frame of `video` at `at` seconds into `png` (replaced only when written); with
    `title`, the title is drawn on it, large, in a dark band along the bottom; `size` (w, h):
    the frame scaled to it first (the band drawn at that size: a publishing thumbnail)."""
    tmp = temp_name(png)
    caption = temp_name(png.with_suffix(".txt"))
    try:
        scale = f"scale={size[0]}:{size[1]}:flags=lanczos," if size else ""
        draw = ["-vf", scale.rstrip(",")] if size else []
        band = scale + "drawbox=x=0:y=ih*0.82:w=iw:h=ih*0.18:color=black@0.8:t=fill,"
        if title and captions.is_rtl(lang):
            # drawtext lays text out left to right in one face; libass (as the burned captions) shapes
            # Urdu, falls back for what the Naskh face lacks (·) and, with Encoding=-1, sets the line
            # right to left from its first strong letter (the RLM)
            discard(caption)
            caption = caption.with_suffix(".ass")     # ASS, its text escaped: a title is shown as written
            captions.write_ass([{"start": 0.0, "end": 36000.0, "text": title}], caption, lang)
            draw = ["-vf", band + f"subtitles={caption.name}:force_style='{THUMB_STYLE_RTL}'"]
        elif title:
            caption.write_text(title, encoding="utf-8")    # a file: no escaping of the title's characters
            draw = ["-vf", (band + f"drawtext=fontfile={THUMB_FONT}:textfile={caption.name}:fontcolor=white:"
                                   "fontsize=h*0.08:x=(w-text_w)/2:y=h*0.91-text_h/2")]
        # ffmpeg runs beside the title file, named plainly in the filter graph (a quote or colon in
        # the output path would break its escaping); the other paths are arguments, made absolute
        run_ffmpeg(["-ss", f"{max(at, 0):.2f}", "-i", Path(video).resolve(), *draw, "-frames:v", "1", "-update", "1",
                    tmp.resolve()], cwd=caption.parent)
        os.replace(tmp, png)
    finally:
        discard(tmp, caption)


def check_joined(video: Path, parts: list[Path]) -> tuple[int, float]:
    """(frames, fps) of a join made by stream copy, after checking that its picture is exactly its
    parts' video packets, in order (so as many frames as theirs, each one theirs); raises
    MediaError saying what is wrong. Each part was checked when it was made (a scene's against
    what its encoder produced, onepass.film.run.runner; a chapter's here) and is used only while its size and
    sha256 are what was recorded, so its packets decode as x264 made them: no frame is decoded here
    (decoding a 1080p60 chapter took 20 s on 2 cores, reading its packets a tenth of a second)."""
    expected = [h for part in parts for h in packet_hashes(part)]
    found = packet_hashes(video)
    if len(found) != len(expected):
        raise MediaError(f"it has {len(found)} frames but its parts have {len(expected)}")
    if found != expected:
        first = next(i for i, (a, b) in enumerate(zip(found, expected)) if a != b)
        raise MediaError(f"its picture is not its parts': video packet {first} differs")
    return len(found), frame_rate(video)


def check_frames(video: Path, expected_frames: int) -> tuple[int, float]:
    """(frames, fps) of a file whose picture ffmpeg re-encoded (captions burnt in: no packet is its
    parts', and ffmpeg reported any frame it could not decode), after checking the frame count."""
    frames, fps = video_facts(video)
    if frames != expected_frames:
        raise MediaError(f"it has {frames} frames but its parts have {expected_frames}")
    return frames, fps


def damaged_scenes(results: list[SceneResult]) -> list[tuple[SceneResult, str]]:
    """The scene renders that are not what their cache record says (frames), or do not decode."""
    bad = []
    for r in results:
        try:
            frames, _ = video_facts(r.job.mp4)
            why = (f"{frames} frames where {r.frames} were recorded" if frames != r.frames
                   else decode_problems(r.job.mp4))
        except (subprocess.CalledProcessError, KeyError, IndexError, ValueError, OSError) as exc:
            why = f"unreadable ({exc})"
        if why:
            bad.append((r, why))
    return bad


def join_failed(chapter: str, final: Path, results: list[SceneResult], exc: Exception) -> PipelineError:
    """A join that failed its check, explained: which scene is damaged (its cache record is
    dropped, so the next run renders it afresh), and that the chapter's files were kept."""
    kept = f"{final.name} and its captions and thumbnail were left as they were" if final.exists() else \
        "nothing was written"
    bad = damaged_scenes(results)
    if not bad:
        return PipelineError(f"joining chapter {chapter} failed its check ({exc}); {kept}. Run again with "
                             "--force to render every scene of it afresh")
    for r, _ in bad:
        r.job.meta.unlink(missing_ok=True)      # the record of a render shown to be broken
    named = "; ".join(f"scene {r.job.scene} ({r.job.mp4}): {why[:200]}" for r, why in bad)
    return PipelineError(f"chapter {chapter} was not joined: a scene render is damaged: {named}. Its cache entry "
                         f"was dropped: run the same command again to render it afresh; {kept}")


def _intact(path: Path, check: dict | None) -> bool:
    try:
        return bool(check) and path.stat().st_size == check["size"] and sha256_file(path) == check["sha256"]
    except (OSError, KeyError, TypeError):
        return False


def join_chapter(chapter: str, title: str, results: list[SceneResult], dest: Path, voiced: bool,
                 force: bool = False, burn_captions: bool = False, shown_title: str | None = None,
                 band: str | None = None, lang: str = SOURCE) -> ChapterResult:
    """Join a chapter's scenes, write captions (burnt in too if asked) and a thumbnail; skipped
    when the joined files were made from exactly these scene renders.

    `title` names the files; `shown_title` is the title a viewer reads (the film's language;
    default `title`), `band` the thumbnail's title band (default "NN · title").

    Everything is written to unique temporary names beside the final files and checked (the
    picture is the scenes' packets in order, ffmpeg reported no error) before the
    MP4, its captions and its thumbnail replace the old ones, together. A failed check leaves
    the old files as they were and names the damaged scene."""
    final = dest / f"{chapter_file(chapter, title)}.mp4"
    band = band or f"{chapter} · {shown_title or title}"
    title = shown_title or title
    stamp_path = dest / ".scenes" / f"{final.stem}.join.json"
    keys = [r.job.key for r in results]
    sidecars = [final.with_suffix(".srt"), final.with_suffix(".vtt"), final.with_suffix(".png")]
    try:
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = {}
    if not isinstance(stamp, dict):            # another shape: joined again
        stamp = {}
    # kept only if every file is what was written (size and sha256 recorded): a garbled caption
    # file or an emptied thumbnail is made again, as a damaged MP4 is
    if (not force and stamp.get("keys") == keys and stamp.get("voiced") == voiced
            and stamp.get("burnt", False) == burn_captions and stamp.get("band", band) == band
            and all(_intact(p, stamp.get("files", {}).get(p.name)) for p in [final, *sidecars])):
        return ChapterResult(chapter, title, final, results, joined=False, report=stamp.get("report", {}), lang=lang)
    t0 = time.perf_counter()
    parts = [r.job.mp4 for r in results]
    cue_lists = [json.loads(r.job.cues.read_text(encoding="utf-8")) for r in results]
    durations = [r.seconds for r in results]
    parts_frames = sum(r.frames for r in results)
    tmp = {p: temp_name(p) for p in [*sidecars, final]}
    try:
        try:
            report = join_parts(parts, cue_lists, tmp[final], voiced, durations)
            frames, fps = check_joined(tmp[final], parts)
            cues = captions.join_cues(cue_lists, durations)
            captions.write_srt(cues, tmp[sidecars[0]], lang)
            captions.write_vtt(cues, tmp[sidecars[1]], lang)
            if burn_captions:
                mixdown.burn_captions(tmp[final], tmp[sidecars[0]], lang=lang)
                frames, fps = check_frames(tmp[final], parts_frames)
            total = sum(durations)
            at = settled_moment(cue_lists, durations)
            thumbnail(tmp[final], tmp[sidecars[2]], at=min(total * 0.4 if at is None else at, total - 0.1),
                      title=band, lang=lang)
        except MediaError as exc:
            raise join_failed(chapter, final, results, exc) from None
        replace_together([(t, f) for f, t in tmp.items()])        # the MP4 last
    finally:
        discard(*tmp.values())
    report = {k: v for k, v in dict(report).items() if isinstance(v, (int, float, str, list, dict, type(None)))}
    report.update({"frames": frames, "parts_frames": parts_frames, "seconds": frames / fps})
    write_json(stamp_path, {"keys": keys, "voiced": voiced, "burnt": burn_captions, "band": band,
                            "size": final.stat().st_size, "sha256": sha256_file(final),
                            "files": {p.name: {"size": p.stat().st_size, "sha256": sha256_file(p)}
                                      for p in [final, *sidecars]},
                            "report": report})
    return ChapterResult(chapter, title, final, results, joined=True, join_wall=time.perf_counter() - t0,
                         report=report, lang=lang)


# ---------------------------------------------------------------------------------------
# The film: every chapter in one file, with chapter markers

def _meta_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "=;#\\\n" else ch for ch in text)   # ffmetadata escaping


def film_metadata(titles: list[str], durations: list[float], film_title: str) -> str:
    """An ffmetadata document with one chapter marker per chapter (millisecond timebase)."""
    lines, start = [";FFMETADATA1", f"title={_meta_escape(film_title)}"], 0.0
    for title, length in zip(titles, durations):
        end = start + length
        safe = _meta_escape(title)
        lines += ["[CHAPTER]", "TIMEBASE=1/1000", f"START={round(start * 1000)}", f"END={round(end * 1000)}",
                  f"title={safe}"]
        start = end
    return "\n".join(lines) + "\n"


def join_film(results: list[ChapterResult], dest: Path, film_title: str, markers: list[str] | None = None) -> Path:
    """Chapter MP4s -> one film MP4 with chapter markers, plus its captions.

    The picture is stream-copied; the audio (when there is any) is re-encoded once across the
    joins so no AAC priming gap accumulates. Replaced only when complete."""
    final = dest / f"{FILM_NAME}.mp4"
    with FolderLock(dest):
        parts = [r.final for r in results]
        facts = [video_facts(p) for p in parts]
        durations = [frames / fps for frames, fps in facts]
        has_audio = all(stream_seconds(p, "a") is not None for p in parts)
        sidecars = [final.with_suffix(".srt"), final.with_suffix(".vtt")]
        tmp = {p: temp_name(p) for p in [*sidecars, final]}
        try:
            with tempfile.TemporaryDirectory(prefix=home.FILM_PREFIX, dir=dest) as work:
                listing = write_ffconcat(Path(work) / "parts.txt", parts, durations)
                meta = Path(work) / "chapters.txt"
                meta.write_text(film_metadata(markers or [f"{r.chapter} · {r.title}" for r in results], durations,
                                              film_title),
                                encoding="utf-8")
                audio_args = ["-map", "0:a:0", *mixdown.AAC, "-ar", "48000"] \
                    if has_audio else []
                try:
                    run_ffmpeg(["-f", "concat", "-safe", "0", "-i", listing, "-i", meta, "-map", "0:v:0",
                                "-c:v", "copy", *audio_args, "-map_metadata", "1", "-map_chapters", "1",
                                "-movflags", "+faststart", tmp[final]])
                    check_joined(tmp[final], parts)
                except MediaError as exc:
                    raise PipelineError(f"joining the film failed its check ({exc}); {final.name} was left as it "
                                        "was. Run the chapters again (a damaged chapter is joined afresh when "
                                        "its file no longer matches its record)") from None
            cues, offset = [], 0.0
            for p, length in zip(parts, durations):      # each chapter's captions, shifted into the film
                cues += [dict(c, start=c["start"] + offset, end=c["end"] + offset)
                         for c in captions.read_srt(p.with_suffix(".srt"))]
                offset += length
            lang = getattr(results[0], "lang", SOURCE) if results else SOURCE
            captions.write_srt(cues, tmp[sidecars[0]], lang)
            captions.write_vtt(cues, tmp[sidecars[1]], lang)
            replace_together([(t, f) for f, t in tmp.items()])        # the MP4 last
        finally:
            discard(*tmp.values())
    return final
