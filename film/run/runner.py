"""Scene jobs run as child processes (`python -m onepass.film.run.render_job`, forked from film/run/forkserver.py's
server where it can), one per scene; a failed one is reported with the tail of its log, a finished
one recorded as a cache entry."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from onepass.data import home
from onepass.data.bundle import sha256_file
from onepass.data.chapters import compares
from onepass.data.files import replace_together, write_json
from onepass.film.run import forkserver
from onepass.film.plan.jobs import SceneJob, SceneResult
from onepass.film.plan.errors import PipelineError
from onepass.film.plan.keys import ROOT
# the media folders are the runner's interface too (onepass.film.run.media: the scene process imports that, not this)
from onepass.film.run.media import MEDIA_PREFIX, media_folder, media_prefix, media_root, remove_dead_media  # noqa: F401
from onepass.voiceover.media import MediaError, packet_hashes, packets_digest, video_facts


STAGE_PREFIX = home.STAGE_PREFIX     # a scene render's own folder under .scenes/, until it is checked


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def child_env(base: dict | None = None, settings: dict | None = None) -> dict:
    """A scene process's environment: `base`, else this process's own (what any child process
    inherits), with the process `settings` given (None removes a variable) and unbuffered output.
    Process settings only (thread counts): every scene input is an argument of onepass.film.run.render_job."""
    env = dict(os.environ if base is None else base)
    for k, v in (settings or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def encoding_problem(job: SceneJob) -> str | None:
    """None when the scene's MP4 holds exactly the packets its process says x264 produced
    (job.packets); else what is wrong. x264's own packets decode by construction, so this stands in
    for decoding every frame (the join then checks its packets against the parts': film/run/join.py)."""
    try:
        said = json.loads(job.packets.read_text(encoding="utf-8"))
        count, digest = int(said["packets"]), str(said["sha256"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"no readable account of its encoded packets ({job.packets.name}: {exc})"
    try:
        found = packet_hashes(job.mp4)
    except MediaError as exc:
        return str(exc)
    if len(found) != count:
        return f"{len(found)} video packets where its encoder produced {count}"
    if packets_digest(found) != digest:
        return "its video packets are not the ones its encoder produced"
    return None


class Runner:
    """Runs scene jobs in child processes (the caller decides how many at once); remembers
    them to stop them. A Runner is called with a job (`runner(job)`: `run`), so an executor
    runs a scene as `executor.submit(runner, job)` (film/run/executors.py).

    Every scene input is an argument of the scene process (film/run/render_job.py): the bundle, the
    quality, the voice spec (`voice`, None: silent), the language and a lecturer's script, and
    where the cues go. `env` is the
    process's environment (None: this one's), never a scene input."""

    def __init__(self, bundle_path: Path, quality: str, voice: str | None, env: dict | None,
                 command: Callable[[SceneJob, Path], list[str]] | None = None, lang: str = "en",
                 script: Path | None = None, compare: Path | None = None):
        self.bundle_path, self.quality, self.command = bundle_path, quality, command
        self.compare = Path(compare) if compare else None    # a second model's bundle (chapters that compare)
        self.lang, self.script = lang, (Path(script) if script else None)
        self.voice = voice or "none"
        self.env = child_env(env)
        self.procs: set = set()      # subprocess.Popen, or forkserver.Child: poll, terminate, kill
        self.lock = threading.Lock()
        self.stopping = False

    def argv(self, job: SceneJob, cues: Path) -> list[str]:
        if self.command:
            return self.command(job, cues)
        return [sys.executable, "-m", "onepass.film.run.render_job", "--bundle", str(self.bundle_path), "--chapter", job.chapter,
                "--scene", job.scene, "--quality", self.quality, "--voice", self.voice, "--out", str(job.mp4),
                "--cues", str(cues), "--packets", str(job.packets), "--media", str(media_root() / media_prefix(job.stem.parent.parent)),
                "--lang", self.lang, *(["--script", str(self.script)] if self.script else []),
                *(["--compare", str(self.compare)] if self.compare and compares(job.chapter) else [])]

    def __call__(self, job: SceneJob) -> SceneResult:
        return self.run(job)

    def run(self, job: SceneJob) -> SceneResult:
        """Render `job` into a folder of its own (`.scenes/onepass-scene-*`), check what came out,
        then move it into the cache: MP4 and cues first, the record (.json) last. A failed or
        interrupted render removes only that folder, never a file of the cache."""
        if self.stopping:
            raise PipelineError("stopped")
        job.mp4.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=job.mp4.parent))
        try:
            return self._run(job, replace(job, stem=stage / job.stem.name))
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _run(self, job: SceneJob, staged: SceneJob) -> SceneResult:
        t0 = time.perf_counter()
        argv = self.argv(staged, staged.cues)
        staged.log.touch()
        # forked from a process that imported manim already (film/run/forkserver.py), else started afresh
        child = forkserver.spawn(self.env, argv[3:], staged.log) if self.command is None else None
        if child is not None:
            with self.lock:
                self.procs.add(child)
            try:
                returncode, cpu = child.wait(), child.cpu
            finally:
                with self.lock:
                    self.procs.discard(child)
        else:
            returncode, cpu = self._process(argv, staged.log)
        wall = time.perf_counter() - t0
        if self.stopping and returncode != 0:
            raise PipelineError("stopped")
        if returncode != 0 or not staged.mp4.is_file() or not staged.cues.is_file():
            text = staged.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            os.replace(staged.log, job.log)
            tail = "\n".join(text[-15:])
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} failed to render "
                                f"(exit {returncode}; log: {job.log}):\n{tail}")
        try:
            frames, fps = video_facts(staged.mp4)
            if frames < 1:
                raise ValueError("no frames")
        except (subprocess.CalledProcessError, KeyError, IndexError, ValueError) as exc:
            os.replace(staged.log, job.log)
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} wrote an unreadable video "
                                f"({exc}); log: {job.log}") from None
        problem = encoding_problem(staged)
        if problem:
            os.replace(staged.log, job.log)
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} wrote a damaged video ({problem}); "
                                f"nothing was cached: run the same command again to render it afresh (log: {job.log})")
        files = {name: {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
                 for name, p in (("mp4", staged.mp4), ("cues", staged.cues))}
        replace_together([(staged.mp4, job.mp4), (staged.cues, job.cues)])
        write_json(job.meta, {"key": job.key, "chapter": job.chapter, "scene": job.scene, "quality": self.quality,
                              "frames": frames, "fps": fps, "seconds": frames / fps, "files": files,
                              "render_wall": wall, "render_cpu": cpu})
        return SceneResult(job, False, wall, cpu, frames / fps, frames, fps)

    def _process(self, argv: list[str], log_path: Path) -> tuple[int, float]:
        """`argv` as a child process of this one, its output in `log_path`: exit code, CPU seconds."""
        with open(log_path, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
            with self.lock:
                self.procs.add(proc)
            try:
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
            finally:
                with self.lock:
                    self.procs.discard(proc)
        return proc.returncode, usage.ru_utime + usage.ru_stime

    def stop(self):
        self.stopping = True
        with self.lock:
            for p in list(self.procs):
                if p.poll() is None:
                    p.terminate()
