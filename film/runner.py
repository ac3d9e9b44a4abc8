"""Scene jobs run as child processes (`python -m film.render_job`), one per scene; a failed one
is reported with the tail of its log, a finished one recorded as a cache entry."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from data.files import write_json
from film.jobs import SceneJob, SceneResult
from film.keys import ROOT, PipelineError
from voiceover.media import video_facts


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Runner:
    """Runs scene jobs in child processes (the caller decides how many at once); remembers
    them to stop them."""

    def __init__(self, bundle_path: Path, quality: str, voice: str | None, env: dict | None,
                 command: Callable[[SceneJob, Path], list[str]] | None = None):
        self.bundle_path, self.quality, self.command = bundle_path, quality, command
        self.env = dict(os.environ if env is None else env)
        if voice is not None:
            self.env["ONEPASS_VOICE"] = voice
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.procs: set[subprocess.Popen] = set()
        self.lock = threading.Lock()
        self.stopping = False

    def argv(self, job: SceneJob, cues: Path) -> list[str]:
        if self.command:
            return self.command(job, cues)
        return [sys.executable, "-m", "film.render_job", "--bundle", str(self.bundle_path), "--chapter", job.chapter,
                "--scene", job.scene, "--quality", self.quality, "--out", str(job.mp4), "--cues", str(cues)]

    def run(self, job: SceneJob) -> SceneResult:
        if self.stopping:
            raise PipelineError("stopped")
        job.mp4.parent.mkdir(parents=True, exist_ok=True)
        cues_tmp = job.cues.with_name(job.cues.name + ".part")
        t0 = time.perf_counter()
        with open(job.log, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(self.argv(job, cues_tmp), cwd=ROOT, env=self.env, stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            with self.lock:
                self.procs.add(proc)
            try:
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
            finally:
                with self.lock:
                    self.procs.discard(proc)
        wall = time.perf_counter() - t0
        cpu = usage.ru_utime + usage.ru_stime
        if proc.returncode != 0 or not job.mp4.is_file() or not cues_tmp.is_file():
            job.mp4.unlink(missing_ok=True)
            cues_tmp.unlink(missing_ok=True)
            text = job.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            tail = "\n".join(text[-15:])
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} failed to render "
                                f"(exit {proc.returncode}; log: {job.log}):\n{tail}")
        os.replace(cues_tmp, job.cues)
        try:
            frames, fps = video_facts(job.mp4)
        except (subprocess.CalledProcessError, KeyError, IndexError, ValueError) as exc:
            job.mp4.unlink(missing_ok=True)
            raise PipelineError(f"scene {job.scene} of chapter {job.chapter} wrote an unreadable video "
                                f"({exc}); log: {job.log}") from None
        write_json(job.meta, {"key": job.key, "chapter": job.chapter, "scene": job.scene, "quality": self.quality,
                              "frames": frames, "fps": fps, "seconds": frames / fps, "render_wall": wall,
                              "render_cpu": cpu})
        job.log.unlink(missing_ok=True)
        return SceneResult(job, False, wall, cpu, frames / fps, frames, fps)

    def stop(self):
        self.stopping = True
        with self.lock:
            for p in list(self.procs):
                if p.poll() is None:
                    p.terminate()
