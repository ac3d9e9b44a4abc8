"""A clip per beat: a chapter's MP4 cut frame-exactly at its narration beats.

    from onepass.film.kit.clips import write_clips
    clip_set = write_clips(chapter_result, "mp4")        # or "webm", "gif"
    clip_set.entries                                     # what clips.json lists for the chapter

Every beat is one narration line; its cue (in the scene's cues JSON) says where it starts. A
beat's clip runs from the frame its line starts on (round(start * fps), counted from the
chapter's first frame) to the frame the next beat starts on; a scene's first beat takes the
scene from its first frame, and the chapter's last beat runs to the chapter's last frame. So
the clips of a chapter cover it exactly, frame for frame, and each ends on the picture its
beat built (what a slide stops on).

Files, in `clips/` beside the chapter MP4: `chNN-<beat>.<mp4|webm|gif>`, its captions
(`.vtt`, `.srt`, re-timed to start at 0), a poster (`.png`, the clip's last frame), and
`clips.json`, the index of every chapter's clips. The clips are cut from the joined chapter,
which is made from the cached scenes: nothing is rendered again. Each clip has a key (the
scenes it shows, its frames, the audio, the format and its settings); a clip whose key and
file are unchanged is not cut or written again. All of a chapter's stale clips are cut by one
ffmpeg process (one decode), into a private temporary folder, and moved into place only when
complete.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from onepass.data import home
from onepass.data.bundle import sha256_file
from onepass.data.files import FolderLock, replace_together, write_json
from onepass.film.plan.errors import PipelineError
from onepass.film.plan.jobs import ChapterResult
from onepass.film.plan.keys import sha
from onepass.voiceover import audio, captions
from onepass.voiceover.media import MediaError, run_ffmpeg, stream_seconds, video_facts

FORMATS = ("mp4", "webm", "gif")
INDEX = "clips.json"
FOLDER = "clips"
CLIP_VERSION = 1             # bump when the way clips are cut changes: every clip is cut again
GIF_FPS = 10                 # GIFs: reduced rate and width, no audio
GIF_WIDTH = 480
# encoder settings per format (part of each clip's key)
ENCODE = {
    "mp4": {"video": ["-c:v", "libx264", "-preset", "medium", "-crf", "18", "-pix_fmt", "yuv420p"],
            "audio": ["-c:a", "aac", "-b:a", "160k", "-ar", str(audio.SR)],
            "extra": ["-movflags", "+faststart"]},
    "webm": {"video": ["-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "32", "-deadline", "good", "-cpu-used", "4",
                       "-row-mt", "1", "-pix_fmt", "yuv420p"],
             "audio": ["-c:a", "libopus", "-b:a", "96k", "-ar", "48000"],
             "extra": []},
    "gif": {"video": ["-loop", "0"], "audio": None, "extra": []},
}


class ClipError(PipelineError):
    """A chapter cannot be cut into beats (its cues disagree with its frames) or a cut failed."""


@dataclass
class Span:
    """One beat's stretch of its chapter, in frames: [start, end)."""
    chapter: str
    beat: str
    text: str
    scene: str
    start: int
    end: int
    fps: float
    scene_keys: list[str] = field(default_factory=list)   # the scenes whose frames it shows

    @property
    def frames(self) -> int:
        return self.end - self.start

    @property
    def name(self) -> str:
        return f"ch{self.chapter}-{self.beat}"


@dataclass
class ClipSet:
    """What write_clips made of one chapter."""
    chapter: str
    title: str
    fmt: str
    folder: Path
    entries: list[dict]          # as listed in clips.json, in beat order
    cut: int                     # clips cut by this call
    kept: int                    # clips whose file from an earlier run was still right

    def path(self, entry: dict, kind: str | None = None) -> Path:
        return self.folder / entry["files"][kind or self.fmt]


def _cue_lists(result: ChapterResult) -> list[list[dict]]:
    return [json.loads(s.job.cues.read_text(encoding="utf-8")) for s in result.scenes]


