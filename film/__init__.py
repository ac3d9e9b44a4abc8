"""The film build: from chapters and a bundle to cached scene renders and joined MP4s.

    keys.py        cache keys read from the sources as syntax trees (conventions in its docstring)
    jobs.py        BuildOptions, SceneJob / SceneResult / ChapterResult, plan()
    runner.py      one child process per scene (`python -m film.render_job`)
    join.py        a chapter's scenes -> MP4 + captions + thumbnail; chapters -> the film
    build.py       render(chapters, bundle, BuildOptions): the whole build
    render_job.py  renders one scene (the only module here that imports manim)

Layers: render.py -> film/ -> scenes/ -> voiceover/ -> data/.
"""
