"""The film build: scene jobs -> parallel processes -> a cache -> one MP4 per chapter.

    from film.build import BuildOptions, render
    results = render(["02", "03"], bundle, BuildOptions(quality="low", out=Path("out"), jobs=2))

* Every scene of every requested chapter is one job (film/jobs.py), run as its own process
  (`python -m film.render_job`, film/runner.py), at most `jobs` at a time (default: the cores
  this process may use), longest first by the times recorded in earlier runs.
* Every job has a cache key (film/keys.py: the bundle, the quality, the scene's code and the
  code it imports, the lines it speaks and the voice, the tool versions). A scene whose key
  was rendered before is not rendered again; a chapter whose scenes all hit and whose joined
  MP4 was made from exactly those scenes is not joined again either (film/join.py).
* Nothing here imports manim: the keys are read from the sources as syntax trees, so a
  re-run with nothing to do finishes in about a second.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import subprocess

from data.files import write_json
from film.jobs import BuildOptions, ChapterResult, SceneJob, SceneResult, cached_result, destination, plan, prune
from film.join import join_chapter, join_film  # noqa: F401  (join_film: part of this module's interface)
from film.keys import PipelineError
from film.runner import Runner, default_jobs

__all__ = ["BuildOptions", "PipelineError", "render", "join_film", "destination", "plan"]


def render(chapters: list[str], bundle, options: BuildOptions | None = None) -> list[ChapterResult]:
    """Render `chapters` from `bundle`: scenes in parallel (cached), each chapter joined when its
    scenes are done. Raises PipelineError."""
    o = options or BuildOptions()
    titles = o.chapter_titles()
    jobs = o.jobs or default_jobs()
    voiced = o.is_voiced
    dest = destination(o.out, bundle, o.quality)
    plans = plan(chapters, bundle, o)
    work = dest / ".scenes"
    work.mkdir(parents=True, exist_ok=True)
    timings_path = work / "timings.json"
    try:
        timings = json.loads(timings_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        timings = {}
    progress = o.progress
    tasks = {c: progress.add_task(f"chapter {c}: {titles[c]}", total=len(plans[c])) for c in chapters} \
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
            if job.cached() and not o.force:
                results[c][job.index] = r = cached_result(job)
                known(r)
            else:
                todo.append(job)
    # longest first (times from earlier runs; unknown scenes count as long), so the last
    # process to finish is a short one
    todo.sort(key=lambda j: -timings.get(j.label, float("inf")))

    runner = Runner(bundle.path, o.quality, o.voice, o.env, o.command)
    chapter_results: dict[str, ChapterResult] = {}
    failure: PipelineError | None = None

    def finish_chapter(c: str):
        try:
            chapter_results[c] = join_chapter(c, titles[c], results[c], dest, voiced, force=o.force,
                                              burn_captions=o.burn_captions)
        except subprocess.CalledProcessError as exc:
            raise PipelineError(f"joining chapter {c} failed: {' '.join(map(str, exc.cmd))[:300]} "
                                f"exited with {exc.returncode}") from None
        for r in results[c]:
            prune(r.job)

    for c in chapters:                       # chapters whose scenes were all cached
        if all(results[c]):
            finish_chapter(c)
    if todo:
        pool = cf.ThreadPoolExecutor(max_workers=min(jobs, len(todo)), thread_name_prefix="scene")
        futures = {pool.submit(runner.run, job): job for job in todo}
        try:
            for fut in cf.as_completed(futures):
                job = futures[fut]
                try:
                    r = fut.result()
                except PipelineError as exc:
                    if failure is None:
                        failure = exc
                        runner.stopping = True       # let running scenes finish; start no more
                        for f in futures:
                            f.cancel()
                    continue
                except cf.CancelledError:
                    continue
                results[job.chapter][job.index] = r
                timings[job.label] = round(r.wall, 2)
                known(r)
                if failure is None and all(results[job.chapter]):
                    finish_chapter(job.chapter)
        except BaseException:
            runner.stop()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            write_json(timings_path, timings)
    if failure is not None:
        raise failure
    return [chapter_results[c] for c in chapters]
