"""The film build: scene jobs -> parallel processes -> a cache -> one MP4 per chapter.

    from onepass.film.make.build import BuildOptions, render
    results = render(["02", "03"], bundle, BuildOptions(quality="low", out=Path("out"), jobs=2))

* Every scene of every requested chapter is one job (film/plan/jobs.py), run as its own process
  (`python -m onepass.film.run.render_job`, film/run/runner.py) on an executor (film/run/executors.py): the one
  BuildOptions.executor names, else a local pool of `jobs` processes at a time (default: the
  cores this process may use) opened for this build; longest first by the times recorded in
  earlier runs.
* Every job has a cache key (film/plan/keys.py: the bundle, the quality, the scene's code and the
  code it imports, the lines it speaks and the voice, the tool versions). A scene whose key
  was rendered before is not rendered again; a chapter whose scenes all hit and whose joined
  MP4 was made from exactly those scenes is not joined again either (film/run/join.py).
* Nothing here imports manim: the keys are read from the sources as syntax trees, so a
  re-run with nothing to do finishes in about a second.
* Nothing good is lost (docs/RELIABILITY.md): a cache entry is used only when its files match
  its record (sha256), else rendered again with a line saying why; every file is written under
  a unique temporary name and checked before it replaces the old one; one run at a time writes
  to an output folder (a second waits for the first's lock); an interrupted or killed run
  leaves finished files and cache entries as they were, and its leftovers are removed by the
  next run into that folder.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from onepass.data import home
from onepass.data.files import FolderLock, part_owner, process_alive, remove_dead_owned, write_json
from onepass.film.run import forkserver
from onepass.film.plan.errors import PipelineError
from onepass.film.run.executors import LocalExecutor
from onepass.film.plan.jobs import (
    BuildOptions, ChapterResult, SceneJob, SceneResult, cached_result, destination, file_titles, plan, prune,
)
from onepass.film.run.join import join_chapter, join_film  # noqa: F401  (join_film: part of this module's interface)
from onepass.film.run.runner import Runner, child_env, media_prefix, media_root, remove_dead_media

__all__ = ["BuildOptions", "PipelineError", "render", "join_film", "destination", "plan", "remove_leftovers"]

# folders a run makes inside the output folder and removes when it ends (a killed run cannot):
# scene renders, joins, handouts, and manim media folders of older versions (onepass.data.home lists them)
LEFTOVER_FOLDERS = home.OUTPUT_PREFIXES
STILLS_CUT, CLIP_CUT = home.STILLS_CUT, home.CLIP_CUT      # stills/.chNN-stills-*, clips/.chNN-cut-*


def render(chapters: list[str], bundle, options: BuildOptions | None = None) -> list[ChapterResult]:
    """Render `chapters` from `bundle`: scenes in parallel (cached), each chapter joined when its
    scenes are done. Raises PipelineError."""
    o = options or BuildOptions()
    dest = destination(o.out, bundle, o.quality, o.lang)
    if _renders_here(o) and not all(any(dest.glob(f"ch{c}-*.mp4")) for c in chapters):
        # likely scenes to render (no joined chapter yet): the scene fork server imports manim
        # while the keys are read
        forkserver.prewarm(child_env(o.env))
    plans = plan(chapters, bundle, o)
    log = o.log or (lambda line: print(line, file=sys.stderr))
    with _TermAsInterrupt(), FolderLock(dest, on_wait=log):
        remove_leftovers(dest, log)
        return _render(chapters, bundle, o, plans, dest, log)


def _renders_here(o: BuildOptions) -> bool:
    """Scenes of this build render as processes of this machine's (film/run/runner.py's own command)."""
    return o.command is None and (o.executor is None or isinstance(o.executor, LocalExecutor))


class _TermAsInterrupt:
    """While a build runs in the main thread, SIGTERM (unless the caller handles it) stops it the
    way Ctrl-C does: scene processes ended, their folders removed, finished files kept."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self.old = signal.signal(signal.SIGTERM, self._raise)
        return self

    @staticmethod
    def _raise(signum, frame):
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)
        return False


def remove_leftovers(dest: Path, log: Callable[[str], None] = lambda line: None) -> int:
    """Remove what killed runs into `dest` left behind: scene render folders, manim media
    folders, join folders, temporary files whose writer is gone. Only called while holding
    `dest`'s lock, which a render holds from its first write to its last (request.produce), so no
    live run is writing any of them; and, for any output folder, the media folders whose scene
    process is gone (onepass.film.run.runner.remove_dead_media). Returns how many were removed."""
    work, kit, stills = dest / ".scenes", dest / "clips", dest / "stills"   # the kits work under the same lock
    found = [p for folder in (dest, work, kit, stills) if folder.is_dir() for p in folder.iterdir()
             if (p.is_dir() and (p.name.startswith(LEFTOVER_FOLDERS)
                                 or (p.name.startswith(".ch") and (CLIP_CUT in p.name or STILLS_CUT in p.name))))
             or (p.is_file() and (p.name.endswith(".part") or ".part." in p.name) and _owner_gone(p))]
    found += list(media_root().glob(media_prefix(work) + "*"))
    for p in found:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    if found:
        log(f"removed {len(found)} temporary file(s) left in {dest} by an interrupted run")
    # any run's (a dask worker's too) manim media folders whose scene process was killed, and the
    # other temporary folders named for a process that no longer runs (onepass.data.home.OWNED_PREFIXES: an
    # alignment's, a handout's Chromium's, a network voice's)
    media = remove_dead_media()
    others = remove_dead_owned(tempfile.gettempdir(),
                               home.owner(*(p for p in home.OWNED_PREFIXES if p != home.MEDIA_PREFIX)))
    if media:
        log(f"removed {media} manim media folder(s) of scene processes that no longer run from {media_root()}")
    if others:
        log(f"removed {others} temporary folder(s) of onepass processes that no longer run")
    return len(found) + media + others


