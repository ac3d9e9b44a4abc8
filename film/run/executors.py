"""Where scene renders run: a concurrent.futures Executor that shares renders by cache key.

    with open_executor("local:2") as ex:       # film/run/scheduler.py: "tcp://HOST:8786" (film/run/cluster.py) or this machine
        build.render(chapters, bundle, BuildOptions(..., executor=ex))

An executor is a `concurrent.futures.Executor` (submit, map, shutdown, `with`; distributed's
ClientExecutor is the model). A scene render is `submit(runner, job)`: the Runner build.render
made (film/run/runner.py; a Runner is called with its job) and the scene job (film/plan/jobs.py); the
future's result is the SceneResult, the scene's files written where the job says (the cache
entry, `.json`, last). Any other callable runs as on any executor. build.render submits every
scene to one: the executor it is given, else a LocalExecutor of `jobs` it opens and closes.

* Every executor shares renders by cache key: a second job asking for a key that is rendering
  (or was rendered) in this executor's lifetime waits for that render and gets a copy of its
  files; the key is rendered once (a batch of jobs that share scenes, film/make/batch.py).
* Cancelling a scene's future gives up that job's claim on the render. A render that already
  runs for that job alone on this machine cannot be cancelled (`cancel()` is False, as for any
  running future): it finishes and its files are kept. The last claim on a render not yet
  running cancels it; on a cluster it cancels the task wherever it is.
* `stop()` ends every render now (an interrupt): nothing half-written is left as a cache entry.
  Leaving `with` on an interrupt (KeyboardInterrupt, SystemExit) stops, on an error cancels
  what has not started and waits for what runs, and otherwise waits (`shutdown`).
* LocalExecutor(jobs): `jobs` scene processes at a time on this machine (film/run/runner.py).
* DaskExecutor (film/run/cluster.py): each scene is one task on a dask.distributed cluster.
"""
from __future__ import annotations

import concurrent.futures as cf
import os
import re
import sys
import threading
import urllib.parse
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from onepass.film.plan.errors import PipelineError
from onepass.film.plan.jobs import SceneJob, SceneResult
from onepass.film.run.runner import Runner, default_jobs

SCENE_FILES = (".mp4", ".cues.json", ".json")          # what a cache entry is (the .json last)


@dataclass
class _Shared:
    """One render of one cache key and the jobs waiting for it."""
    base: cf.Future
    job: SceneJob
    waiting: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Handle(cf.Future):
    """A future whose cancel() first asks `may_cancel`, then runs `on_cancel` (giving up a
    claim on a shared render, or cancelling a cluster task)."""

    def __init__(self, on_cancel, may_cancel=lambda: True):
        super().__init__()
        self._on_cancel, self._may_cancel = on_cancel, may_cancel

    def cancel(self):
        if self.done() or not self._may_cancel():
            return False
        ok = super().cancel()
        if ok:
            self._on_cancel()
        return ok


def copy_scene(src: SceneJob, dst: SceneJob):
    """A rendered scene's cache entry under another job's name (hard links when possible)."""
    dst.stem.parent.mkdir(parents=True, exist_ok=True)
    for suffix in SCENE_FILES:
        a, b = src.stem.with_name(src.stem.name + suffix), dst.stem.with_name(dst.stem.name + suffix)
        tmp = b.with_name(f".{b.name}.{uuid.uuid4().hex[:8]}.part")
        try:
            os.link(a, tmp)
        except OSError:
            tmp.write_bytes(a.read_bytes())
        os.replace(tmp, b)


def _reusable(entry: _Shared) -> bool:
    """A render to wait for or copy: running, or finished well with its files still there (a
    failed or cancelled one is tried again by the next job that asks)."""
    base = entry.base
    if not base.done():
        return True
    return not base.cancelled() and base.exception() is None and base.result().job.cached()


