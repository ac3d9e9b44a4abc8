"""Scenes on a dask.distributed cluster: DaskExecutor (the client's side) and render_task (the
worker's). docs/CLUSTER.md is the user's guide.

    with DaskExecutor("local:2") as ex:       # or "tcp://HOST:8786", or an existing client=
        build.render(chapters, bundle, BuildOptions(..., executor=ex))

* DaskExecutor is a onepass.film.run.executors.Executor (a concurrent.futures Executor; renders shared by
  cache key): each scene is one task (`retries=1`); any other callable is one task too.
* The task (`render_task`, on a worker) checks that the worker runs the client's project
  version, scene code and tools (film/plan/identity.py; refused with WorkerMismatch otherwise),
  puts the bundle on the worker's disk (`worker_bundle`: sent once per worker, from the
  client's memory), renders the scene in a child process with the same Runner as a local
  build, and returns the scene's files as bytes: MP4, cues, and the narration clips the cues
  name. The client writes them into its own cache (`receive`), so the joins, captions and film
  run there exactly as after a local render. Cached scenes are never sent (build.render
  submits only what its cache lacks).
* The bundle is broadcast to every worker, one dask value under the bundle's own name; a task
  the cluster dropped because every copy was lost is sent once more with the bundle scattered
  anew. A task refused because the client's files changed since it was sent is sent once more
  with the client's code as it is now.
* Until a worker has joined, scattering (and so every scene) waits, as long as it takes;
  stop() ends the wait.
* The client never waits in silence (`_watch`, a thread of its own, polling the scheduler's
  `processing()` while scenes are out): a worker lost while it rendered scenes of ours is named
  with those scenes and what happens next (another worker takes them; none is connected: start
  one or Ctrl-C), and a wait when no worker is connected is said once, with the scenes waiting.
  (Not dask's "all" events: in distributed 2026.8 one of them, "replicate", holds WorkerState
  objects that cannot be sent, and subscribing to it breaks the client's connection.)

dask is imported only when a DaskExecutor opens (or on a worker): importing this module is
cheap, so the local path starts as fast as before.
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

from onepass.data.chapters import compares
from onepass.data.files import write_bytes, write_json
from onepass.film.plan import keys
from onepass.film.plan.errors import PipelineError
from onepass.film.run.executors import Executor, Handle
from onepass.film.plan.identity import WorkerMismatch, check_identity, code_identity
from onepass.film.plan.jobs import SceneJob, SceneResult
from onepass.film.run.runner import Runner, child_env, remove_dead_media

# dask's nanny sets these to 1 in its workers; a scene process gets the client's values instead,
# so numerical libraries split their work as they would in a local render
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")
TASK_PREFIX = "onepass-scene"

# Called on a worker with each scene task's Runner just before its scene renders; empty in a
# real run. A test fills it on the workers (a dask WorkerPlugin, or `client.run`) to act on a
# task mid-render: tests/cluster_hooks.py counts tasks and kills a worker with it.
BEFORE_RENDER: list[Callable[[Runner], None]] = []


LOOPBACK = "127.0.0.1"
PROBE_SECONDS = 10.0         # how long a scheduler may take to greet a new connection
MAX_GREETING = 1 << 20       # a dask handshake is a few hundred bytes


def probe_scheduler(address: str, timeout: float = PROBE_SECONDS):
    """PipelineError unless a dask scheduler answers at tcp://HOST:PORT within `timeout` seconds.
    A scheduler greets each new connection first (distributed's handshake: 8 bytes, little-endian,
    the length of the frames that follow); something else (an HTTP server waits for a request, or
    answers 'HTTP/1.1 ...', which dask read as a frame length of exabytes) is named in one line
    instead of hanging the client for minutes."""
    import socket
    import struct

    from onepass.film.run.executors import scheduler_address
    host, port = scheduler_address(address)
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            head = b""
            while len(head) < 8:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                sock.settimeout(left)
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
    except socket.timeout:
        raise PipelineError(f"something at {address} accepted the connection but did not greet it as a dask "
                            f"scheduler within {timeout:.0f} s: is that the scheduler's port (dask's default is "
                            "8786)?") from None
    except OSError as exc:
        raise PipelineError(f"no dask scheduler answers at {address}: {exc.strerror or exc}") from None
    if len(head) < 8 or struct.unpack("<Q", head)[0] > MAX_GREETING:
        seen = head.decode("ascii", "replace").strip() or "nothing"
        raise PipelineError(f"{address} answers, but not as a dask scheduler (it sent {seen[:20]!r}): is that "
                            "the scheduler's port (dask's default is 8786)?")


class DaskExecutor(Executor):
    """Scene tasks on a dask.distributed cluster: `tcp://HOST:PORT` (a running scheduler) or
    `local:N` (a LocalCluster of N worker processes, one scene at a time each); `client`: an
    existing distributed.Client (closed by its owner, not here)."""

    WATCH_SECONDS = 2.0      # how often the watcher looks at the cluster while scenes are out
    GRACE_SECONDS = 1.0      # after a worker was lost: time for dask to fail a task it will not retry
    JOIN_SECONDS = 5.0       # while no worker is connected: how long each wait for one lasts before the next

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
            # every port on loopback (the scheduler, workers, nannies, the dashboard): a render opens
            # nothing another machine can reach unless asked (distributed's ":0" listens on 0.0.0.0)
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host=LOOPBACK,
                                        dashboard_address=f"{LOOPBACK}:0", silence_logs=50,
                                        worker_dashboard_address=None)
            self.client = Client(self.cluster, set_as_default=False)
        else:
            probe_scheduler(address, timeout=min(timeout, PROBE_SECONDS))
            try:
                self.client = Client(address, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise PipelineError(f"no dask scheduler answers at {address}: {exc}") from None
        self.kind = f"dask cluster {address}"
        self._bundles: dict[str, object] = {}      # bundle identity -> scattered files (a dask future)
        self._tasks: dict = {}                     # a scene's future -> its dask task
        self._stopping = False
        self._calls = self.client.get_executor(pure=False)   # other callables: distributed's own Executor
        # the watcher (see the module docstring): a task's key -> (the scene's future, its job) until the
        # scene settles; the worker each task was last seen running on; (when, worker, key) of tasks
        # whose worker was lost, said after GRACE_SECONDS
        self._sent: dict[str, tuple[cf.Future, SceneJob]] = {}
        self._on: dict[str, str] = {}
        self._lost: list[tuple[float, str, str]] = []
        self._said_none = False      # "no worker is connected" said, and still true
        self._closing = False
        self._wake = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="onepass-cluster-watch", daemon=True)
        self._watcher.start()

    def describe(self) -> str:
        info = self.client.scheduler_info()
        workers = info.get("workers", {})
        threads = sum(w.get("nthreads", 1) for w in workers.values())
        return f"{self.kind} ({len(workers)} workers, {threads} threads)"

    def _bundle(self, path: Path, again: bool = False):
        """The bundle's identity and its files on the cluster, scattered once (`again`: anew)."""
        meta = json.loads((Path(path) / "meta.json").read_text(encoding="utf-8"))
        ident = {**keys.bundle_identity(meta), "path": str(path)}
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
                self.client.wait_for_workers(1, timeout=self.JOIN_SECONDS)
                self._said_none = False
                return
            except TimeoutError:
                if not self._said_none:
                    self._said_none = True
                    self.log(f"no dask worker is connected to {self.address}; waiting for one to join before the "
                             "scenes are sent (start a worker, or Ctrl-C)")
                continue
        raise PipelineError("stopped while waiting for a dask worker")

    def _start(self, runner: Runner, job: SceneJob) -> cf.Future:
        if getattr(runner, "compare", None) is not None and compares(job.chapter):
            raise PipelineError(f"chapter {job.chapter} sets two models side by side, and its second model's bundle "
                                "is not sent to cluster workers: render it without --scheduler")
        if runner.command is not None:
            raise PipelineError("a custom render command cannot run on a dask cluster")
        request = {"chapter": job.chapter, "scene": job.scene, "index": job.index, "key": job.key,
                   "name": job.stem.name, "quality": runner.quality, "voice": runner.voice, "lang": runner.lang,
                   "script": runner.script.read_text(encoding="utf-8") if runner.script else None,
                   "env": {k: runner.env.get(k) for k in THREAD_VARS}}
        out = Handle(lambda: self._cancel(out))
        out.attempt = 0
        out.add_done_callback(self._forget)

        def send(new_bundle: bool = False):
            request["bundle"], files = self._bundle(runner.bundle_path, again=new_bundle)
            request["expect"] = code_identity()       # this client's code as it is now
            task = self.client.submit(render_task, request, files, retries=1, pure=False,
                                      key=f"{TASK_PREFIX}-{job.key[:16]}-{uuid.uuid4().hex[:8]}")
            with self._lock:
                self._tasks[out] = task
                if not out.done():
                    self._sent[task.key] = (out, job)
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

    def _call(self, fn, *args, **kwargs) -> cf.Future:
        return self._calls.submit(fn, *args, **kwargs)

    # -- never a silent wait -----------------------------------------------------------

    def _forget(self, out: cf.Future):
        with self._lock:
            for key in [k for k, (o, _) in self._sent.items() if o is out]:
                del self._sent[key]

    def _watch(self):
        while not self._closing:
            self._wake.wait(self.WATCH_SECONDS)
            self._wake.clear()
            if self._closing:
                return
            try:
                self._look()
            except Exception:            # noqa: BLE001 - a scheduler gone or a client closing: the
                pass                     # scenes' own futures report that

    def _look(self):
        """Say which scenes a lost worker was rendering, and when no worker is connected."""
        now = time.monotonic()
        with self._lock:
            waiting = {k: job for k, (out, job) in self._sent.items() if not out.done()}
        if not waiting and not self._lost:
            self._on.clear()
            return
        processing = self.client.processing()       # every connected worker -> the tasks it runs
        connected = len(processing)
        self._lost += [(now, w, k) for k, w in self._on.items() if w not in processing and k in waiting]
        self._on = {k: w for w, keys in processing.items() for k in keys if k in waiting}
        due = [x for x in self._lost if now - x[0] >= self.GRACE_SECONDS]     # later ones: the next round
        self._lost = [x for x in self._lost if x not in due]
        by_worker: dict[str, list[SceneJob]] = {}
        for _, worker, key in due:
            if key in waiting and waiting[key] not in by_worker.setdefault(worker, []):
                by_worker[worker].append(waiting[key])     # a scene dask failed meanwhile is not waited for
        for worker, lost in by_worker.items():
            if not lost:
                continue
            them = "it" if len(lost) == 1 else "them"
            nxt = (f"waiting for another worker to take {them} (none connected: start one, or Ctrl-C)"
                   if connected == 0 else f"dask gives {them} to another worker ({connected} connected)")
            # dask's "processing" holds what runs on a worker and what it was sent to run next
            self.log(f"dask worker {worker} was lost (died or left) while it had {_scenes(lost)} to render; {nxt}")
            self._said_none = connected == 0
        scenes = list({id(job): job for job in waiting.values()}.values())     # a scene sent again: once
        if connected and self._said_none:
            self._said_none = False
        elif not connected and scenes and not self._said_none and not self._lost:   # a loss to say says it
            self._said_none = True
            self.log(f"no dask worker is connected to {self.address}; {_scenes(scenes)} "
                     f"{'waits' if len(scenes) == 1 else 'wait'} for one (start a worker, or Ctrl-C)")

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

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False):
        """As any executor's; the client and the cluster this executor opened are closed. A task
        on the cluster is never half-started: cancel_futures cancels every scene still out."""
        super().shutdown(wait, cancel_futures=cancel_futures)
        if cancel_futures:
            self.stop()
        if wait:
            with self._lock:
                pending = list(self._tasks)
            cf.wait(pending)
        self._closing = True
        self._wake.set()
        self._watcher.join(timeout=10)
        self._calls.shutdown(wait=wait)
        if self._own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _scenes(jobs: list[SceneJob]) -> str:
    """'scene Scores of chapter 02', 'scenes Scores of chapter 02, Intro of chapter 03' (at most 6 named)."""
    named = [f"{j.scene} of chapter {j.chapter}" for j in jobs[:6]]
    more = f" and {len(jobs) - 6} more" if len(jobs) > 6 else ""
    return ("scene " if len(jobs) == 1 else "scenes ") + ", ".join(named) + more


