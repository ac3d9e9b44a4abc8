"""Caption files (SRT and WebVTT) from the narration cues the scenes record."""
from __future__ import annotations

import os
from pathlib import Path


def join_cues(per_scene: list[list[dict]], durations: list[float]) -> list[dict]:
    """Shift each scene's cues by the running length of the scenes before it."""
    out, offset = [], 0.0
    for cues, length in zip(per_scene, durations):
        for c in cues:
            out.append({"start": c["start"] + offset, "end": min(c["end"], length) + offset, "text": c["text"]})
        offset += length
    return out


def _stamp(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def _atomic_write(path: Path, text: str):
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_srt(cues: list[dict], path: Path):
    blocks = [f"{i}\n{_stamp(c['start'], ',')} --> {_stamp(c['end'], ',')}\n{c['text']}\n"
              for i, c in enumerate(cues, 1)]
    _atomic_write(Path(path), "\n".join(blocks))


def write_vtt(cues: list[dict], path: Path):
    blocks = [f"{_stamp(c['start'], '.')} --> {_stamp(c['end'], '.')}\n{c['text']}\n" for c in cues]
    _atomic_write(Path(path), "WEBVTT\n\n" + "\n".join(blocks))
