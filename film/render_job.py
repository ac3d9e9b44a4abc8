"""Render one scene of one chapter into one MP4 (run as its own process by film/runner.py).

    python -m film.render_job --bundle DIR --chapter 02 --scene Scores --quality low \
        --out path/scene.mp4 [--cues path/scene.json] [--voice SPEC] [--media /tmp/onepass-media-TAG-]

Every scene input is an argument (bundle, cues, voice: scenes.base.SceneInputs; the quality),
none is read from the environment. --voice is a `render.py --voice` spec (default none: silent,
timed at the estimated speaking rate).

Manim works in a fresh folder named `<--media>p<PID>-XXXX` (default: the system temp folder's
`onepass-media-p<PID>-XXXX`), never under the user's output path (manim's own concat listing does
not escape quotes), removed on exit, on SIGINT and on SIGTERM alike; after a SIGKILL (or its
dask worker's death) by the next run on the machine that finds PID gone.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from manim import tempconfig

from film.request import QUALITIES
from film.runner import media_folder
from scenes.base import SceneInputs
from scenes.registry import scenes_of
from scenes.text import enable_text_cache

# x264's 'veryfast' preset instead of manim's default ('medium'): on chapter 02's first scene at
# 1080p60, encoding took 22 s of CPU instead of 32 s and the file came out smaller (same crf).
# One encoder thread: with x264's own threads, the same frames came out differently encoded in
# about 1 render of 6 (decoded frames off by up to 24 levels), so a re-render, a cluster render
# and the cache disagreed. It costs 4-7% wall time on one scene alone and nothing when the pool
# keeps every core busy (HACKING.md, "Identical frames").
ENCODER_OPTIONS = {"preset": "veryfast", "threads": "1"}


def _terminated(signum, frame):
    raise SystemExit(128 + signum)       # unwinds like an interrupt: the media folder is removed


def render_scene(bundle: Path, chapter: str, scene: str, quality: str, out: Path, cues: Path | None,
                 media_prefix: str | None = None, voice: str = "none", lang: str = "en",
                 script: Path | None = None) -> Path:
    inputs = SceneInputs(Path(bundle), Path(cues) if cues is not None else None, voice, lang,
                         Path(script) if script else None)
    enable_text_cache()      # labels built once per process, numbers composed from pre-shaped glyphs
    classes = {cls.__name__: cls for cls in scenes_of(chapter)}
    if scene not in classes:
        raise SystemExit(f"chapter {chapter} has no scene {scene!r}; it has {', '.join(classes)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    prefix = Path(media_prefix) if media_prefix else Path(tempfile.gettempdir()) / "onepass-media-"
    media = media_folder(prefix)         # named with this process's id: film.runner.remove_dead_media
    try:
        # caching off: a cache hit advances scene time by the exact run_time instead of whole
        # frames, which would shift narration and captions against the picture
        with tempconfig({"quality": QUALITIES[quality][0], "media_dir": str(media), "disable_caching": True,
                         "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                         "output_file": scene, "background_color": "#0E1117",
                         "video_encoder_options": ENCODER_OPTIONS}):
            instance = classes[scene](inputs)
            instance.render()
            movie = Path(instance.renderer.file_writer.movie_file_path)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part.mp4", dir=out.parent)
        os.close(fd)
        try:
            shutil.move(str(movie), tmp)
            os.replace(tmp, out)       # atomic: a finished file or none
        finally:
            Path(tmp).unlink(missing_ok=True)
    finally:
        shutil.rmtree(media, ignore_errors=True)
        enable_text_cache(False)   # leave the process as found (tests render in-process)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bundle", required=True, type=Path)
    p.add_argument("--chapter", required=True)
    p.add_argument("--scene", required=True)
    p.add_argument("--quality", default="low", choices=tuple(QUALITIES))
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--cues", type=Path)
    p.add_argument("--voice", default="none", help="the narration voice, a render.py --voice spec (default: none)")
    p.add_argument("--media", help="prefix (folder + name start) of manim's temporary media folder")
    p.add_argument("--lang", default="en", help="the language of every word (words/catalogs/<lang>, or qps)")
    p.add_argument("--script", type=Path, help="a lecturer's own words over the catalog (a PO file)")
    a = p.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    render_scene(a.bundle, a.chapter, a.scene, a.quality, a.out, a.cues, a.media, a.voice, a.lang, a.script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
