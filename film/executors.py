"""Where scene renders run: this machine's process pool, or a dask.distributed cluster.

    with open_executor("local:2") as ex:           # or "tcp://HOST:8786", or None (the local pool)
        build.render(chapters, bundle, BuildOptions(..., executor=ex))

An executor takes a scene job (film/jobs.py) and the Runner that build.render made for it and
returns a `concurrent.futures.Future` of its SceneResult, with the scene's files written where
the job says (the cache entry, `.json`, last). build.render treats every executor alike.

* Every executor shares renders by cache key: a second job asking for a key that is rendering
  (or was rendered) in this executor's lifetime waits for that render and gets a copy of its
  files; the key is rendered once (a batch of jobs that share scenes, film/batch.py).
* LocalExecutor: `jobs` child processes at a time on this machine (film/runner.py), the same
  thing build.render does without an executor.
* DaskExecutor: each scene is one task on a dask.distributed cluster (`retries=1`). The task
  (`render_task`, run on a worker) checks that the worker runs the client's project version,
  scene code and tools (`code_identity`; refused with WorkerMismatch otherwise), puts the
  bundle on the worker's disk (sent once per worker, from the client's memory), renders the
  scene in a child process with the same Runner, and returns the scene's files as bytes: MP4,
  cues, and the narration clips the cues name. The client writes them into its own cache, so
  the joins, captions and film run here exactly as after a local render. Cached scenes are
  never sent (build.render submits only what its cache lacks).

Test-only hook: with $ONEPASS_TEST_KILL_WORKER naming a file, the first task that finds the file
removes it and kills its own worker process (SIGKILL) while its scene renders (tests/test_batch.py
proves the batch survives it).
"""
from __future__ import annotations

import ast
import concurrent.futures as cf
import hashlib
import importlib.metadata
import json
import os
import re
import signal
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from data.files import write_bytes, write_json
from film import keys
from film.jobs import SceneJob, SceneResult
from film.keys import ROOT, PipelineError
from film.runner import Runner, default_jobs

SCHEDULER_ENV = "ONEPASS_DASK_SCHEDULER"
KILL_ENV = "ONEPASS_TEST_KILL_WORKER"
# dask's nanny sets these to 1 in its workers; a scene process gets the client's values instead,
# so numerical libraries split their work as they would in a local render
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")
TASK_PREFIX = "onepass-scene"
PROJECT = "onepass"
SCENE_FILES = (".mp4", ".cues.json", ".json")          # what a cache entry is (the .json last)


class WorkerMismatch(RuntimeError):
    """A worker whose project version, scene code or tools differ from the client's."""


# ---------------------------------------------------------------------------------------
# Project identity: what a worker must share with the client to render the same frames

