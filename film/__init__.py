"""The film build: from chapters and a bundle to cached scene renders and joined MP4s.

    request.py     what to render, said once: the options of render.py and a manifest's [[job]],
                   one validator, build_options() -> BuildOptions, produce() builds it all
    errors.py      PipelineError, the build's one error for a problem the user can act on
    keys.py        cache keys read from the sources as syntax trees (conventions in its docstring)
    identity.py    what a worker must share with the client: version, code fingerprint, tools
    jobs.py        BuildOptions, SceneJob / SceneResult / ChapterResult, plan()
    runner.py      one child process per scene (`python -m film.render_job`); a Runner is called
                   with its job
    forkserver.py  those processes forked from one that imported manim once (same files, less CPU)
    executors.py   where scenes render: Executor (concurrent.futures, renders shared by cache
                   key), LocalExecutor (this machine), open_executor(--scheduler)
    cluster.py     DaskExecutor and the task a dask worker runs (render_task), its files back
    join.py        a chapter's scenes -> MP4 + captions + thumbnail; chapters -> the film
    build.py       render(chapters, bundle, BuildOptions): the whole build, on one executor
    batch.py       a course manifest: load_manifest, run (every job on one executor), summary
    clips.py       a clip per narration beat, cut from a joined chapter
    slides.py      the lecture deck of those clips (offline HTML, PPTX)
    render_job.py  renders one scene from its arguments, through engine/frames.py (the only
                   module here that imports manim)

Layers: render.py -> film/ -> scenes/ -> voiceover/ -> engine/ -> words/ -> data/.
"""
