"""What a scene process (film/run/render_job.py) and the runner that starts it (film/run/runner.py) share:
the qualities manim renders at and the media folders manim writes into.

A leaf of film/: the scene process imports it without importing the request, the build or the
runner (each of which would widen every scene's cache key and close an import circle).
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from onepass.data import home
from onepass.data.files import remove_dead_owned

# --quality name -> (manim's config for it, what it is); the one list of qualities. draft is a quick
# look at the timing and the layout (the same frame in manim's units, so the same layout, at 288p10:
# small numbers blur), about two thirds of low's CPU per scene (docs/SPEED.md); low is the default. Its height keeps the
# video's colour planes whole (yuv420p halves it: 288 -> 144; 270 -> 135 drew colours a row off)
QUALITIES = {"draft": ({"quality": "low_quality", "pixel_width": 512, "pixel_height": 288, "frame_rate": 10}, "288p10 (a quick look)"),
             "low": ({"quality": "low_quality"}, "480p15"), "medium": ({"quality": "medium_quality"}, "720p30"),
             "high": ({"quality": "high_quality"}, "1080p60"), "4k": ({"quality": "fourk_quality"}, "2160p60")}

# Python's collector in a process that builds scenes (a scene process; a test process, tests/conftest.py):
# mobjects, points and frames are allocated by the million, so a young collection every 100,000
# allocations instead of Python's 700 (gc.set_threshold's three numbers)
GC_THRESHOLDS = (100_000, 50, 100)
MEDIA_PREFIX = home.MEDIA_PREFIX     # manim's media folder of a scene render, in the system temp folder
_MEDIA_OWNER = re.compile(r"(?:^|-)p([0-9]+)-[A-Za-z0-9_]+$")     # media_folder's <PID> (mkdtemp's end: no "-")


def media_prefix(work: Path) -> str:
    """Name prefix of the manim media folders of renders into `work` (.scenes/): in the system
    temp folder, where the user's path characters cannot break manim's own concat listing (it
    writes `file '<path>'` unescaped), and tagged by `work` so a later run into the same folder
    can find what a killed one left."""
    tag = hashlib.sha256(str(Path(work).resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{MEDIA_PREFIX}{tag}-"


def media_root() -> Path:
    """Where scene renders keep manim's media folders: the system temp folder, or /tmp if its
    path has a quote in it."""
    root = Path(tempfile.gettempdir())
    return root if "'" not in str(root) else Path("/tmp")


def media_folder(prefix: Path | str) -> Path:
    """A fresh media folder `<prefix>p<PID>-XXXXXXXX` for this process (film/run/render_job.py): the
    owner's process id in its name, so a later run on this machine can remove it once that process
    is gone, whoever ran it (a scene process of a dask worker that was killed: remove_dead_media)."""
    prefix = Path(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix.name}p{os.getpid()}-", dir=prefix.parent))


def remove_dead_media(root: Path | None = None) -> int:
    """Remove the media folders (`onepass-media-*p<PID>-*`, media_folder) in `root` (default:
    media_root()) whose process no longer runs: a scene process killed with its dask worker, or
    with its run, cannot remove its own. A folder of a live process, or one without a process id
    (older versions; remove_leftovers finds those by their output folder), is kept. Returns how
    many were removed."""
    return remove_dead_owned(root or media_root(),
                             lambda name: _MEDIA_OWNER.search(name) if name.startswith(MEDIA_PREFIX) else None)