def project_version(root: Path = ROOT) -> str:
    try:
        return importlib.metadata.version(PROJECT)
    except importlib.metadata.PackageNotFoundError:     # a checkout that was never installed
        m = re.search(r'^version\s*=\s*"([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
        return m.group(1) if m else "?"


_IDENTITY: dict[tuple, dict] = {}


def code_identity(root: Path = ROOT) -> dict:
    """{"version", "code", "tools"}: the project version, one fingerprint of every module of the
    project's packages (syntax trees: comments and formatting do not count, narration lines
    do) and the tool versions a scene key holds. Memoised on the files' sizes and times."""
    files = sorted(p for pkg in keys.LOCAL_PACKAGES for p in (root / pkg).rglob("*.py")
                   if "__pycache__" not in p.parts)
    stat = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    if stat not in _IDENTITY:
        trees = {str(p.relative_to(root)): hashlib.sha256(ast.dump(keys.parse(p)).encode("utf-8")).hexdigest()
                 for p in files}
        _IDENTITY.clear()
        _IDENTITY[stat] = {"version": project_version(root), "code": keys.sha(trees)[:16],
                           "tools": keys.tool_versions()}
    return _IDENTITY[stat]


def check_identity(expected: dict, mine: dict, where: str):
    """Raise WorkerMismatch when this worker would render other frames than the client."""
    if expected == mine:
        return
    diffs = []
    if expected["version"] != mine["version"]:
        diffs.append(f"project version {mine['version']} (client: {expected['version']})")
    if expected["code"] != mine["code"]:
        diffs.append(f"scene code {mine['code']} (client: {expected['code']})")
    if expected["tools"] != mine["tools"]:
        diffs.append(f"tools {mine['tools']} (client: {expected['tools']})")
    raise WorkerMismatch(f"worker {where} refused: it runs {', '.join(diffs)}; install the client's commit "
                         f"on every worker (`git checkout <commit> && make install`), see docs/CLUSTER.md", mine)


# ---------------------------------------------------------------------------------------
# Executors

@dataclass
class _Shared:
    """One render of one cache key and the jobs waiting for it."""
    base: cf.Future
    job: SceneJob
    waiting: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handle(cf.Future):
    """A job's future; cancelling it gives up its claim on the shared render."""

    def __init__(self, on_cancel):
        super().__init__()
        self._on_cancel = on_cancel

    def cancel(self):
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


class Executor:
    """Renders shared by cache key (see the module docstring); subclasses start the renders."""

    kind = "?"

    def __init__(self):
        self._lock = threading.RLock()
        self._renders: dict[str, _Shared] = {}
        self.started = 0                 # renders started (sent, for a cluster)
        self.shared: set[Path] = set()   # stems filled with a copy of another job's render

    def describe(self) -> str:
        return self.kind

    def submit(self, runner: Runner, job: SceneJob) -> cf.Future:
        with self._lock:
            entry = self._renders.get(job.key)
            if entry is None or not _reusable(entry):
                entry = self._renders[job.key] = _Shared(self._start(runner, job), job)
                self.started += 1
            with entry.lock:
                entry.waiting += 1

        def give_up():
            with entry.lock:
                entry.waiting -= 1
                last = entry.waiting == 0
            if last and entry.base.cancel():
                with self._lock:
                    if self._renders.get(job.key) is entry:
                        del self._renders[job.key]

        handle = _Handle(give_up)

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
        raise NotImplementedError

    def stop(self):
        """Stop every render (interrupt): nothing half-written is left as a cache entry."""

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            self.stop()
        self.close()


class LocalExecutor(Executor):
    """`jobs` scene processes at a time on this machine (what build.render does by itself)."""

    def __init__(self, jobs: int | None = None):
        super().__init__()
        self.jobs = jobs or default_jobs()
        self.kind = f"local pool of {self.jobs} processes"
        self.pool = cf.ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="scene")
        self.runners: dict[tuple, Runner] = {}

    def _start(self, runner: Runner, job: SceneJob) -> cf.Future:
        # a runner of our own per configuration: one job's build stopping (runner.stopping) must
        # not stop a render another job waits for
        config = (str(runner.bundle_path), runner.quality, tuple(sorted(runner.env.items())), id(runner.command))
        with self._lock:
            mine = self.runners.get(config)
            if mine is None:
                mine = self.runners[config] = Runner(runner.bundle_path, runner.quality, None, runner.env,
                                                     runner.command)
        return self.pool.submit(mine.run, job)

    def stop(self):
        for r in self.runners.values():
            r.stop()

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """Scene tasks on a dask.distributed cluster: `tcp://HOST:PORT` (a running scheduler) or
    `local:N` (a LocalCluster of N worker processes, one scene at a time each)."""

    def __init__(self, address: str, *, client=None, timeout: float = 20):
        super().__init__()
        # dask is imported only when a cluster is asked for: the local path stays as fast to start
        import dask
        from distributed import Client, LocalCluster
        self.address, self.cluster, self._own_client = address, None, client is None
        if client is not None:
            self.client = client
        elif address.startswith("local:"):
            n = int(address.split(":", 1)[1])
            # a worker dying mid-scene is retried once on another; a second death fails the scene
            dask.config.set({"distributed.scheduler.allowed-failures": 1})
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                                        silence_logs=50, worker_dashboard_address=None)
            self.client = Client(self.cluster, set_as_default=False)
        else:
            try:
                self.client = Client(address, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise PipelineError(f"no dask scheduler answers at {address}: {exc}") from None
        self.kind = f"dask cluster {address}"
        self._bundles: dict[str, object] = {}      # bundle identity -> scattered files (a dask future)
        self._tasks: dict = {}                     # a job's future -> its dask task
        self._stopping = False

    def describe(self) -> str:
        info = self.client.scheduler_info()
        workers = info.get("workers", {})
        threads = sum(w.get("nthreads", 1) for w in workers.values())
        return f"{self.kind} ({len(workers)} workers, {threads} threads)"

    def _bundle(self, path: Path, again: bool = False):
        """The bundle's identity and its files on the cluster, scattered once (`again`: anew)."""
        meta = json.loads((Path(path) / "meta.json").read_text(encoding="utf-8"))
        ident = {"key": meta.get("cache_key"), "tensors": meta.get("tensors_sha256"),
                 "schema": meta.get("schema_version"), "path": str(path)}
        name = keys.sha(ident)[:16]
        if again or name not in self._bundles:
            self._wait_for_a_worker()        # outside the lock: stop() takes it to end the wait
        with self._lock:
            if again:
                self._bundles.pop(name, None)
            if name not in self._bundles:
                files = {p.name: p.read_bytes() for p in sorted(Path(path).iterdir()) if p.is_file()}
                # one dask value per bundle, under the bundle's own name: scattering the dict itself
                # would name each file's data by its file name ("meta.json"), and a second prompt's
                # bundle would replace the first's on the cluster. On every worker (broadcast):
                # scattered data has no recipe, so a copy lost with its worker is gone for good
                key = f"onepass-bundle-{name}-{uuid.uuid4().hex[:8]}"
                self._bundles[name] = self.client.scatter({key: files}, hash=False, broadcast=True)[key]
        return {**ident, "name": name}, self._bundles[name]

    def _wait_for_a_worker(self):
        """Scattering needs a running worker; a cluster still starting its workers (SLURM jobs in
        the queue, `dask worker` not yet started) is waited for, as long as it takes."""
        while not self._stopping:
            try:
                return self.client.wait_for_workers(1, timeout=5)
            except TimeoutError:
                continue
        raise PipelineError("stopped while waiting for a dask worker")

    def _start(self, runner: Runner, job: SceneJob) -> cf.Future:
        if runner.command is not None:
            raise PipelineError("a custom render command cannot run on a dask cluster")
        request = {"chapter": job.chapter, "scene": job.scene, "index": job.index, "key": job.key,
                   "name": job.stem.name, "quality": runner.quality, "voice": runner.env.get("ONEPASS_VOICE"),
                   "env": {k: runner.env.get(k) for k in THREAD_VARS}}
        out = _Handle(lambda: self._cancel(out))
        out.attempt = 0

        def send(new_bundle: bool = False):
            request["bundle"], files = self._bundle(runner.bundle_path, again=new_bundle)
            request["expect"] = code_identity()       # this client's code as it is now
            task = self.client.submit(render_task, request, files, retries=1, pure=False,
                                      key=f"{TASK_PREFIX}-{job.key[:16]}-{uuid.uuid4().hex[:8]}")
            with self._lock:
                self._tasks[out] = task
            task.add_done_callback(done)

        def done(task):
            with self._lock:
                self._tasks.pop(out, None)
            if out.done():
                return
            try:
                payload = task.result()
            except WorkerMismatch as exc:
                # the files here changed since the task was sent (a checkout, an edit) and the
                # worker now has what this client has: send it again, once, with that code
                if out.attempt == 0 and exc.args[1:] and exc.args[1] == code_identity():
                    out.attempt += 1
                    return send()
                return self._fail(out, job, exc)
            except cf.CancelledError as exc:
                # not cancelled here (that would have settled `out`): the cluster dropped the task,
                # as it does when every worker holding the bundle died; scatter it and send once more
                if out.attempt == 0 and not self._stopping:
                    out.attempt += 1
                    return send(new_bundle=True)
                return self._fail(out, job, exc)
            except BaseException as exc:    # noqa: BLE001 - the worker's error, for the job that waits
                return self._fail(out, job, exc)
            if not out.set_running_or_notify_cancel():
                return
            try:
                out.set_result(receive(job, payload))
            except BaseException as exc:    # noqa: BLE001
                out.set_exception(exc)

        send()
        return out

    def _fail(self, out: cf.Future, job: SceneJob, exc: BaseException):
        if out.set_running_or_notify_cancel():
            message = exc.args[0] if isinstance(exc, WorkerMismatch) else f"{type(exc).__name__}: {exc}"
            out.set_exception(PipelineError(f"scene {job.scene} of chapter {job.chapter} failed on the cluster: "
                                            f"{message}"))

    def _cancel(self, out: cf.Future):
        with self._lock:
            task = self._tasks.pop(out, None)
        if task is not None:
            task.cancel()

    def stop(self):
        with self._lock:
            self._stopping = True
            tasks = list(self._tasks.values())
        if tasks:
            self.client.cancel(tasks)

    def close(self):
        if self._own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def tasks_run(self) -> int:
        """Scene tasks the cluster's workers started since they started (tests)."""
        return sum(self.client.run(_tasks_run).values())


def open_executor(scheduler: str | None, jobs: int | None = None) -> Executor | None:
    """The executor for --scheduler (or $ONEPASS_DASK_SCHEDULER); None: build.render's own pool."""
    spec = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if spec is None or spec == "none":
        return None
    if spec.startswith("local:"):
        n = spec.split(":", 1)[1]
        if not n.isdigit() or int(n) < 1:
            raise PipelineError(f"--scheduler local:N needs a number of workers of at least 1 (got {spec!r})")
    elif not re.match(r"^(tcp|tls|ucx|inproc|ws|wss)://[^/\s]+$", spec):
        raise PipelineError(f"--scheduler {spec!r}: expected tcp://HOST:PORT (a running dask scheduler) or "
                            "local:N (N worker processes on this machine)")
    return DaskExecutor(spec)


# ---------------------------------------------------------------------------------------
# The client's side of a finished task

def receive(job: SceneJob, payload: dict) -> SceneResult:
    """A task's files -> this machine's cache: narration clips into the voice cache, the cues
    pointing at them, the MP4, then the cache entry."""
    from voiceover.services import cache_root    # the voice cache of this machine (clips named by the worker)
    job.stem.parent.mkdir(parents=True, exist_ok=True)
    cues = payload["cues"]
    for cue in cues:
        clip = cue.get("clip") if isinstance(cue, dict) else None
        if not clip:
            continue
        rel, data = payload["clips"][clip]
        here = cache_root() / rel
        if not (here.is_file() and here.stat().st_size == len(data)):
            here.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(here, data)
        cue["clip"] = str(here)
    write_bytes(job.mp4, payload["mp4"])
    write_json(job.cues, cues)
    # the worker's record of the render (film/runner.py), with what it says of each file made
    # true of the files here (the cues now name this machine's clips); written last
    record = dict(payload["record"], worker=payload["worker"])
    for name, info in (record.get("files") or {}).items():
        path = {"mp4": job.mp4, "cues": job.cues}[name]
        info.update(bytes=path.stat().st_size, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    write_json(job.meta, record)
    frames, fps = record["frames"], record["fps"]
    return SceneResult(job, False, payload["wall"], payload["cpu"], frames / fps, frames, fps)


# ---------------------------------------------------------------------------------------
# The worker's side

_TASKS_RUN = [0]


def _tasks_run(**_) -> int:
    return _TASKS_RUN[0]


def _worker():
    from distributed import get_worker   # only ever called inside a dask task
    try:
        return get_worker()
    except ValueError:
        return None


def _worker_bundle(bundle: dict, files: dict[str, bytes], base: Path) -> Path:
    """The bundle on this worker's disk: the client's folder when it is here and the same (one
    machine, a shared file system), else the sent files, written once per worker."""
    here = Path(bundle["path"])
    try:
        meta = json.loads((here / "meta.json").read_text(encoding="utf-8"))
        if (meta.get("cache_key"), meta.get("tensors_sha256")) == (bundle["key"], bundle["tensors"]) \
                and all((here / n).is_file() and (here / n).stat().st_size == len(d) for n, d in files.items()):
            return here
    except (OSError, ValueError):
        pass
    folder = base / "bundles" / bundle["name"]
    if not (folder / "meta.json").is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{bundle['name']}.", dir=folder.parent))
        for n, d in files.items():
            (tmp / n).write_bytes(d)
        try:
            os.rename(tmp, folder)
        except OSError:              # another task on this machine was first
            for p in tmp.iterdir():
                p.unlink()
            tmp.rmdir()
    return folder


def _kill_hook(runner: Runner):
    """Test-only: kill this worker process mid-render, once (see the module docstring)."""
    marker = os.environ.get(KILL_ENV)
    if not marker:
        return
    try:
        os.unlink(marker)            # whoever removes the marker is the one task that dies
    except FileNotFoundError:
        return

    def kill():
        for _ in range(200):         # until the scene's process runs
            if runner.procs:
                break
            time.sleep(0.02)
        time.sleep(0.5)
        with runner.lock:
            for p in runner.procs:
                p.kill()
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=kill, daemon=True).start()


def render_task(request: dict, bundle_files: dict[str, bytes]) -> dict:
    """Run on a dask worker: one scene, rendered by the same Runner as a local build; returns
    its files as bytes (see the module docstring)."""
    worker = _worker()
    where = worker.address if worker is not None else f"pid {os.getpid()}"
    check_identity(request["expect"], code_identity(), where)
    _TASKS_RUN[0] += 1
    base = Path(worker.local_directory if worker is not None else tempfile.gettempdir()) / "onepass"
    bundle = _worker_bundle(request["bundle"], bundle_files, base)
    (base / "scenes").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="scene-", dir=base / "scenes") as tmp:
        job = SceneJob(request["chapter"], request["scene"], request["index"], request["key"],
                       Path(tmp) / request["name"])
        env = dict(os.environ)
        for k, v in request.get("env", {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        runner = Runner(bundle, request["quality"], request["voice"], env)
        _kill_hook(runner)
        r = runner.run(job)
        cues = json.loads(job.cues.read_text(encoding="utf-8"))
        clips = {}
        from voiceover.services import cache_root   # the voice cache of this worker
        root = cache_root().resolve()
        for cue in cues:
            clip = cue.get("clip") if isinstance(cue, dict) else None
            if clip and clip not in clips:
                p = Path(clip).resolve()
                data = p.read_bytes()
                try:
                    rel = p.relative_to(root)
                except ValueError:       # a clip outside the voice cache (recorded:DIR): by content
                    rel = Path("cluster") / f"{hashlib.sha256(data).hexdigest()[:24]}{p.suffix}"
                clips[clip] = (str(rel), data)
        return {"mp4": job.mp4.read_bytes(), "cues": cues, "clips": clips, "wall": r.wall, "cpu": r.cpu,
                "record": json.loads(job.meta.read_text(encoding="utf-8")), "worker": where}
