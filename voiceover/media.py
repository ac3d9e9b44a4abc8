"""Facts about media files (ffprobe) and ffmpeg's concat listings: one copy of each, used by
the narration mixdown and by the film build (film/).

    frames, fps = video_facts(path)          # exact: packets counted, nothing decoded
    seconds = video_seconds(path)            # frames / fps
    write_ffconcat(listing, parts, durations)
    run_ffmpeg([...])                        # raises MediaError on any error ffmpeg reports
    decode_problems(path)                    # None, or why its picture does not decode
"""
from __future__ import annotations

import json
import re
import subprocess
from fractions import Fraction
from pathlib import Path


def probe(path: Path, select: str, entries: str, count_packets: bool = False) -> dict | None:
    """ffprobe's fields `entries` ("stream=a,b") of the first stream matching `select`
    ("v:0", "a:0"), as a dict; None when the file has no such stream."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", select, *(["-count_packets"] if count_packets else []),
           "-show_entries", entries, "-of", "json", str(path)]
    streams = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout).get("streams") or []
    return streams[0] if streams else None


def _video(path: Path, entries: str, count_packets: bool = False) -> dict:
    stream = probe(path, "v:0", entries, count_packets)
    if stream is None:
        raise ValueError(f"{path} has no video stream")
    return stream


def _frames(path: Path) -> tuple[int, Fraction]:
    stream = _video(path, "stream=nb_read_packets,r_frame_rate", count_packets=True)
    return int(stream["nb_read_packets"]), Fraction(stream["r_frame_rate"])


def video_facts(path: Path) -> tuple[int, float]:
    """(frames, fps) of the first video stream, counted from its packets (exact, no decode)."""
    frames, rate = _frames(path)
    return frames, float(rate)


def video_seconds(path: Path) -> float:
    """Exact length of the video stream: frames / frame rate."""
    frames, rate = _frames(path)
    return float(frames / rate)


def frame_rate(path: Path) -> float:
    return float(Fraction(_video(path, "stream=r_frame_rate")["r_frame_rate"]))


def video_height(path: Path) -> int:
    return int(_video(path, "stream=height")["height"])


def stream_seconds(path: Path, kind: str = "v") -> float | None:
    """Duration of the first video ('v') or audio ('a') stream as ffprobe reports it (None: no
    such stream, or no duration stated)."""
    stream = probe(path, f"{kind}:0", "stream=duration")
    value = (stream or {}).get("duration")
    return float(value) if value not in (None, "N/A") else None


def ffconcat_quote(path: Path | str) -> str:
    """A path as one quoted token of ffmpeg's concat syntax: inside single quotes nothing is
    special except the quote itself, which closes the string, is escaped, and reopens it."""
    return "'" + str(path).replace("'", "'\\''") + "'"


def write_ffconcat(listing: Path, parts: list[Path], durations: list[float]) -> Path:
    """An ffconcat listing of `parts`, each stated exactly `duration` seconds long (so a join
    neither gaps nor doubles a frame); paths are absolute (use with `-safe 0`)."""
    Path(listing).write_text("ffconcat version 1.0\n" + "".join(
        f"file {ffconcat_quote(Path(p).resolve())}\nduration {d:.6f}\n" for p, d in zip(parts, durations)),
        encoding="utf-8")
    return Path(listing)


class MediaError(RuntimeError):
    """ffmpeg failed, or reported an error while still exiting 0 (its concat demuxer logs
    "Invalid data found when processing input" for a damaged part and carries on)."""


def run_ffmpeg(args: list, cwd: Path | None = None) -> None:
    """Run `ffmpeg -v error -nostdin -y ARGS`; raises MediaError when it exits non-zero or
    logs anything at error level (its exit status alone misses damaged inputs)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=cwd)
    problems = [re.sub(r"^\[[\w.-]+ @ 0x[0-9a-f]+\] ", "", line) for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 0 or problems:
        shown = "; ".join(dict.fromkeys(problems))[:400] or f"exit status {proc.returncode}"
        raise MediaError(f"ffmpeg {' '.join(cmd[5:])[:200]}: {shown}")


def decode_problems(path: Path) -> str | None:
    """None when every video frame of `path` decodes without an error; else what ffmpeg said."""
    try:
        run_ffmpeg(["-i", path, "-map", "0:v:0", "-f", "null", "-"])
    except MediaError as exc:
        return str(exc).split(": ", 1)[-1]
    return None