# ---------------------------------------------------------------------------------------
# The client's side of a finished task

def receive(job: SceneJob, payload: dict) -> SceneResult:
    """A task's files -> this machine's cache: narration clips into the voice cache, the cues
    pointing at them, the MP4, then the cache entry."""
    from onepass.voiceover.services import cache_root    # the voice cache of this machine (clips named by the worker)
    # the MP4 as the worker's runner checked it (its packets are what its encoder produced) or nothing
    sent = ((payload["record"].get("files") or {}).get("mp4") or {}).get("sha256")
    if sent != hashlib.sha256(payload["mp4"]).hexdigest():
        raise PipelineError(f"scene {job.scene} of chapter {job.chapter} arrived from {payload['worker']} unlike "
                            "the file its worker checked (sha256); nothing was cached: run the same command again")
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
    # the worker's record of the render (film/run/runner.py), with what it says of each file made
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

def _worker():
    from distributed import get_worker   # only ever called inside a dask task
    try:
        return get_worker()
    except ValueError:
        return None


def worker_bundle(bundle: dict, files: dict[str, bytes], base: Path) -> Path:
    """The bundle on this worker's disk: the client's folder when it is here and the same (one
    machine, a shared file system), else the sent files, written once per worker."""
    here = Path(bundle["path"])
    try:
        meta = json.loads((here / "meta.json").read_text(encoding="utf-8"))
        if keys.bundle_identity(meta).items() <= bundle.items() \
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


