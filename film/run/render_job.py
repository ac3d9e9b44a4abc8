"""Render one scene of one chapter into one MP4 (run as its own process by film/run/runner.py).

    python -m onepass.film.run.render_job --bundle DIR --chapter 02 --scene Scores --quality low \
        --out path/scene.mp4 [--cues path/scene.json] [--packets path/scene.packets.json] [--voice SPEC]
        [--media /tmp/onepass-media-TAG-]

Every scene input is an argument (bundle, cues, voice: onepass.scenes.base.SceneInputs; the quality),
none is read from the environment. --voice is a `render.py --voice` spec (default none: silent,
timed at the estimated speaking rate).

Manim works in a fresh folder named `<--media>p<PID>-XXXX` (default: the system temp folder's
`onepass-media-p<PID>-XXXX`), never under the user's output path (manim's own concat listing does
not escape quotes), removed on exit, on SIGINT and on SIGTERM alike; after a SIGKILL (or its
dask worker's death) by the next run on the machine that finds PID gone.
"""
from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from onepass.engine import versions

versions.check()      # before manim loads: another release of it is refused with a clear message

from manim import tempconfig  # noqa: E402

from onepass.data import home  # noqa: E402
from onepass.data.files import write_json  # noqa: E402
from onepass.engine.encoding import ENCODER_OPTIONS  # noqa: E402
from onepass.engine.frames import INFLIGHT_ENCODERS, FilmRenderer, FrameTimes, faster_manim  # noqa: E402
from onepass.film.frames import holds  # noqa: E402
from onepass.film.run.media import GC_THRESHOLDS, QUALITIES, media_folder  # noqa: E402
from onepass.scenes.base import SceneInputs  # noqa: E402
from onepass.scenes import style  # noqa: E402
from onepass.scenes.registry import scenes_of  # noqa: E402
from onepass.scenes.text import enable_text_cache  # noqa: E402
from onepass.voiceover.media import packet_hash, packets_digest  # noqa: E402


def film_renderer(times: FrameTimes | None = None, renderer_class: type = FilmRenderer, **kwargs) -> FilmRenderer:
    """The renderer a scene process renders with: onepass.engine.frames.FilmRenderer (or a subclass) with the
    film's packet account (onepass.voiceover.media.packet_hash of every packet, start codes and all) and its
    holds (film/frames/holds.py)."""
    return renderer_class(times, packet_hash=functools.partial(packet_hash, annexb=True),
                          hold_copies=holds.hold_copies, **kwargs)


_unwinding: int | None = None     # the signal that stopped the render, once one has


def _interrupted(signum, frame):
    """SIGTERM unwinds like Ctrl-C (the media folder is removed); only the first of them counts: a
    render stopped by Ctrl-C gets its runner's SIGTERM too, which must not cut short manim's join
    of its encoder thread or the removal (the thread would write into a folder already removed)."""
    global _unwinding
    if _unwinding is not None:
        return
    _unwinding = signum
    raise _stop(signum)


def _stop(signum: int) -> BaseException:
    """What a stopping signal raises: Ctrl-C's KeyboardInterrupt, or SystemExit with the shell's status."""
    return KeyboardInterrupt() if signum == signal.SIGINT else SystemExit(128 + signum)