class Executor(cf.Executor):
    """Renders shared by cache key (see the module docstring); subclasses start the renders
    (`_start`) and run other callables (`_call`)."""

    kind = "?"

    def __init__(self):
        self._lock = threading.RLock()
        self._renders: dict[str, _Shared] = {}
        self._closed = False
        self.started = 0                 # renders started (sent, for a cluster)
        self.shared: set[Path] = set()   # stems filled with a copy of another job's render
        # where the executor says what it waits for (a cluster whose worker died); the caller may
        # set it to its own console's line printer
        self.log = lambda line: print(line, file=sys.stderr, flush=True)

    def describe(self) -> str:
        return self.kind

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        """`submit(runner, job)`: the scene rendered (shared by key) -> its SceneResult; any
        other `fn(*args, **kwargs)` as on any executor."""
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
        if isinstance(fn, Runner) and len(args) == 1 and isinstance(args[0], SceneJob) and not kwargs:
            return self._submit_scene(fn, args[0])
        return self._call(fn, *args, **kwargs)

    def _submit_scene(self, runner: Runner, job: SceneJob) -> cf.Future:
        with self._lock:
            entry = self._renders.get(job.key)
            if entry is None or not _reusable(entry):
                entry = self._renders[job.key] = _Shared(self._start(runner, job), job)
                self.started += 1
            with entry.lock:
                entry.waiting += 1

        def may_cancel() -> bool:
            # a render running for this job alone is not cancelled: it finishes and is kept
            with entry.lock:
                return entry.waiting > 1 or not entry.base.running()

        def give_up():
            with entry.lock:
                entry.waiting -= 1
                last = entry.waiting == 0
            if last and entry.base.cancel():
                with self._lock:
                    if self._renders.get(job.key) is entry:
                        del self._renders[job.key]

        handle = Handle(give_up, may_cancel)

        def deliver(base: cf.Future):
            if not handle.set_running_or_notify_cancel():
                return
            try:
                r: SceneResult = base.result()
                if r.job.stem != job.stem:
                    copy_scene(r.job, job)
                    self.shared.add(job.stem)
                    r = SceneResult(job, True, 0.0, 0.0, r.seconds, r.frames, r.fps)
            except cf.CancelledError:
                handle.set_exception(PipelineError(f"scene {job.scene} of chapter {job.chapter}: cancelled"))
            except BaseException as exc:       # noqa: BLE001 - handed to the job that waits for it
                handle.set_exception(exc)
            else:
                handle.set_result(r)

        entry.base.add_done_callback(deliver)
        return handle

    def _start(self, runner: Runner, job: SceneJob) -> cf.Future:
        """A future of `runner(job)`, started here (no sharing: submit does that)."""
        raise NotImplementedError

    def _call(self, fn, *args, **kwargs) -> cf.Future:
        raise NotImplementedError

    def stop(self):
        """Stop every render now (an interrupt): nothing half-written is left as a cache entry."""

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False):
        """No new work; `cancel_futures`: cancel what has not started; `wait`: until the rest ends."""
        with self._lock:
            self._closed = True

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not issubclass(exc_type, Exception):
            self.stop()                  # an interrupt: every render ends now
        self.shutdown(wait=True, cancel_futures=exc_type is not None)
        return False


class LocalExecutor(Executor):
    """`jobs` scene processes at a time on this machine (default: the cores this process may use)."""

    def __init__(self, jobs: int | None = None):
        super().__init__()
        self.jobs = jobs or default_jobs()
        self.kind = f"local pool of {self.jobs} processes"
        self.pool = cf.ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="scene")
        self.runners: dict[tuple, Runner] = {}

    def _start(self, runner: Runner, job: SceneJob) -> cf.Future:
        return self.pool.submit(self.runner_for(runner), job)

    def runner_for(self, runner: Runner) -> Runner:
        """A runner of our own per configuration (every scene input), stopped by stop() alone: a job
        that gives up a render another job waits for must not stop it."""
        config = (str(runner.bundle_path), runner.quality, runner.voice, tuple(sorted(runner.env.items())),
                  id(runner.command), runner.lang, str(runner.script), str(runner.compare))
        with self._lock:
            mine = self.runners.get(config)
            if mine is None:
                mine = self.runners[config] = Runner(runner.bundle_path, runner.quality, runner.voice, runner.env,
                                                     runner.command, lang=runner.lang, script=runner.script,
                                                     compare=runner.compare)
        return mine

    def _call(self, fn, *args, **kwargs) -> cf.Future:
        return self.pool.submit(fn, *args, **kwargs)

    def stop(self):
        with self._lock:
            runners = list(self.runners.values())
        for r in runners:
            r.stop()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False):
        super().shutdown(wait, cancel_futures=cancel_futures)
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def scheduler_address(spec: str) -> tuple[str, int]:
    """(host, port) of `tcp://HOST:PORT`, checked here: dask's Client raises ValueError or TypeError
    for a bad port or bracket (then hangs in its clean-up), and its other schemes need settings
    onepass does not pass (tls: certificates; ucx: UCX; inproc: this process). PipelineError."""
    expected = (f"--scheduler {spec!r}: expected tcp://HOST:PORT (a running dask scheduler, port 1-65535) or "
                "local:N (N worker processes on this machine)")
    try:
        parts = urllib.parse.urlsplit(spec)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise PipelineError(expected) from None
    if parts.scheme != "tcp" or not host or port is None or not 0 < port < 65536 \
            or parts.path or parts.query or parts.fragment or parts.username or re.search(r"\s", spec):
        raise PipelineError(expected)
    return host, port


def max_local_workers() -> int:
    """The most workers `local:N` starts: twice this machine's usable cores (a scene keeps one busy;
    local:1000 on 2 cores took the load to 24 and printed thousands of lines of worker errors)."""
    return 2 * default_jobs()


def check_scheduler(spec: str):
    """PipelineError unless `spec` is `local:N` (N >= 1) or tcp://HOST:PORT (request.validate and
    onepass.film.run.scheduler.open_executor: a bad address is refused before anything is extracted)."""
    if spec.startswith("local:"):
        n = spec.split(":", 1)[1]
        if not n.isdigit() or int(n) < 1:
            raise PipelineError(f"--scheduler local:N needs a number of workers of at least 1 (got {spec!r})")
        if int(n) > max_local_workers():
            raise PipelineError(f"--scheduler local:N takes at most {max_local_workers()} workers on this machine "
                                f"({default_jobs()} CPU core(s): each worker renders a scene on a core of its own; "
                                f"got {spec!r}); for more, start workers on other machines and pass tcp://HOST:PORT")
    elif spec != "none":
        scheduler_address(spec)
