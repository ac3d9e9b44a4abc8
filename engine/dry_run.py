"""A manim dry run: a scene's construct() run to its end with no file written and, unless asked,
no frame drawn. Every play jumps to its end state, so scene time, the timeline, the cues and the
final mobjects are a render's; only the pixels are missing. The tests (tests/helpers.py
`build_scene` and the few that run a scene of their own), bench/lesson_audit.py,
bench/caption_report.py and bench/accessibility.py run scenes this way, through `dry_run()` only.

    with dry_run(media_dir=folder):
        scene = SomeScene(inputs)
        scene.render()

Internals (engine/__init__.py INTERNALS): the config key `from_animation_number` set past any
scene's plays, so each play is skipped; and CairoRenderer.update_frame, replaced while the dry run
lasts: manim still draws a skipped play's static frame, which nothing reads. A dry run uses the
render's faster equivalents of manim's methods (engine/frames.py faster_manim(): mobject copies,
families, subpaths), so it runs the code a render runs, in about 0.8 of the time (bench/dry_run_speed.py).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from manim import tempconfig
from manim.renderer.cairo_renderer import CairoRenderer

from onepass.engine.frames import faster_manim

# from_animation_number: every play counts as 'before the first one drawn'
SKIP_EVERY_PLAY = 10 ** 9
SETTINGS = {"dry_run": True, "disable_caching": True, "quality": "low_quality", "progress_bar": "none",
            "verbosity": "ERROR"}


@contextlib.contextmanager
def dry_run(media_dir: str | Path | None = None, draw: bool = False, faster: bool = True,
            **settings) -> Iterator[None]:
    """Scenes made and rendered inside this block run dry: manim's `dry_run` (nothing written), low
    quality, no cache, no progress bar, errors only; `media_dir` for the Text outlines manim keeps
    (default: the folder already configured); `settings` add to or override manim's config.

    draw=False (the default) also skips drawing: every play is skipped to its end state and a
    skipped play draws nothing (several times faster). draw=True draws each play's frames into the
    camera, still writing no file (a test that reads the camera's pixels, or compares two scenes'
    timing play by play).

    faster=False leaves manim's own methods in place of faster_manim()'s (bench/dry_run_speed.py
    measures one against the other)."""
    config = dict(SETTINGS)
    if media_dir is not None:
        config["media_dir"] = str(media_dir)
    if not draw:
        config["from_animation_number"] = SKIP_EVERY_PLAY
    config.update(settings)
    with tempconfig(config), contextlib.ExitStack() as stack:
        if not draw:
            drawing = CairoRenderer.update_frame

            def no_drawing_while_skipping(renderer, *args, **kwargs):
                if not renderer.skip_animations:
                    drawing(renderer, *args, **kwargs)
            stack.enter_context(mock.patch.object(CairoRenderer, "update_frame", no_drawing_while_skipping))
        if faster:
            stack.enter_context(faster_manim())
        yield