def beat_spans(result: ChapterResult, cue_lists: list[list[dict]] | None = None) -> list[Span]:
    """The chapter's beats as frame spans that cover it exactly, in order (see the module
    docstring). Frames of a scene that speaks no line go to the beat before them (or, at the
    chapter's start, to the first beat)."""
    cue_lists = cue_lists if cue_lists is not None else _cue_lists(result)
    rates = {round(s.fps, 6) for s in result.scenes}
    if len(rates) != 1:
        raise ClipError(f"chapter {result.chapter}: its scenes have different frame rates {sorted(rates)}")
    fps = result.scenes[0].fps
    spans: list[Span] = []
    offset, lead, lead_keys = 0, None, []
    for scene, cues in zip(result.scenes, cue_lists):
        starts: list[tuple[int, dict]] = []
        for cue in cues:
            frame = 0 if not starts else int(round(cue["start"] * fps))
            if starts and not starts[-1][0] < frame < scene.frames:
                raise ClipError(f"chapter {result.chapter}, scene {scene.job.scene}: beat {cue['beat']!r} starts "
                                f"at frame {frame}, not between the previous beat's start ({starts[-1][0]}) and "
                                f"the scene's end ({scene.frames}); its cues do not match its frames")
            starts.append((frame, cue))
        if not starts:                      # a scene without narration
            if spans:
                spans[-1].end += scene.frames
                spans[-1].scene_keys.append(scene.job.key)
            else:
                lead = offset if lead is None else lead
                lead_keys.append(scene.job.key)
        for i, (frame, cue) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else scene.frames
            spans.append(Span(result.chapter, cue["beat"], " ".join(cue["text"].split()), scene.job.scene,
                              offset + frame, offset + end, fps, [scene.job.key]))
            if lead is not None:            # silent scenes before the chapter's first line
                spans[-1].start, spans[-1].scene_keys = lead, lead_keys + spans[-1].scene_keys
                lead, lead_keys = None, []
        offset += scene.frames
    if not spans:
        raise ClipError(f"chapter {result.chapter} speaks no narration line: there are no beats to cut it at")
    names = [s.beat for s in spans]
    if len(set(names)) != len(names):
        raise ClipError(f"chapter {result.chapter} speaks a beat twice ({names}): clip names would collide")
    return spans


def clip_captions(cue_lists: list[list[dict]], durations: list[float], span: Span) -> list[dict]:
    """The chapter's caption blocks that start inside the span, re-timed to start at 0."""
    a, b = span.start / span.fps, span.end / span.fps
    return [{"start": c["start"] - a, "end": min(c["end"], b) - a, "text": c["text"]}
            for c in captions.join_cues(cue_lists, durations) if a - 1e-6 <= c["start"] < b - 1e-6]


