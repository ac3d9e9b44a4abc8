"""The film build, by job (each package imports only those below it: make -> kit -> run ->
plan, frames; tests/test_layers.py checks it):

    film/make/     api, batch, build, request
                What to render and the build that renders it: the request (render.py's options and a manifest's
                [[job]], one validator), the build of chapters on one executor, a batch of requests, and
                render() for Python and Jupyter (api).
    film/kit/      clips, describe, handout, notebook, publish, slides
                The course kit made from rendered chapters: a clip per narration beat, the lecture deck
                (offline HTML, PowerPoint), handouts, notebooks and the publishing kit.
    film/run/      cluster, executors, forkserver, join, media, render_job, runner, scheduler
                Running scene renders: one process per scene (render_job, forked by forkserver), the runner
                that starts and checks it, executors on this machine or a dask cluster (scheduler picks one),
                and the joins of scenes into chapters and chapters into the film.
    film/plan/     errors, identity, jobs, keys, source_memo
                The plan of a build: its scene jobs and their cache keys, read from the sources as syntax
                trees (keys), the facts kept between runs (source_memo), what a cluster worker must share
                with the client (identity), and the build's error (errors).
    film/frames/   holds
                The film's own fast frame path: held frames encoded once (holds). manim's internals
                live in engine/.

Layers: onepass.cli -> film/ -> scenes/ -> voiceover/ -> engine/ -> words/ -> data/.
"""