def _owner_gone(part: Path) -> bool:
    """A temporary file no live process is writing: its name's process (onepass.data.files.part_owner)
    is gone, or is this one (which holds the folder's lock, so it is not writing it now); a name
    without one (an older version's) once it is an hour old."""
    pid = part_owner(part.name)
    if pid is None:
        try:
            return time.time() - part.stat().st_mtime > 3600
        except OSError:
            return False
    return pid == os.getpid() or not process_alive(pid)


def _render(chapters: list[str], bundle, o: BuildOptions, plans: dict[str, list[SceneJob]], dest: Path,
            log: Callable[[str], None]) -> list[ChapterResult]:
    titles, shown = file_titles(o.chapter_titles(), bundle), o.shown_titles()
    voiced = o.is_voiced
    work = dest / ".scenes"
    work.mkdir(parents=True, exist_ok=True)
    timings_path = work / "timings.json"
    try:
        timings = json.loads(timings_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        timings = {}
    if not isinstance(timings, dict) or not all(type(v) in (int, float) for v in timings.values()):
        timings = {}                # another shape (planted, damaged): only the order of renders is lost
    progress = o.progress
    tasks = {c: progress.add_task(f"chapter {c}: {shown[c]}", total=len(plans[c])) for c in chapters} \
        if progress is not None else {}

    def known(r: SceneResult):
        if progress is not None:
            progress.advance(tasks[r.job.chapter])
        if o.on_scene:
            o.on_scene(r)

    results: dict[str, list[SceneResult | None]] = {c: [None] * len(plans[c]) for c in chapters}
    todo: list[SceneJob] = []
    for c in chapters:
        for job in plans[c]:
            why = None if o.force else job.damage()
            if why is None and not o.force:
                results[c][job.index] = r = cached_result(job)
                known(r)
            else:
                if why:
                    log(f"scene {job.scene} of chapter {job.chapter}: its cached render cannot be used ({why}); "
                        "rendering it again")
                todo.append(job)
    # longest first (times from earlier runs; unknown scenes count as long), so the last
    # process to finish is a short one
    todo.sort(key=lambda j: -timings.get(j.label, float("inf")))

    compare = getattr(bundle, "compare", None)       # chapter 07's second model (request.compare_bundle)
    runner = Runner(bundle.path, o.quality, o.voice_spec, o.env, o.command, lang=o.lang,
                    script=o.words.script if o.words is not None else None,
                    compare=compare.path if compare is not None else None)
    chapter_results: dict[str, ChapterResult] = {}
    failure: PipelineError | None = None

    def finish_chapter(c: str):
        try:
            band = o.language.text("film:heading", chapter=c, title=shown[c]) if o.titles is None else None
            chapter_results[c] = join_chapter(c, titles[c], results[c], dest, voiced, force=o.force,
                                              burn_captions=o.burn_captions, shown_title=shown[c], band=band,
                                              lang=o.lang)
        except subprocess.CalledProcessError as exc:
            raise PipelineError(f"joining chapter {c} failed: {' '.join(map(str, exc.cmd))[:300]} "
                                f"exited with {exc.returncode}") from None
        for r in results[c]:
            prune(r.job)

    for c in chapters:                       # chapters whose scenes were all cached
        if all(results[c]):
            finish_chapter(c)
    if todo:
        # the executor given (film/run/executors.py: a pool shared by a batch, a dask cluster), else
        # a local pool of this build's own
        own = o.executor is None
        executor = LocalExecutor(o.jobs) if own else o.executor
        try:
            futures = {executor.submit(runner, job): job for job in todo}
            for fut in cf.as_completed(futures):
                job = futures[fut]
                try:
                    r = fut.result()
                except PipelineError as exc:
                    if failure is None:
                        failure = exc
                        for f in futures:    # start no more; a running scene finishes (and is kept)
                            f.cancel()
                    continue
                except cf.CancelledError:
                    continue
                results[job.chapter][job.index] = r
                timings[job.label] = round(r.wall, 2)
                known(r)
                if failure is None and all(results[job.chapter]):
                    finish_chapter(job.chapter)
        except BaseException as exc:
            # an error stops this build's own pool; an interrupt stops the executor given too
            if own or not isinstance(exc, Exception):
                executor.stop()
            raise
        finally:
            if own:
                executor.shutdown(wait=True, cancel_futures=True)
            write_json(timings_path, timings)
    if failure is not None:
        raise failure
    return [chapter_results[c] for c in chapters]
