"""--scheduler: which executor renders the scenes, the local pool or a dask cluster.

    with open_executor("local:2") as ex:       # "tcp://HOST:8786"; None or "none": this machine
        build.render(chapters, bundle, BuildOptions(..., executor=ex))

Above both executors: film/run/cluster.py's DaskExecutor subclasses film/run/executors.py's Executor,
so the choice between them cannot live in executors.py without an import circle.
"""
from __future__ import annotations

from onepass.film.run.executors import Executor, LocalExecutor, check_scheduler


def open_executor(scheduler: str | None, jobs: int | None = None) -> Executor:
    """The executor --scheduler names: `local:N` or `tcp://HOST:PORT`, a dask cluster
    (film/run/cluster.py); None or "none": a LocalExecutor of `jobs` processes. PipelineError for an
    address that is neither. ($ONEPASS_DASK_SCHEDULER, the user's default, is read by render.py.)"""
    spec = scheduler
    if not spec or spec == "none":
        return LocalExecutor(jobs)
    check_scheduler(spec)
    from onepass.film.run.cluster import DaskExecutor     # dask itself loads only when the executor opens
    return DaskExecutor(spec)