def render_task(request: dict, bundle_files: dict[str, bytes]) -> dict:
    """Run on a dask worker: one scene, rendered by the same Runner as a local build; returns
    its files as bytes (see the module docstring)."""
    worker = _worker()
    where = worker.address if worker is not None else f"pid {os.getpid()}"
    check_identity(request["expect"], code_identity(), where)
    base = Path(worker.local_directory if worker is not None else tempfile.gettempdir()) / "onepass"
    bundle = worker_bundle(request["bundle"], bundle_files, base)
    remove_dead_media()        # what scene processes of a worker killed on this machine left
    (base / "scenes").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="scene-", dir=base / "scenes") as tmp:
        job = SceneJob(request["chapter"], request["scene"], request["index"], request["key"],
                       Path(tmp) / request["name"])
        # the worker's own environment with the client's thread settings: process settings only
        script = None
        if request.get("script") is not None:         # a lecturer's words travel as text
            script = Path(tmp) / "script.po"
            script.write_text(request["script"], encoding="utf-8")
        runner = Runner(bundle, request["quality"], request["voice"], child_env(settings=request.get("env")),
                        lang=request.get("lang", "en"), script=script)
        for hook in list(BEFORE_RENDER):
            hook(runner)
        r = runner.run(job)
        cues = json.loads(job.cues.read_text(encoding="utf-8"))
        clips = {}
        from onepass.voiceover.services import cache_root   # the voice cache of this worker
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
