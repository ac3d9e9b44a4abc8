"""Running scene renders: one process per scene (render_job, forked by forkserver), the runner
that starts and checks it, executors on this machine or a dask cluster (scheduler picks one),
and the joins of scenes into chapters and chapters into the film.
"""
