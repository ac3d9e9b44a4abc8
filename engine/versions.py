"""The versions of the engine's libraries this package is written against, said once.

engine/ reaches into manim's and manim-voiceover's internals (engine/__init__.py lists them), which
any release may move. `check()` runs before anything renders (render.py's entry path and every scene
process: film/run/render_job.py) and refuses another version with a message naming the supported and
the installed ones. pyproject.toml's pins read the same ranges.
"""
from __future__ import annotations

from importlib import metadata

from onepass.data.errors import OnepassError

# distribution -> the release series supported (a version is supported when it is this series:
# 0.22 takes 0.22.0, 0.22.1, ...). manim: the frame path's encoder, file writer, camera, renderer and
# Text internals; manim-voiceover: the network voices' classes and the prompts engine.voiceover_plugin replaces.
SUPPORTED = {
    "manim": "0.22",
    "manim-voiceover": "0.4",
}


class EngineVersionError(OnepassError, RuntimeError):
    """An installed engine library is not a version onepass supports."""


def series_of(version: str) -> tuple[int, ...]:
    """'0.22.0' -> (0, 22, 0); digits only, a suffix (rc1, .post2, +local) ends a part."""
    parts = []
    for piece in version.split("+")[0].split("."):
        digits = ""
        for c in piece:
            if not c.isdigit():
                break
            digits += c
        if not digits:
            break
        parts.append(int(digits))
        if digits != piece:
            break
    return tuple(parts)


def supported(wanted: str, installed: str) -> bool:
    """`installed` is in the release series `wanted` ('0.22' takes 0.22.x)."""
    want = series_of(wanted)
    return series_of(installed)[:len(want)] == want


def installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def problems() -> list[str]:
    """One line per library that is not installed in a supported version."""
    out = []
    for dist, wanted in SUPPORTED.items():
        have = installed(dist)
        if have is None:
            out.append(f"{dist} is not installed (onepass supports {dist} {wanted}.x)")
        elif not supported(wanted, have):
            out.append(f"{dist} {have} is installed; onepass supports {dist} {wanted}.x only")
    return out


def check() -> None:
    """Raise EngineVersionError (an OnepassError: render.py prints it) where a library is not in a
    supported version; nothing otherwise. Reads the installed versions' metadata, imports nothing."""
    found = problems()
    if found:
        pins = " ".join(f'"{d}=={w}.*"' for d, w in SUPPORTED.items())
        raise EngineVersionError("; ".join(found) + ". onepass reaches into these libraries' internals "
                                 f"(engine/), which another release may move: pip install {pins}")
