"""Test-only hooks on dask workers (tests/test_batch.py), installed through onepass.film.run.cluster's
BEFORE_RENDER by a WorkerPlugin, so a worker that dask restarts gets them too.

* every scene task a worker starts is counted (`tasks_run`, read with `client.run`);
* with a marker file named, the first task that finds the file removes it and kills its own
  worker process (SIGKILL) while its scene renders: the batch must survive it;
* `hold` (through `client.run`): every scene task on that worker says so in a file and waits,
  so a test can kill the worker mid-scene (tests/test_reliability.py).

Kept light (the standard library and distributed): the workers import it to unpickle the plugin.
"""
from __future__ import annotations

import os
import signal
import threading
import time

from distributed import WorkerPlugin

_TASKS_RUN = [0]


def tasks_run(**_) -> int:
    """Scene tasks this worker process started (`sum(client.run(tasks_run).values())`)."""
    return _TASKS_RUN[0]


def hold(marker: str):
    """From now on, every scene task on this worker touches `marker`, then holds two minutes
    before it renders."""
    from onepass.film.run import cluster

    def wait(runner):
        open(marker, "a").close()
        time.sleep(120)
    cluster.BEFORE_RENDER[:] = [wait]


def count(runner):
    _TASKS_RUN[0] += 1


def kill_once(marker: str, runner):
    """Kill this worker mid-render if this task is the one that removes `marker`."""
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


class Hooks(WorkerPlugin):
    """On every worker, now and when dask starts one anew: onepass.film.run.cluster.BEFORE_RENDER counts
    tasks and, once `marker` exists, kills the worker of the task that claims it."""

    name = "onepass-test-hooks"

    def __init__(self, marker: str):
        self.marker = marker

    def setup(self, worker):
        from onepass.film.run import cluster
        cluster.BEFORE_RENDER[:] = [count, lambda runner: kill_once(self.marker, runner)]

    def teardown(self, worker):
        from onepass.film.run import cluster
        cluster.BEFORE_RENDER.clear()