def render_scene(bundle: Path, chapter: str, scene: str, quality: str, out: Path, cues: Path | None,
                 media_prefix: str | None = None, voice: str = "none", lang: str = "en",
                 script: Path | None = None, times: FrameTimes | None = None, packets: Path | None = None,
                 compare: Path | None = None) -> Path:
    """Render one scene into `out`; `times` (if given) is filled with where the CPU time went;
    `packets` (if given) gets the count and digest of the video packets x264 produced, which the
    runner checks the MP4 against (onepass.film.run.runner: a scene's file is what its encoder made)."""
    inputs = SceneInputs(Path(bundle), Path(cues) if cues is not None else None, voice, lang,
                         Path(script) if script else None, Path(compare) if compare else None)
    # labels built once per machine (kept in onepass.data.home.label_cache_dir()), numbers composed from pre-shaped glyphs
    enable_text_cache(folder=home.label_cache_dir())
    classes = {cls.__name__: cls for cls in scenes_of(chapter)}
    if scene not in classes:
        raise SystemExit(f"chapter {chapter} has no scene {scene!r}; it has {', '.join(classes)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    prefix = Path(media_prefix) if media_prefix else Path(tempfile.gettempdir()) / "onepass-media-"
    media = media_folder(prefix)         # named with this process's id: onepass.film.run.runner.remove_dead_media
    try:
        # caching off: a cache hit advances scene time by the exact run_time instead of whole
        # frames, which would shift narration and captions against the picture
        with tempconfig({**QUALITIES[quality][0], "media_dir": str(media), "disable_caching": True,
                         "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                         "output_file": scene, "background_color": style.BACKGROUND,
                         "video_encoder_options": ENCODER_OPTIONS,
                         "max_inflight_encoders": INFLIGHT_ENCODERS}):
            instance = classes[scene](inputs, renderer=film_renderer(times))
            with faster_manim():
                instance.render()
            if times is not None:
                times.paths = dict(getattr(instance.renderer.camera, "paths", {}))
            writer = instance.renderer.file_writer
            movie, encoded = Path(writer.movie_file_path), writer.encoded_packets()
        if _unwinding is not None:
            # a signal came, and its exception was swallowed on the way (raised inside a finalizer, which
            # Python only reports): the scene ran on to its end, but a stopped render writes nothing
            raise _stop(_unwinding)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part.mp4", dir=out.parent)
        os.close(fd)
        try:
            shutil.move(str(movie), tmp)
            os.replace(tmp, out)       # atomic: a finished file or none
        finally:
            Path(tmp).unlink(missing_ok=True)
        if packets is not None:
            write_json(Path(packets), {"packets": len(encoded), "sha256": packets_digest(encoded)})
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
    p.add_argument("--packets", type=Path, help="write the count and digest of the encoded video packets here (JSON)")
    p.add_argument("--voice", default="none", help="the narration voice, a render.py --voice spec (default: none)")
    p.add_argument("--media", help="prefix (folder + name start) of manim's temporary media folder")
    p.add_argument("--lang", default="en", help="the language of every word (words/catalogs/<lang>, or qps)")
    p.add_argument("--script", type=Path, help="a lecturer's own words over the catalog (a PO file)")
    p.add_argument("--compare", type=Path, help="a second model's bundle, for a chapter that compares two (07)")
    a = p.parse_args(argv)
    versions.check()
    # chapter 02's Scores at draft: 200 collections, 0.19 s, down to none; about 0.5 s of its 6 s of CPU
    # in all, alternating runs. A process setting: frames unchanged
    gc.set_threshold(*GC_THRESHOLDS)
    signal.signal(signal.SIGTERM, _interrupted)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:     # not where it is ignored
        signal.signal(signal.SIGINT, _interrupted)
    wall0, times = time.perf_counter(), FrameTimes()
    render_scene(a.bundle, a.chapter, a.scene, a.quality, a.out, a.cues, a.media, a.voice, a.lang, a.script, times,
                 a.packets, a.compare)
    report = os.environ.get(TIMES_ENV)     # a process setting, like thread counts: never a scene input
    if report:
        write_times(Path(report), times, a, time.perf_counter() - wall0)
    return 0


TIMES_ENV = "ONEPASS_FRAME_TIMES"    # a file: each scene process appends where its CPU time went


def write_times(path: Path, times: FrameTimes, a, wall: float) -> None:
    """Append one JSON line: this process's CPU split into drawing, colour conversion, encoding
    (every thread but the main one: the segment encoders' threads and x264's own) and the rest
    (imports, building mobjects, animations' arithmetic, joining the segments)."""
    total, main = time.process_time(), time.thread_time()     # all threads; this (main) thread
    line = {"chapter": a.chapter, "scene": a.scene, "quality": a.quality, "lang": a.lang, "frames": times.frames,
            "drawn": times.drawn, "converted": times.converted, "draw_cpu": round(times.draw, 3),
            "convert_cpu": round(times.convert, 3), "encode_cpu": round(total - main, 3),
            "other_cpu": round(main - times.draw - times.convert, 3), "process_cpu": round(total, 3),
            "wall": round(wall, 3), "paths": times.paths}
    with open(path, "a", encoding="utf-8") as f:      # one short line per process: appended whole
        f.write(json.dumps(line) + "\n")


def end_when_stopped() -> int:
    """main(), and where a signal stopped it, the process's end right after the scene has unwound (its
    media folder removed, nothing written to --out): a signal that lands inside manim's Thread.start()
    leaves that segment's encoder thread unreachable, waiting on its frame queue, and Python's own exit
    would wait for it for ever (a render_job sent SIGTERM under load, seen alive a minute later)."""
    try:
        return main()
    except BaseException as stopped:      # a signal's SystemExit, or what manim or PyAV made of it
        if _unwinding is None:
            raise
        if _unwinding == signal.SIGINT:
            end_as_ctrl_c()
        if not isinstance(stopped, SystemExit):
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + _unwinding)


def end_as_ctrl_c() -> None:
    """End the process as Python ends on a Ctrl-C nothing caught: the traceback, then by SIGINT itself."""
    traceback.print_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    sys.exit(end_when_stopped())
