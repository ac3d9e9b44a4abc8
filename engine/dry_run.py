"""A manim dry run: a scene's construct() run to its end with no file written and, unless asked,
no frame drawn. Every play jumps to its end state, so scene time, the timeline, the cues and the
final mobjects are a render's; only the pixels are missing. The tests (tests/helpers.py
`build_scene` and the few that run a scene of their own), bench/lesson_audit.py,
bench/caption_report.py and bench/accessibility.py run scenes this way, through `dry_run()` only.

    with dry_run(media_dir=folder):
        scene = SomeScene(inputs)
        scene.render()

Internals (engine/__init__.py INTERNALS): the config key `from_animation_number` set past any
scene's plays, so each play is skipped; CairoRenderer.update_frame and get_frame, replaced while
the dry run lasts: manim still draws a skipped play's static frame, which nothing reads, and copies
the camera's pixels for each skipped play and wait, which add_frame drops unread; and
ConvertToOpenGL._converted_classes, set aside while tempconfig restores a renderer that did not
change (settings_for_a_while). A dry run uses the render's faster equivalents of manim's methods
(engine/frames.py faster_manim(): mobject copies, families, a scene's members, subpaths, widths and
bounding boxes), so it runs the code a render runs, in about 0.8 of the time (bench/dry_run_speed.py).

A skipped play, undrawn, also skips what only its frames would use (`quick_plays()`, on unless
`quick=False`): the moving/static split manim makes for drawing, and a Transform's starting copy
(and its interpolation before finish() interpolates it to its end) where the play ends on its target. At the end of a play a Transform's mobject takes its target's
points and colours whatever it started from (alpha 1: (1 - 1)·start + 1·target, the colours copied),
so it starts from the target itself; a FadeIn's target is the mobject, not copied again. A FadeOut
puts its mobject back as it started once it has left (interpolated to 0 from a copy of its start),
so it makes neither its faded target nor that copy and leaves the mobject as it is. Only where every part of the play ends at alpha exactly 1 (not an
Indicate's there-and-back), on a straight path, with no updaters, and the class interpolates as
Transform does; anything else plays as manim plays it. The end state is a render's
(tests/test_frame_path.py compares every scene of a chapter both ways).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from manim import Animation, FadeIn, FadeOut, Scene, Transform, config as manims_config, tempconfig
from manim.mobject.opengl.opengl_compatibility import ConvertToOpenGL
from manim.renderer.cairo_renderer import CairoRenderer
from manim.utils.bezier import interpolate

from onepass.engine.frames import faster_manim
from onepass.engine.unseen import transform_interpolate_mobject

# from_animation_number: every play counts as 'before the first one drawn'
SKIP_EVERY_PLAY = 10 ** 9
SETTINGS = {"dry_run": True, "disable_caching": True, "quality": "low_quality", "progress_bar": "none",
            "verbosity": "ERROR"}


@contextlib.contextmanager
def dry_run(media_dir: str | Path | None = None, draw: bool = False, faster: bool = True, quick: bool = True,
            **settings) -> Iterator[None]:
    """Scenes made and rendered inside this block run dry: manim's `dry_run` (nothing written), low
    quality, no cache, no progress bar, errors only; `media_dir` for the Text outlines manim keeps
    (default: the folder already configured); `settings` add to or override manim's config.

    draw=False (the default) also skips drawing: every play is skipped to its end state and a
    skipped play draws nothing (several times faster). draw=True draws each play's frames into the
    camera, still writing no file (a test that reads the camera's pixels, or compares two scenes'
    timing play by play).

    faster=False leaves manim's own methods in place of faster_manim()'s (bench/dry_run_speed.py
    measures one against the other); quick=False plays every skipped play as manim does
    (quick_plays(), undrawn runs only)."""
    config = dict(SETTINGS)
    if media_dir is not None:
        config["media_dir"] = str(media_dir)
    if not draw:
        config["from_animation_number"] = SKIP_EVERY_PLAY
    config.update(settings)
    with settings_for_a_while(config), contextlib.ExitStack() as stack:
        if not draw:
            drawing = CairoRenderer.update_frame

            def no_drawing_while_skipping(renderer, *args, **kwargs):
                if not renderer.skip_animations:
                    drawing(renderer, *args, **kwargs)
            stack.enter_context(mock.patch.object(CairoRenderer, "update_frame", no_drawing_while_skipping))
            frame = CairoRenderer.get_frame

            def no_frame_copy_while_skipping(renderer):
                # a skipped play's frame goes to add_frame, which drops it: the pixels are not copied
                return renderer.camera.pixel_array if renderer.skip_animations else frame(renderer)
            stack.enter_context(mock.patch.object(CairoRenderer, "get_frame", no_frame_copy_while_skipping))
            if quick:
                stack.enter_context(quick_plays())
        if faster:
            stack.enter_context(faster_manim())
        yield


@contextlib.contextmanager
def settings_for_a_while(settings: dict) -> Iterator[None]:
    """manim's tempconfig(settings), less a cost of its restore: it sets the renderer again, and
    manim's renderer setter gives every class ConvertToOpenGL made (some 140) the bases it already
    has, each assignment invalidating the attribute caches of that class and its subclasses: 8 ms of
    CPU a dry run. Where the renderer is the one it was, that list is set aside while tempconfig
    restores the rest as it does."""
    renderer, converted = manims_config.renderer, ConvertToOpenGL._converted_classes
    try:
        with tempconfig(settings):
            try:
                yield
            finally:
                if manims_config.renderer == renderer:
                    ConvertToOpenGL._converted_classes = []      # (tempconfig's restore runs next)
    finally:
        ConvertToOpenGL._converted_classes = converted


_MANIMS_TRANSFORM_BEGIN = Transform.begin
_FRESH_TARGETS = (FadeIn.create_target, FadeOut.create_target)   # the mobject itself / a new faded copy


def ends_on_target(animation: Transform) -> bool:
    """Whether `animation`'s end sets its mobject from its aligned target alone: Transform's own
    interpolation on a straight path, and no updaters on the mobject (a starting copy's would run)."""
    cls = type(animation)
    return (cls.interpolate_submobject is Transform.interpolate_submobject
            and cls.interpolate_mobject in (Animation.interpolate_mobject, transform_interpolate_mobject)
            and cls.interpolate is Animation.interpolate
            and cls.get_all_families_zipped is Transform.get_all_families_zipped
            and animation.path_func is interpolate and getattr(animation, "path_arc_centers", None) is None
            and not any(m.updaters for m in animation.mobject.get_family()))


def quick_begin(self: Transform) -> None:
    """Transform.begin in a skipped play: the target made and aligned as manim makes it; where every
    part ends at alpha exactly 1, no starting copy and no interpolation at 0 (the play's end sets each
    point and colour from the target); else manim's starting copy."""
    if not ends_on_target(self):
        return _MANIMS_TRANSFORM_BEGIN(self)
    if type(self).clean_up_from_scene is FadeOut.clean_up_from_scene and type(self).create_target is FadeOut.create_target:
        # a FadeOut ends as it began: once it has left the scene, manim interpolates it back to 0, from a
        # starting copy of itself (points (1 - 0)·start + 0·target). Neither its faded target nor that
        # copy is made, and it is interpolated at no alpha; it leaves the scene as manim's does
        self.starting_mobject = self.target_mobject = self.target_copy = self.mobject
        self.ends_on_target = True
        self.interpolate = _stays
        if self.suspend_mobject_updating:
            self.mobject.suspend_updating()
        return
    self.target_mobject = self.create_target()
    fresh = type(self).create_target in _FRESH_TARGETS      # nobody else holds it: aligning it changes no one's
    self.target_copy = self.target_mobject if fresh else self.target_mobject.copy()
    if self.target_copy is not self.mobject:
        self.mobject.align_data(self.target_copy)
    parts = len(self.mobject.family_members_with_points()) if self.lag_ratio else 1
    if (any(self.get_sub_alpha(1.0, i, parts) != 1.0 for i in range(parts))
            or any(m.updaters for m in self.target_copy.get_family())):
        # an Indicate's there-and-back ends on its start: manim's way, its target a copy of its own
        if self.target_copy is self.mobject:
            self.target_copy = self.target_mobject.copy()
        Animation.begin(self)
        return
    self.ends_on_target = True          # quick_update_to_time leaves it to finish()
    if type(self).clean_up_from_scene is Transform.clean_up_from_scene:
        self.starting_mobject = self.target_copy
    else:       # a clean-up of its own may read the start: manim's starting copy
        self.starting_mobject = self.create_starting_mobject()
    if self.suspend_mobject_updating:
        self.mobject.suspend_updating()


def _stays(alpha: float) -> None:
    """A quick FadeOut's interpolation: its mobject looks at every alpha as it began (see quick_begin)."""


def quick_update_to_time(self: Scene, t: float) -> None:
    """Scene.update_to_time, restated, for a skipped play's one step (to its end): a Transform that
    quick_begin set to end on its target is not interpolated here, since finish() interpolates it to
    1 right after and sets every point and colour again; everything else as manim does it."""
    dt = t - self.last_t
    self.last_t = t
    for animation in self.animations:
        animation.update_mobjects(dt)
        if not getattr(animation, "ends_on_target", False):
            animation.interpolate(t / animation.run_time)
    self.update_mobjects(dt)
    self.update_meshes(dt)
    self.update_self(dt)


def no_moving_split(self: Scene, animations) -> tuple[list, list]:
    """Scene.get_moving_and_static_mobjects in an undrawn run: which mobjects move and which stand
    still only decides what is drawn once per play, and nothing is drawn."""
    return [], []


@contextlib.contextmanager
def quick_plays() -> Iterator[None]:
    """While the block runs, every play is taken to be skipped and undrawn (dry_run(draw=False))."""
    with mock.patch.object(Transform, "begin", quick_begin), \
            mock.patch.object(Scene, "update_to_time", quick_update_to_time), \
            mock.patch.object(Scene, "get_moving_and_static_mobjects", no_moving_split):
        yield