def _join_stamp(result: ChapterResult) -> dict:
    path = result.final.parent / ".scenes" / f"{result.final.stem}.join.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _load_index(folder: Path) -> dict:
    try:
        data = json.loads((folder / INDEX).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and isinstance(data.get("clips"), list) else {}
    except (OSError, ValueError):
        return {}


def _video_chain(fmt: str, fps: float) -> str:
    if fmt != "gif":
        return ""
    rate = min(GIF_FPS, fps)
    return (f",fps={rate:g},scale='min({GIF_WIDTH},iw)':-2:flags=lanczos,split[{{g}}a][{{g}}b];"
            f"[{{g}}a]palettegen=stats_mode=diff[{{g}}p];[{{g}}b][{{g}}p]paletteuse=dither=bayer:bayer_scale=4")


def cut(source: Path, jobs: list[tuple[Span, Path | None, Path | None]], fmt: str, with_audio: bool):
    """One ffmpeg process: the source decoded once, each job's span encoded to its video path
    (None: none wanted) and its last frame to its poster path (None: none wanted)."""
    vbranches = sum((v is not None) + (p is not None) for _, v, p in jobs)
    audio_out = with_audio and ENCODE[fmt]["audio"] is not None
    abranches = sum(v is not None for _, v, _ in jobs) if audio_out else 0
    graph, outputs = [], []
    vlabels = [f"[s{i}]" for i in range(vbranches)]
    graph.append(f"[0:v]split={vbranches}{''.join(vlabels)}")
    if abranches:
        graph.append(f"[0:a]asplit={abranches}{''.join(f'[t{i}]' for i in range(abranches))}")
    vi = ai = 0
    for n, (span, video, poster) in enumerate(jobs):
        if video is not None:
            chain = _video_chain(fmt, span.fps).replace("{g}", f"g{n}")
            graph.append(f"[s{vi}]trim=start_frame={span.start}:end_frame={span.end},setpts=PTS-STARTPTS{chain}[v{n}]")
            vi += 1
            args = ["-map", f"[v{n}]", *ENCODE[fmt]["video"]]
            if abranches:
                a = round(span.start / span.fps * audio.SR)
                b = round(span.end / span.fps * audio.SR)
                graph.append(f"[t{ai}]atrim=start_sample={a}:end_sample={b},asetpts=PTS-STARTPTS[a{n}]")
                ai += 1
                args += ["-map", f"[a{n}]", *ENCODE[fmt]["audio"]]
            outputs += args + ENCODE[fmt]["extra"] + [str(video)]
        if poster is not None:
            graph.append(f"[s{vi}]trim=start_frame={span.end - 1}:end_frame={span.end},setpts=PTS-STARTPTS[p{n}]")
            vi += 1
            outputs += ["-map", f"[p{n}]", "-frames:v", "1", "-update", "1", str(poster)]
    try:                                 # the graph names no path: only labels and frame numbers
        run_ffmpeg(["-i", source, "-filter_complex", ";".join(graph), *outputs])
    except MediaError as exc:
        raise ClipError(f"cutting clips from {source} failed: {exc}") from None


def file_check(path: Path) -> dict:
    """What a file was when written (clips.json's `checks`): a file kept on a later run must still
    be exactly this (a truncated clip, an emptied poster or garbled captions are made again)."""
    return {"size": path.stat().st_size, "sha256": sha256_file(path)}


def intact(path: Path, check: dict | None) -> bool:
    try:
        return bool(check) and path.stat().st_size == check.get("size") and sha256_file(path) == check.get("sha256")
    except OSError:
        return False


def write_clips(result: ChapterResult, fmt: str = "mp4", force: bool = False) -> ClipSet:
    """Cut `result`'s chapter into one clip per beat in `fmt` (mp4, webm or gif), with captions
    and posters, and list them in clips.json; clips still right from an earlier run (same key,
    same bytes as when written) are kept untouched, unless `force`. Holds the output folder's
    lock (FolderLock), as a build does: the next run's clean-up then never meets a live cut.
    Raises ClipError."""
    with FolderLock(result.final.parent):
        return cut_clips(result, fmt, force)


def cut_clips(result: ChapterResult, fmt: str = "mp4", force: bool = False) -> ClipSet:
    """write_clips, for a caller that already holds the output folder's lock (film/kit/slides.py)."""
    if fmt not in FORMATS:
        raise ClipError(f"unknown clip format {fmt!r}: choose one of {', '.join(FORMATS)}")
    folder = result.final.parent / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    cue_lists = _cue_lists(result)
    spans = beat_spans(result, cue_lists)
    durations = [s.frames / s.fps for s in result.scenes]
    total, _ = video_facts(result.final)
    if total != spans[-1].end:
        raise ClipError(f"chapter {result.chapter}: {result.final} has {total} frames but its scenes have "
                        f"{spans[-1].end}; render the chapter again")
    with_audio = stream_seconds(result.final, "a") is not None
    burnt = bool(_join_stamp(result).get("burnt", False))

    index = _load_index(folder)
    old = {e.get("beat"): e for e in index.get("clips", []) if e.get("chapter") == result.chapter}
    entries, jobs = [], []
    for span in spans:
        base = sha({"scenes": span.scene_keys, "frames": [span.start, span.end], "burnt": burnt,
                    "version": CLIP_VERSION})
        key = sha({"base": base, "audio": with_audio, "format": fmt, "encode": ENCODE[fmt],
                   "gif": [GIF_FPS, GIF_WIDTH] if fmt == "gif" else None})
        prev = old.get(span.beat, {})
        prev_files, prev_keys = prev.get("files", {}), prev.get("keys", {})
        checks = prev.get("checks", {})

        def kept(file: str, key_name: str, key, forced: bool = force) -> bool:   # still right: same key, bytes
            return not forced and prev_keys.get(key_name) == key and intact(folder / file, checks.get(file))
        # the clip in other formats stays listed if it was cut from the same frames; else it goes
        others, keys = {}, {}
        for other in FORMATS:
            if other == fmt or other not in prev_files:
                continue
            if kept(prev_files[other], f"{other}:base", base, forced=False):     # --force remakes `fmt`'s
                others[other] = prev_files[other]
                keys.update({other: prev_keys.get(other), f"{other}:base": base})
            else:
                (folder / prev_files[other]).unlink(missing_ok=True)
        name = span.name
        want_video = not kept(f"{name}.{fmt}", fmt, key)
        want_poster = not kept(f"{name}.png", "poster", base)
        want_captions = not (kept(f"{name}.vtt", "captions", base) and kept(f"{name}.srt", "captions", base))
        entry = {"chapter": result.chapter, "beat": span.beat, "id": name, "title": result.title, "text": span.text,
                 "scene": span.scene, "start": round(span.start / span.fps, 6), "end": round(span.end / span.fps, 6),
                 "start_frame": span.start, "end_frame": span.end, "frames": span.frames, "fps": span.fps,
                 "audio": with_audio, "burnt_captions": burnt,
                 "files": {**others, fmt: f"{name}.{fmt}",
                           "poster": f"{name}.png", "vtt": f"{name}.vtt", "srt": f"{name}.srt"},
                 "keys": {**keys, fmt: key, f"{fmt}:base": base, "poster": base, "captions": base}}
        entries.append(entry)
        if want_captions:
            cues = clip_captions(cue_lists, durations, span)
            captions.write_vtt(cues, folder / f"{name}.vtt", result.lang)
            captions.write_srt(cues, folder / f"{name}.srt", result.lang)
        if want_video or want_poster:
            jobs.append((span, want_video, want_poster))

    if jobs:
        tmp = Path(tempfile.mkdtemp(prefix=f".ch{result.chapter}{home.CLIP_CUT}", dir=folder))
        try:
            planned = [(span, tmp / f"{span.name}.{fmt}" if v else None, tmp / f"{span.name}.png" if p else None)
                       for span, v, p in jobs]
            cut(result.final, planned, fmt, with_audio)
            for span, video, poster in planned:
                if video is not None and fmt != "gif":
                    frames, _ = video_facts(video)
                    if frames != span.frames:
                        raise ClipError(f"clip {span.name} came out {frames} frames long, not {span.frames}")
            replace_together([(p, folder / p.name) for _, video, poster in planned for p in (video, poster)
                              if p is not None])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    for entry in entries:                   # what each file is now, checked on the next run
        entry["checks"] = {f: file_check(folder / f) for f in entry["files"].values()}
    # beats this chapter no longer has: their files go
    for beat, prev in old.items():
        if beat not in {s.beat for s in spans}:
            for f in prev.get("files", {}).values():
                (folder / f).unlink(missing_ok=True)
    update_index(folder, result, entries, total)
    cut_count = sum(v for _, v, _ in jobs)
    return ClipSet(result.chapter, result.title, fmt, folder, entries, cut_count, len(spans) - cut_count)


def update_index(folder: Path, result: ChapterResult, entries: list[dict], frames: int):
    """clips.json with this chapter's entries replaced (other chapters' kept); left untouched
    when nothing in it changed. Chapters cut at the same time (a batch) take turns: an
    advisory lock on clips/.clips.lock around the read and the write."""
    with open(folder / ".clips.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # released when the file closes
        _update_index(folder, result, entries, frames)


def _update_index(folder: Path, result: ChapterResult, entries: list[dict], frames: int):
    index = _load_index(folder)
    chapters = {k: v for k, v in index.get("chapters", {}).items() if k != result.chapter}
    chapters[result.chapter] = {"title": result.title, "video": os.path.relpath(result.final, folder),
                                "frames": frames, "fps": result.scenes[0].fps}
    clips = [e for e in index.get("clips", []) if e.get("chapter") != result.chapter] + entries
    clips.sort(key=lambda e: (e["chapter"], e["start_frame"]))
    new = {"chapters": dict(sorted(chapters.items())), "clips": clips}
    if new != index:
        write_json(folder / INDEX, new)
