"""The engine boundary's contract (engine/): each internal of manim and manim-voiceover that engine/
relies on exists in the supported versions (engine/versions.py) and behaves as engine/ assumes;
and the scene processes' frame path (engine/frames.py: FilmRenderer, FilmCamera, FilmFileWriter,
SegmentEncoder) is only faster: the same scene gives the same decoded frames through it as through
manim's own renderer and camera (a shape that only moved: the same to cairo's rounding), and the
same frames on every render.

This is the one test module besides engine/ that may name those internals (tests/test_engine.py).
A new manim or manim-voiceover release is supported once this module passes against it."""
from __future__ import annotations

import contextlib
import gc
import hashlib
import subprocess
import types
from pathlib import Path
from unittest import mock

import av
import numpy as np
import pytest
from av.video.reformatter import VideoReformatter
from manim import DOWN, UP, Create, FadeIn, FadeOut, Scene, Transform, tempconfig
from manim.renderer.cairo_renderer import CairoRenderer

from onepass.engine.encoding import ENCODER_OPTIONS
from onepass.engine.frames import (
    HOLD_MIN_FRAMES, INFLIGHT_ENCODERS, FilmRenderer, FrameTimes, SegmentEncoder,
    rgba_to_i420,
)
from onepass.film.run.render_job import film_renderer
from onepass.scenes import style as S
from onepass.scenes.meter import CountTo, FlopsMeter
from onepass.scenes.widgets import AttentionArcs, NumberGrid
from onepass.voiceover import media


class Sampler(Scene):
    """A little of everything the film does: fades, a transform, the meter counting (drawn last),
    thin strokes, and holds (static waits) between them."""

    def construct(self):
        rng = np.random.default_rng(3)
        meter = FlopsMeter(0, "", widest=10 ** 9, title="Σ FLOPs").to_corner(UP + S.END, buff=S.MARGIN)
        self.add(meter)
        grid = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0).shift(DOWN * 0.5)
        self.play(FadeIn(grid), run_time=0.4)
        self.wait(0.3)
        after = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0).shift(DOWN * 0.5)
        self.play(*[Transform(grid.cells[k], after.cells[k]) for k in grid.cells], run_time=0.4)
        arcs = AttentionArcs(np.tril(rng.random((5, 5))) / 3, layout="row", width=6.0).shift(UP * 1.6)
        self.play(Create(arcs.lines), FadeIn(arcs.marks), run_time=0.4)
        self.add(meter)
        self.play(CountTo(meter.counter, 123_456_789), run_time=0.5)
        self.wait(0.25)
        self.play(FadeOut(grid), run_time=0.3)


def render(make_renderer, media: Path, inflight: int = 1, scene_class=None) -> Path:
    """Render `scene_class` (Sampler) at low quality into `media`; its movie file."""
    scene_class = scene_class or Sampler
    with tempconfig({"quality": "low_quality", "media_dir": str(media), "disable_caching": True,
                     "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                     "output_file": scene_class.__name__.lower(), "background_color": S.BACKGROUND,
                     "video_encoder_options": ENCODER_OPTIONS, "max_inflight_encoders": inflight}):
        scene = scene_class(renderer=make_renderer())     # made here: its camera takes the quality
        scene.render()
        return Path(scene.renderer.file_writer.movie_file_path)


def decoded(media_dir: Path) -> list[np.ndarray]:
    movie = next(media_dir.rglob("sampler.mp4"))
    with av.open(str(movie)) as container:
        return [f.to_ndarray() for f in container.decode(video=0)]


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(float) - b) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255 ** 2 / mse)


def test_the_colour_conversion_matches_swscales_within_rounding():
    """Flat colours (most of a frame) convert as swscale converts them, to a level; edges differ
    only where the chroma of a 2 x 2 block is averaged rather than filtered across blocks."""
    rng = np.random.default_rng(4)
    blocks = rng.integers(0, 256, (9, 16, 4), dtype=np.uint8)
    rgba = np.ascontiguousarray(np.repeat(np.repeat(blocks, 120, 0), 120, 1))       # 1080 x 1920
    rgba[..., 3] = 255
    ours = rgba_to_i420(rgba).to_ndarray().astype(int)
    theirs = VideoReformatter().reformat(av.VideoFrame.from_numpy_buffer(rgba, format="rgba"),
                                         format="yuv420p").to_ndarray().astype(int)
    assert ours.shape == theirs.shape == (1620, 1920)
    assert np.abs(ours[:1080] - theirs[:1080]).max() <= 1                          # luma
    inner = np.ones((540, 960), bool)                  # chroma away from the blocks' edges
    for k in range(1, 16):
        inner[:, k * 60 - 2:k * 60 + 2] = False
    for k in range(1, 9):
        inner[k * 60 - 2:k * 60 + 2, :] = False
    for plane in (ours[1080:1350].reshape(540, 960) - theirs[1080:1350].reshape(540, 960),
                  ours[1350:].reshape(540, 960) - theirs[1350:].reshape(540, 960)):
        assert np.abs(plane[inner]).max() <= 1


def framemd5(path: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:v:0", "-f", "framemd5", "-"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line and not line.startswith("#")]


def recording(renderer_class, drawn: list):
    """`renderer_class` noting every picture it hands its file writer: (its pixels' hash, frames)."""
    class Recording(renderer_class):
        def add_frame(self, frame, num_frames: int = 1):
            if not self.skip_animations:
                drawn.append((hashlib.sha256(frame.tobytes()).hexdigest(), num_frames))
            super().add_frame(frame, num_frames)
    return Recording


@pytest.mark.render
def test_the_film_frame_path_draws_what_manim_draws_and_the_same_every_time(tmp_path):
    times, drawn, stock_drawn = FrameTimes(), [], []
    ours = framemd5(render(lambda: film_renderer(times, recording(FilmRenderer, drawn)), tmp_path / "ours"))
    # as a scene process renders: segments encoded while the next ones are drawn
    again = framemd5(render(film_renderer, tmp_path / "again", inflight=INFLIGHT_ENCODERS))
    stock = framemd5(render(recording(CairoRenderer, stock_drawn), tmp_path / "stock"))
    assert drawn == stock_drawn, "the film's frame path drew a picture manim would not have drawn"
    assert len(ours) == len(stock) == sum(n for _, n in drawn) > 0
    assert again == ours, "two renders of one scene gave different frames"
    # every frame outside a hold is x264's encoding of the same picture as manim's own file, up to
    # the colour conversion's rounding (onepass.engine.frames.rgba_to_i420); a hold (film/frames/holds.py)
    # shows its first frame for as long as it lasts
    mine, theirs = decoded(tmp_path / "ours"), decoded(tmp_path / "stock")
    at, holds_seen = 0, 0
    for _, n in drawn:
        if n >= HOLD_MIN_FRAMES:
            holds_seen += 1
            assert len({line.split(",")[-1] for line in ours[at:at + n]}) == 1, "a hold's frames differ"
        for a, b in zip(mine[at:at + n], theirs[at:at + n]):
            assert psnr(a, b) > 40, "a frame looks other than manim's"
        at += n
    assert holds_seen >= 2
    # the holds were converted once and encoded as many times as they last
    assert times.frames == len(ours) and times.converted < times.frames


@pytest.mark.render
def test_a_scene_process_accounts_for_exactly_the_packets_its_mp4_holds(tmp_path):
    """onepass.film.run.runner caches a scene only if its MP4 holds the packets x264 made (engine/frames.py
    hashes them as they are muxed, start codes and all): the account must match the file manim
    assembles from its segments (where the muxer repeats the parameter sets), packet for packet."""
    with tempconfig({"quality": "low_quality", "media_dir": str(tmp_path), "disable_caching": True,
                     "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                     "output_file": "sampler", "background_color": S.BACKGROUND,
                     "video_encoder_options": ENCODER_OPTIONS}):
        scene = Sampler(renderer=film_renderer())
        scene.render()
        writer = scene.renderer.file_writer
        movie = Path(writer.movie_file_path)
    # the account keeps the hashes, never a finished encoder (each held its x264 buffers: 2 GB
    # by the end of a 1080p60 scene)
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is SegmentEncoder]      # type(): no lazy module touched
    encoded = writer.encoded_packets()
    held = media.packet_hashes(movie)
    assert sum(p is not None for p in writer.partial_movie_files) > 3      # several segments joined
    assert len(encoded) == len(held) == len(framemd5(movie))
    assert encoded == held
    # one changed byte in a frame's data is seen
    data = bytearray(movie.read_bytes())
    data[len(data) // 2] ^= 0xFF
    movie.write_bytes(bytes(data))
    assert media.packet_hashes(movie) != encoded


def test_the_film_traces_every_shape_as_manim_does():
    """onepass.engine.frames.trace_path makes the cairo path manim's Camera.set_cairo_context_path makes,
    element for element: closed and open outlines, several subpaths in one shape (a label's glyphs
    merged), ends that meet within the tolerance and ends that just miss it, a lone point."""
    from manim import Arc, Camera, Circle, Line, Square, VMobject

    from onepass.engine.frames import trace_path
    from onepass.scenes import text as TX
    camera = Camera()
    ctx = camera.get_cairo_context(camera.pixel_array)
    two = Square().append_points(Circle(radius=0.5).shift([3, 0, 0]).points)      # two subpaths
    near = VMobject().set_points_as_corners([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1e-9, 1e-9, 0]])
    apart = VMobject().set_points_as_corners([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0.01, 0, 0]])
    gap = Line([0, 0, 0], [1, 0, 0]).append_points(Line([1.001, 0, 0], [2, 0, 0]).points)
    lone = VMobject().set_points(np.array([[0.5, 0.5, 0.0]]))
    label = TX.compact_text(TX.Text("q·kᵀ / √64 = −1.57", font=S.MONO))
    grid = NumberGrid(np.random.default_rng(2).normal(0, 1.5, (3, 4)), vmax=3.0)
    arcs = AttentionArcs(np.tril(np.random.default_rng(3).random((5, 5))) / 3, layout="row", width=6.0)
    shapes = [Circle(), Square().rotate(0.3), Arc(angle=2.5), two, near, apart, gap, lone, label,
              *label.get_family(), *grid.get_family(), *arcs.get_family()]
    traced = 0
    for shape in shapes:
        if not isinstance(shape, VMobject) or not len(shape.points):
            continue
        ctx.new_path()
        Camera.set_cairo_context_path(camera, ctx, shape)
        theirs = list(ctx.copy_path())
        ctx.new_path()
        assert trace_path(ctx, shape)
        assert list(ctx.copy_path()) == theirs, f"{type(shape).__name__} traced otherwise"
        traced += 1
    assert traced > 20


class Mover(Scene):
    """What moves most in the film: labels and boxes sliding into place, shrinking and growing, a
    shape fading in on its way down (onepass.engine.frames.FilmCamera puts their kept paths back moved);
    then a turn and a growth from nothing, which it must trace."""

    def construct(self):
        from manim import LEFT, RIGHT, Circle, GrowFromCenter, Rotate, RoundedRectangle, Square

        from onepass.scenes import text as TX
        label = TX.label("Σ FLOPs 24,379,392", mono=True).shift(LEFT * 2 + UP)
        word = TX.label("attention").shift(DOWN * 2)
        box = RoundedRectangle(width=2.0, height=1.2, corner_radius=0.15, color=S.ATTENTION, fill_opacity=0.3)
        self.add(label, word, box)
        self.play(label.animate.shift(RIGHT * 3.1 + DOWN * 0.37), box.animate.scale(0.45).shift(DOWN * 0.8),
                  run_time=0.6)
        self.play(box.animate.scale(3.0), label.animate.scale(0.6), word.animate.stretch(1.3, 0), run_time=0.6)
        self.play(FadeIn(Circle(radius=0.4, color=S.INK).shift(UP * 2 + RIGHT * 4), shift=DOWN * 0.6), run_time=0.4)
        # and what must be traced afresh: a turn, and a shape growing from a point (kept paths
        # are enlarged at most twofold)
        square = Square(1.5, color=S.KEY, fill_opacity=0.5).shift(LEFT * 4 + DOWN)
        self.play(Rotate(square, 0.6), GrowFromCenter(Square(2.0, color=S.TOKEN).shift(RIGHT * 4 + DOWN)),
                  run_time=0.6)


def pictures(renderer_class, media: Path, kept: list, scene_class=None, **renderer_kwargs):
    """Render `scene_class` (Mover) through `renderer_class` (made with `renderer_kwargs`), every
    picture it hands its file writer appended to `kept`; the renderer's camera."""
    class Keeping(renderer_class):
        def add_frame(self, frame, num_frames: int = 1):
            if not self.skip_animations:
                kept.append(frame.copy())
            super().add_frame(frame, num_frames)
    made = []
    render(lambda: made.append(Keeping(**renderer_kwargs)) or made[0], media, scene_class=scene_class or Mover)
    return made[0].camera


@pytest.mark.render
def test_a_shape_moved_whole_is_drawn_as_manim_traces_it_to_cairos_rounding(tmp_path):
    """A shape that only slid or was scaled along the axes gets its kept path back through a matrix
    instead of being traced again: every picture is manim's own up to the rasterizer's rounding (an
    edge pixel's coverage changes by at most one of cairo's 15 sub-scanlines when an edge moves by
    1/256 of a pixel), and two renders draw the same pixels."""
    ours, again, stock = [], [], []
    camera = pictures(FilmRenderer, tmp_path / "ours", ours)
    pictures(FilmRenderer, tmp_path / "again", again)
    pictures(CairoRenderer, tmp_path / "stock", stock)
    assert camera.paths["moved"] > 100, f"the moves were traced afresh: {camera.paths}"
    assert len(ours) == len(stock) > 20
    assert all(np.array_equal(a, b) for a, b in zip(ours, again)), "two renders drew different pixels"
    for k, (a, b) in enumerate(zip(ours, stock)):
        diff = np.abs(a.astype(np.int16) - b)
        assert diff.max() <= 255 // 15 + 1, f"picture {k}: a pixel {diff.max()} levels off manim's"
        assert (diff > 1).mean() < 0.001, f"picture {k}: {(diff > 1).mean():.2%} of its pixels differ visibly"


def test_subpaths_are_found_as_manim_finds_them():
    """onepass.engine.frames.subpaths_from_points (every Transform's alignment, in a scene process) splits
    a shape's points into the subpaths manim's VMobject.get_subpaths_from_points gives: the same
    splits, the same points, for ends that meet, just miss, are not finite, or trail off."""
    from manim import Arc, Circle, Line, Square, VMobject

    from onepass.engine.frames import _MANIMS_SUBPATHS, subpaths_from_points
    from onepass.scenes import text as TX
    two = Square().append_points(Circle(radius=0.5).shift([3, 0, 0]).points)
    near = VMobject().set_points_as_corners([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1e-9, 1e-9, 0]])
    gap = Line([0, 0, 0], [1, 0, 0]).append_points(Line([1.001, 0, 0], [2, 0, 0]).points)
    rel = Line([1e6, 0, 0], [2e6, 0, 0]).append_points(Line([2e6 + 5, 0, 0], [3e6, 0, 0]).points)   # rtol's reach
    odd = VMobject().set_points(np.arange(30, dtype=float).reshape(10, 3))       # not whole curves
    bad = Line([0, 0, 0], [1, 0, 0]).append_points(Line([1, 0, 0], [2, 0, 0]).points)
    bad.points[3:5] = [np.nan, 0, 0]
    far = Line([0, 0, 0], [np.inf, 0, 0]).append_points(Line([np.inf, 0, 0], [2, 0, 0]).points)
    label = TX.compact_text(TX.Text("q·kᵀ / √64 = −1.57", font=S.MONO))
    grid = NumberGrid(np.random.default_rng(2).normal(0, 1.5, (3, 4)), vmax=3.0)
    shapes = [Circle(), Arc(angle=2.5), two, near, gap, rel, odd, bad, far, VMobject(), label,
              *label.get_family(), *grid.get_family()]
    checked = 0
    for shape in shapes:
        if not isinstance(shape, VMobject):
            continue
        ours, theirs = subpaths_from_points(shape, shape.points), _MANIMS_SUBPATHS(shape, shape.points)
        assert len(ours) == len(theirs), f"{type(shape).__name__}: {len(ours)} subpaths, manim finds {len(theirs)}"
        assert all(a.shape == b.shape and np.array_equal(a, b, equal_nan=True) for a, b in zip(ours, theirs))
        checked += 1
    assert checked > 20
    assert len(subpaths_from_points(two, two.points)) == 2 and len(subpaths_from_points(gap, gap.points)) == 2


def test_a_shapes_boundary_points_are_manims():
    """onepass.engine.frames.points_defining_boundary (every next_to, get_left, move_to in a scene
    process) gives the rows manim's VMobject.get_points_defining_boundary gives, in its order and
    shape: for one shape, a single point, no points, a family of glyphs and cells, a group of groups;
    and manim's own error for points that are not whole curves."""
    from manim import Arc, Circle, Dot, Square, VGroup, VMobject

    from onepass.engine.frames import _MANIMS_BOUNDARY, points_defining_boundary
    from onepass.scenes import text as TX
    label = TX.compact_text(TX.Text("q·kᵀ / √64 = −1.57", font=S.MONO))
    grid = NumberGrid(np.random.default_rng(2).normal(0, 1.5, (3, 4)), vmax=3.0)
    single = VMobject().set_points(np.array([[1.0, 2.0, 0.0]]))
    shapes = [Circle(), Arc(angle=2.5), Square().append_points(Circle(radius=0.5).points), single, VMobject(),
              VGroup(), VGroup(VGroup(Dot(), single), VMobject(), label), label, grid, *grid.get_family()]
    for shape in shapes:
        ours, theirs = points_defining_boundary(shape), _MANIMS_BOUNDARY(shape)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    odd = VMobject().set_points(np.arange(15, dtype=float).reshape(5, 3))        # not whole curves
    with pytest.raises(ValueError):
        _MANIMS_BOUNDARY(odd)
    with pytest.raises(ValueError):
        points_defining_boundary(odd)


def test_rounded_corners_are_manims_point_for_point():
    """engine/frames.py corner_arc (the arcs Polygram.round_corners makes while a scene renders or runs
    dry: every glow, chip and panel frame) gives the points manim's ArcBetweenPoints gives, bit for bit:
    rounded rectangles of many sizes, radii and places, a box around words, polygons whose corners turn
    by other angles, a concave (negative) radius, a list of radii and evenly distributed anchors; and
    the same again where each outline is rounded from memory (round_corners: rounded before)."""
    from manim import RegularPolygon, RoundedRectangle, SurroundingRectangle, Text
    from manim.mobject.geometry import polygram

    from onepass.engine import frames
    from onepass.engine.frames import corner_arc, faster_manim, round_corners

    def shapes():
        rng = np.random.default_rng(7)
        made = [RoundedRectangle(corner_radius=r, width=w, height=h).shift([x, y, 0]) for r, w, h, x, y in
                zip(rng.uniform(0.01, 0.3, 30), rng.uniform(0.7, 5, 30), rng.uniform(0.7, 3, 30),
                    rng.normal(0, 3, 30), rng.normal(0, 2, 30))]
        made.append(SurroundingRectangle(Text("·cat 0.42", font=S.MONO).shift([1.3, -0.7, 0]), buff=0.1,
                                         corner_radius=0.08))
        made += [RegularPolygon(n).shift([0.3 * n, 0, 0]).round_corners(0.15) for n in (3, 5, 6, 7)]
        made += [RegularPolygon(6).round_corners(-0.1), RegularPolygon(4).round_corners([0.1, 0.2]),
                 RegularPolygon(5).round_corners(0.1, evenly_distribute_anchors=True),
                 RegularPolygon(4).round_corners(0.2, components_per_rounded_corner=3)]
        return made
    manims = shapes()
    frames._ROUNDED.clear()
    with faster_manim():
        assert polygram.ArcBetweenPoints is corner_arc and polygram.Polygram.round_corners is round_corners
        ours = shapes()
        with mock.patch.object(frames, "_MANIMS_ROUND_CORNERS", side_effect=AssertionError("rounded again")):
            remembered = shapes()
    assert polygram.ArcBetweenPoints is not corner_arc and polygram.Polygram.round_corners is not round_corners
    assert len(ours) == len(remembered) == len(manims) == 39
    for a, b, c in zip(ours, remembered, manims):
        assert a.points.shape == c.points.shape and np.array_equal(a.points, c.points), type(a).__name__
        assert np.array_equal(b.points, c.points) and b.points is not a.points, type(a).__name__
    hexagon = RegularPolygon(6).round_corners(-0.1).points
    with faster_manim():                          # a shape's points are its own, not the memory's
        for _ in range(2):
            RegularPolygon(6).round_corners(-0.1).points[0] += 1.0
        assert np.array_equal(RegularPolygon(6).round_corners(-0.1).points, hexagon)


class Layers(Scene):
    """Still shapes among moving ones, as the film has them: a grid's cells fading in one after
    another while a bar slides beneath them (drawn before them) and a ring slides over them (drawn
    after), a square that stops, then changes colour, then moves on."""

    def construct(self):
        from manim import LEFT, RIGHT, Circle, LaggedStart, Rectangle, Square, UpdateFromAlphaFunc

        rng = np.random.default_rng(5)
        bar = Rectangle(width=0.8, height=3.6, color=S.KEY, fill_opacity=0.8).shift(LEFT * 6)
        self.add(bar)                                    # first: under everything added after it
        grid = NumberGrid(rng.normal(0, 1.5, (4, 6)), vmax=3.0)
        ring = Circle(radius=0.5, color=S.INK).shift(LEFT * 6 + UP * 0.4)
        square = Square(0.8, color=S.TOKEN, fill_opacity=0.6).shift(UP * 2.8 + LEFT * 4)
        self.add(square)

        def recolour(shape, alpha):                     # still for a third, recoloured, still, moved
            shape.set_fill(S.QUERY if alpha > 0.35 else S.TOKEN)
            if alpha > 0.7:
                shape.move_to(UP * 2.8 + LEFT * 4 + RIGHT * 6 * (alpha - 0.7))
        self.play(LaggedStart(*[FadeIn(cell) for cell in grid.cells.values()], lag_ratio=0.1),
                  bar.animate.shift(RIGHT * 12), UpdateFromAlphaFunc(square, recolour), run_time=3.0)
        self.add(ring)
        self.play(ring.animate.shift(RIGHT * 12), run_time=1.5)


def test_still_shapes_drawn_once_per_play_give_manims_pixels_exactly(tmp_path):
    """onepass.engine.still_layer draws the shapes that held still onto a layer once and each frame draws only
    the rest over it: every picture is the one the camera draws without the layer, pixel for pixel,
    with shapes moving beneath still ones and over them, and a still shape changing colour."""
    from onepass.engine.frames import FilmCamera

    class Unlayered(FilmCamera):
        LAYERED = False

    layered, plain = [], []
    camera = pictures(FilmRenderer, tmp_path / "layered", layered, Layers, camera_class=FilmCamera)
    pictures(FilmRenderer, tmp_path / "plain", plain, Layers, camera_class=Unlayered)
    assert camera.paths["layered"] > 200, f"the still shapes were drawn every frame: {camera.paths}"
    assert len(layered) == len(plain) > 50
    for k, (a, b) in enumerate(zip(layered, plain)):
        assert np.array_equal(a, b), f"picture {k}: {np.count_nonzero((a != b).any(axis=2))} pixels differ"


class Strips(Scene):
    """Chapter 02's sum of value strips: five strips (cells in an outline) fall into one, a
    ReplacementTransform whose families differ in shape (manim pads both with faded copies and
    points), while a bar slides over them; then the sum fades out (a remover)."""

    def construct(self):
        from manim import LEFT, RIGHT, Rectangle, ReplacementTransform, VGroup

        rng = np.random.default_rng(7)

        def strip(y):
            cells = VGroup(*[Rectangle(width=0.5, height=0.3, stroke_width=0, fill_color=S.diverging(x, 2.0),
                                       fill_opacity=1) for x in rng.normal(0, 1, 8)]).arrange(RIGHT, buff=0)
            return VGroup(cells, Rectangle(width=4.0, height=0.3, stroke_width=2, stroke_color=S.KEY,
                                           fill_opacity=0).move_to(cells)).move_to(UP * y)

        values = VGroup(*[strip(1.6 - 0.5 * i) for i in range(5)])
        total = strip(-1.8)
        bar = Rectangle(width=0.6, height=4.5, color=S.QUERY, fill_opacity=0.5).shift(LEFT * 5)
        self.add(values, bar)
        falling = VGroup(*[v.copy() for v in values])
        self.play(ReplacementTransform(falling, total), bar.animate.shift(RIGHT * 10), run_time=1.5)
        self.play(FadeOut(total), run_time=0.5)


@pytest.mark.render
def test_a_transforms_parts_that_paint_nothing_are_left_alone_with_manims_pixels(tmp_path):
    """engine/unseen.py: a Transform whose mobject leaves the scene skips, until its last step, the
    parts clear at both ends (manim's padding of families that differ in shape), and the camera does
    not draw them: every picture is the one drawn with manim's interpolation of every part, pixel for
    pixel, with fewer parts moved; and nothing is left skipped after the render."""
    from manim.animation.animation import Animation as ManimAnimation

    from onepass.engine import unseen
    from onepass.engine.frames import faster_manim

    skipped: list[int] = []

    class Counting(FilmRenderer):
        def add_frame(self, frame, num_frames: int = 1):
            skipped.append(len(unseen.UNSEEN))
            super().add_frame(frame, num_frames)

    ours, theirs = [], []
    with faster_manim():
        pictures(Counting, tmp_path / "ours", ours, Strips)
        assert max(skipped) > 50, f"no part was left alone: {max(skipped)}"
        with mock.patch.object(Transform, "interpolate_mobject", ManimAnimation.interpolate_mobject):
            pictures(FilmRenderer, tmp_path / "manims", theirs, Strips)
    assert not unseen.UNSEEN
    assert len(ours) == len(theirs) > 20
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert np.array_equal(a, b), f"picture {k}: {np.count_nonzero((a != b).any(axis=2))} pixels differ"


def test_only_parts_clear_all_through_a_transform_are_left_alone():
    """A part is left alone only where every channel it paints with is clear at both ends (then every
    interpolation of it is): a stroke that goes from clear to wide while its colour goes from opaque to
    clear paints in between."""
    from manim import Square

    from onepass.engine.unseen import _clear_channels
    clear = Square().set_fill(opacity=0).set_stroke(width=0, opacity=0)
    assert _clear_channels(clear, clear.copy())
    assert _clear_channels(clear, Square().set_fill(opacity=0).set_stroke(S.INK, width=3, opacity=0))
    crossing_a = Square().set_fill(opacity=0).set_stroke(S.INK, width=0, opacity=1)
    crossing_b = Square().set_fill(opacity=0).set_stroke(S.INK, width=3, opacity=0)
    assert not _clear_channels(crossing_a, crossing_b)
    assert not _clear_channels(clear, Square().set_fill(S.INK, opacity=0.5).set_stroke(width=0))
    assert not _clear_channels(clear, Square().set_fill(opacity=float("nan")).set_stroke(width=0))


def test_a_transforms_parts_are_interpolated_together_to_manims_numbers():
    """engine/unseen.py's interpolate_parts: the parts of a Transform interpolated in one numpy
    expression per array end every frame with manim's numbers, bit for bit (points, colours, sheen,
    widths, their shapes and types): parts at their own sub-alphas (a lag ratio), parts at sub-alpha 1
    before the end, a sheen, a leaving Transform's parts (some skipped as clear), a FadeTransform (its
    ends faded after begin's first interpolation); and, by manim's own interpolation, an arc path, a
    family with a part that interpolates its own way and a mobject whose updater moves its starting copy."""
    from manim import (RIGHT, Circle, FadeTransform, ReplacementTransform, Square, VGroup, VMobject, smooth,
                       there_and_back)
    from manim.animation.animation import Animation as ManimAnimation

    from onepass.engine import unseen
    from onepass.engine.frames import faster_manim

    class OwnWay(VMobject):
        def interpolate(self, mobject1, mobject2, alpha, path_func=None):
            self.points = mobject2.points.copy()
            return self

    def animations():
        rng = np.random.default_rng(5)
        squares = VGroup(*[Square(0.3).shift(rng.normal(0, 1, 3)).set_fill(S.INK, opacity=rng.random())
                           for _ in range(6)])
        circles = VGroup(*[Circle(0.2).shift(rng.normal(0, 1, 3)).set_stroke(S.TOKEN, width=rng.random() * 6)
                           for _ in range(6)])
        circles[2].set_sheen(0.4, UP)
        strips = VGroup(*[Square(0.2).shift(UP * i) for i in range(5)])
        own = VGroup(Square(), OwnWay().set_points_as_corners([[0, 0, 0], [1, 1, 0]]))
        return [Transform(squares, circles, lag_ratio=0.4, rate_func=smooth),
                Transform(VGroup(Square(), Circle()), VGroup(Circle(), Square()), rate_func=there_and_back),
                ReplacementTransform(strips, VGroup(Square(1.0).set_fill(opacity=0).set_stroke(width=0), Circle())),
                Transform(Square(), Circle(), path_arc=1.0),
                Transform(own, VGroup(Circle(), OwnWay().set_points_as_corners([[1, 0, 0], [2, 1, 0]]))),
                FadeTransform(VGroup(Square(), Circle()), VGroup(Circle(0.5), Square(2.0))),
                Transform(VGroup(Square(), Circle()).add_updater(lambda m, dt: m.shift(RIGHT * dt)),
                          VGroup(Circle(), Square()))]

    def frames() -> list:
        seen = []
        for animation in animations():
            animation.begin()
            for k in range(1, 16):
                animation.update_mobjects(1 / 16)          # as a scene's frame does (updaters run)
                animation.interpolate(k / 16)
                for part in animation.mobject.family_members_with_points():
                    seen.append([(name, type(v).__name__, np.shape(v), np.asarray(v).tobytes())
                                 for name, v in sorted(vars(part).items())
                                 if name in ("points", *unseen._ROWS, *unseen._VALUES)])
            animation.finish()
        return seen

    with faster_manim():
        batched = []
        with mock.patch.object(unseen.Blend, "__init__", side_effect=unseen.Blend.__init__, autospec=True) as made:
            ours = frames()
            batched = [call.args[0].batched for call in made.call_args_list]
        with mock.patch.object(Transform, "interpolate_mobject", ManimAnimation.interpolate_mobject):
            theirs = frames()
    assert batched == [True, True, True, False, False, True, False], batched
    assert len(ours) == len(theirs) > 100
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"part-frame {k}: {[x[0] for x, y in zip(a, b) if x != y]} differ from manim's"


def test_families_are_listed_as_manim_lists_them():
    """onepass.engine.frames.family_of (every family a scene process asks for) lists a mobject's family
    as manim's Mobject.get_family does: the same members in the same order, with a member shared
    by two groups, a group holding itself and one holding its own ancestor."""
    from manim import Circle, Square, VGroup

    from manim import Mobject

    from onepass.engine.frames import _MANIMS_FAMILY, _MANIMS_WITH_POINTS, family_of, members_with_points
    grid = NumberGrid(np.random.default_rng(2).normal(0, 1.5, (3, 4)), vmax=3.0)
    shared = Circle()
    twice = VGroup(VGroup(shared, Square()), VGroup(Square(), shared), shared)
    looped = VGroup(Square(), Circle())
    looped.submobjects.append(looped)
    outer = VGroup(Circle())
    inner = VGroup(Square(), outer)
    outer.submobjects.append(inner)
    meter = FlopsMeter(0, "", widest=10 ** 9, title="Σ FLOPs")
    for mobject in (grid, twice, looped, outer, inner, meter, Square()):
        assert family_of(mobject) == _MANIMS_FAMILY(mobject), f"{type(mobject).__name__}: another family"
        # members_with_points (faster_manim's family_members_with_points): manim's, over family_of
        with mock.patch.object(Mobject, "get_family", family_of):
            assert members_with_points(mobject) == _MANIMS_WITH_POINTS(mobject)
    assert len(family_of(twice)) == len(set(family_of(twice))) < len([*_gather_all(twice)])


def _gather_all(mobject):
    yield mobject
    for sub in mobject.submobjects:
        yield from _gather_all(sub)


def _identical(ours, theirs) -> bool:
    """The same value bit for bit: type, dtype, shape, every number (a NaN where a NaN is, the sign
    of every zero)."""
    if type(ours) is not type(theirs):
        return False
    if isinstance(theirs, np.ndarray):
        return (ours.dtype == theirs.dtype and ours.shape == theirs.shape and np.array_equal(ours, theirs, equal_nan=True)
                and np.array_equal(np.signbit(ours), np.signbit(theirs)))
    if isinstance(theirs, (float, np.floating)):
        return (ours == theirs or (ours != ours and theirs != theirs)) and np.signbit(ours) == np.signbit(theirs)
    return ours == theirs


def _measured_shapes() -> list:
    """Shapes as the film measures them, and the odd ones: a flat line (zero height at 0 and not),
    a lone point, no points, -0.0 along an axis (an edge at 0 with both zeros), a NaN, a group of
    groups with a shared member, a Group holding a picture, a Text, the meter, a grid."""
    from manim import Circle, Dot, Group, ImageMobject, Line, Square, Text, VGroup, VMobject
    from onepass.scenes import text as TX

    rng = np.random.default_rng(3)
    zeros = Square(2.0).shift([1.0, 1.0, 0.0])
    zeros.points[::3, 0] = -0.0                                # the left edge at -0.0 and 0.0
    zeros.points[::2, 2] = -0.0                                # z: -0.0 here, 0.0 there
    nan = Square().set_points(np.array([[0.0, 1.0, 0.0], [np.nan, 2.0, 0.0], [1.0, 0.5, 0.0], [2.0, 3.0, 0.0]]))
    shared = Circle(0.3).shift(UP)
    label = TX.compact_text(TX.Text("q·kᵀ / √64 = −1.57", font=S.MONO))
    grid = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0)
    picture = ImageMobject(rng.integers(0, 256, (4, 6, 4), dtype=np.uint8)).shift(DOWN)
    return [Square(), Circle().shift([2.0, -1.0, 0.0]), Line([-1.0, 0.0, 0.0], [2.0, 0.0, 0.0]),
            Line([-1.0, 0.5, 0.0], [2.0, 0.5, 0.0]), Dot(), VMobject().set_points(np.array([[1.0, -2.0, 0.0]])),
            VMobject(), VGroup(), zeros, nan, VGroup(VGroup(shared, Square(0.5)), VGroup(shared, label), Dot()),
            Group(Square(), picture), Text("mixing", font_size=30).shift([-2.0, 1.0, 0.0]),
            label, grid, FlopsMeter(12345, "", widest=10 ** 9, title="Σ FLOPs")]


def test_sizes_and_boxes_are_measured_as_manim_measures_them():
    """faster_manim()'s measures give manim's numbers bit for bit (the same type, every zero's sign):
    length_over_dim (every width and height), critical_point (every move_to, next_to, align_to,
    get_center) and merged_array (a group's points) for shapes of every kind the film measures and
    the odd ones (a NaN, an axis at 0 holding both 0.0 and -0.0, no points: length_over_dim leaves
    those to manim's own); a childless mobject's merged points are its own array, as manim's."""
    from manim import DL, DOWN as D, LEFT, ORIGIN, RIGHT, UR, Group

    from onepass.engine.frames import (
        _MANIMS_CRITICAL, _MANIMS_LENGTH, _MANIMS_MERGED, critical_point, faster_manim, length_over_dim, merged_array,
    )
    shapes = _measured_shapes()
    with faster_manim():        # (the boundaries measured as a scene measures them)
        for shape in [*shapes, Group(*shapes[:-3])]:
            for dim in (0, 1, 2):
                ours, theirs = length_over_dim(shape, dim), _MANIMS_LENGTH(shape, dim)
                assert _identical(ours, theirs), (type(shape).__name__, dim, ours, theirs)
            for direction in (ORIGIN, UP, D, LEFT, RIGHT, UR, DL, np.array([0.0, -0.0, 1.0])):
                ours, theirs = critical_point(shape, direction), _MANIMS_CRITICAL(shape, direction)
                assert _identical(ours, theirs), (type(shape).__name__, direction, ours, theirs)
            ours, theirs = merged_array(shape, "points"), _MANIMS_MERGED(shape, "points")
            assert _identical(ours, theirs), type(shape).__name__
            assert (ours is shape.points) == (not shape.submobjects) == (theirs is shape.points)


def test_a_scenes_members_are_listed_as_manim_lists_them():
    """scene_family_members (Scene.get_mobject_family_members while a scene renders or runs dry:
    every play, introducing animation and wait) lists what manim's extract_mobject_family_members
    lists for the scene: a member shared by two groups at its last place, a group holding its own
    ancestor, z_index order with ties kept in place, the same scene with z_index unused."""
    from manim import Circle, Square, VGroup
    from manim.utils.family import extract_mobject_family_members

    from onepass.engine.frames import faster_manim, scene_family_members
    shared = Circle()
    outer = VGroup(Circle())
    inner = VGroup(Square(), outer)
    outer.submobjects.append(inner)
    raised = Square().set_z_index(2)
    grid = NumberGrid(np.random.default_rng(2).normal(0, 1.5, (3, 4)), vmax=3.0)
    grid.cells[(1, 1)].set_z_index(1)
    scene = Scene()
    scene.add(VGroup(shared, Square()), raised, grid, outer, Square().set_z_index(-1), VGroup(Square(), shared))
    with faster_manim():
        for use_z_index in (True, False):
            scene.renderer.camera.use_z_index = use_z_index
            theirs = extract_mobject_family_members(scene.mobjects, use_z_index=use_z_index)
            ours = scene_family_members(scene)
            assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs))


class Measured(Scene):
    """A picture laid out by measuring it, as the film lays out its pictures: words arranged, placed
    next to and inside each other, fitted to widths, boxed, centred, lines of zero height, a shape
    with -0.0 along an axis; played (faded, moved, transformed, boxed and unboxed)."""

    def construct(self):
        from manim import DOWN as D, LEFT, RIGHT, Line, Square, SurroundingRectangle, Text, Transform, VGroup

        words = VGroup(*[Text(w, font_size=24) for w in ("queries", "keys", "values")]).arrange(RIGHT, buff=0.4)
        words.scale_to_fit_width(5.0).to_edge(UP)
        grid = NumberGrid(np.random.default_rng(4).normal(0, 1.5, (3, 4)), vmax=3.0).next_to(words, D, buff=0.3)
        rule = Line(LEFT, RIGHT).match_width(grid).next_to(grid, D, buff=0.2)
        flipped = Square(1.2).flip().next_to(rule, D).align_to(grid, LEFT)
        self.play(FadeIn(words), FadeIn(grid, shift=UP * 0.2), run_time=0.4)
        self.add(rule, flipped)
        box = SurroundingRectangle(VGroup(words, grid), buff=0.15, corner_radius=0.1)
        self.play(FadeIn(box), grid.animate.scale(0.8).move_to(rule.get_center() + UP), run_time=0.4)
        self.play(Transform(flipped, Square(0.6).next_to(box, RIGHT)), FadeOut(box), run_time=0.4)
        self.play(words.animate.arrange(D, buff=0.1).next_to(grid, LEFT), run_time=0.4)


def test_a_scene_measured_the_faster_way_ends_where_manims_measures_put_it():
    """A dry run with faster_manim()'s measures (widths, heights, boxes, groups' points, a scene's
    members) ends, play after play, with every point and colour where manim's own measures put them
    (the rest of faster_manim() the same in both runs). Checked to fail: with critical_point's
    middle or length_over_dim's length off by one part in 10^15, the first play ends elsewhere."""
    from onepass.engine import frames
    from onepass.engine.dry_run import dry_run
    manims = {"length_over_dim": frames._MANIMS_LENGTH, "critical_point": frames._MANIMS_CRITICAL,
              "merged_array": frames._MANIMS_MERGED, "scene_family_members": frames._MANIMS_SCENE_FAMILY}

    def ends(measures: dict) -> list:
        seen, play = [], Scene.play

        def recorded(self, *args, **kwargs):
            out = play(self, *args, **kwargs)
            seen.append(_end_state(self))
            return out
        with contextlib.ExitStack() as stack:
            for name, method in measures.items():
                stack.enter_context(mock.patch.object(frames, name, method))
            stack.enter_context(dry_run())
            stack.enter_context(mock.patch.object(Scene, "play", recorded))
            Measured().render()
        return seen
    ours, theirs = ends({}), ends(manims)
    assert len(ours) == len(theirs) == 4
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert _same(a, b), f"play {k} ends elsewhere"



def _same_graph(a, b, original: set, pairs: dict, path: str = "copy") -> None:
    """`a` (manim's copy) and `b` (engine/copies.py's) are the same object graph: same classes,
    equal values, arrays of the same dtype, shape, strides and numbers, the same values shared
    within the copy, and the same values shared with the original (`original`: its objects' ids)."""
    if id(a) in pairs:
        assert pairs[id(a)] is b, f"{path}: shared in manim's copy, not in ours"
        return
    pairs[id(a)] = b
    assert type(a) is type(b), f"{path}: {type(a).__name__} in manim's copy, {type(b).__name__} in ours"
    assert (id(a) in original) == (id(b) in original), f"{path}: shared with the original in one copy only"
    if id(a) in original:
        assert a is b, f"{path}: manim's copy shares another object with the original"
    elif isinstance(a, np.ndarray):
        assert (a.dtype, a.shape, a.strides) == (b.dtype, b.shape, b.strides), path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), path
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same_graph(x, y, original, pairs, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _same_graph(a[k], b[k], original, pairs, f"{path}.{k}")
    elif isinstance(a, types.MethodType):                     # bound to the copy, in both
        assert a.__func__ is b.__func__, path
        _same_graph(a.__self__, b.__self__, original, pairs, f"{path}.__self__")
    elif hasattr(a, "__dict__") and not isinstance(a, type) and not callable(a):
        _same_graph(a.__dict__, b.__dict__, original, pairs, path)
    else:
        assert a is b or a == b, f"{path}: {a!r} in manim's copy, {b!r} in ours"


def _objects_of(x, found: dict) -> dict:
    if id(x) not in found:
        found[id(x)] = x
        items = (x if isinstance(x, (list, tuple)) else [*x.keys(), *x.values()] if isinstance(x, dict)
                 else [x.__self__] if isinstance(x, types.MethodType)
                 else [x.__dict__] if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x) else [])
        for item in items:
            _objects_of(item, found)
    return found


def test_mobjects_are_copied_as_manim_copies_them():
    """engine/copies.py (Mobject.__deepcopy__ while a scene renders or runs dry) makes the copy
    manim's own Mobject.__deepcopy__ makes: points, colours (ManimColor), submobjects (a shared one
    still shared, a group holding itself), a Text's glyphs, updaters kept as manim keeps them (a
    function the same function, a bound method bound to the copy), numbers, strings, tuples,
    enums, numpy numbers, paths; and a copy changed in any way leaves the original as it was."""
    import copy
    from manim import Circle, ManimColor, Mobject, Square, Text, VGroup

    from onepass.engine.copies import deep_copy, faster_copies, mobject_deepcopy
    manims = Mobject.__deepcopy__
    shared = Circle(color=S.KEY, fill_opacity=0.4)
    square = Square(1.5).set_fill(S.QUERY, 0.6).set_stroke(S.INK, 3, background=True)
    square.add_updater(lambda m, dt: m.shift(UP * dt))
    square.add_updater(square.shift)                                 # a bound method: bound to the copy
    square.notes = {"n": np.float64(2.5), "k": (1, "a", (2.0, None)), "path": Path("/x"), "c": ManimColor("#123456"),
                    "alias": square.points, "list": [shared, shared],
                    "columns": np.asfortranarray(np.arange(6.0).reshape(2, 3)), "view": square.points[::2, :2]}
    group = VGroup(VGroup(shared, square), Text("−1.57 ab", font=S.MONO), shared)
    group.submobjects[0].submobjects.append(group.submobjects[0])
    grid = NumberGrid(np.random.default_rng(2).normal(0, 1.5, (3, 4)), vmax=3.0)
    for original in (group, grid, FlopsMeter(0, "", widest=10 ** 9, title="Σ FLOPs"), Square()):
        assert Mobject.__deepcopy__ is manims
        theirs = copy.deepcopy(original)
        with faster_copies():
            assert Mobject.__deepcopy__ is mobject_deepcopy
            ours = original.copy()
            also = deep_copy({"m": original}, {})["m"]
        assert Mobject.__deepcopy__ is manims
        for made in (ours, also):
            _same_graph(theirs, made, set(_objects_of(original, {})), {})
            assert made.original_id == theirs.original_id == str(id(original))
            assert all(np.array_equal(m.points, t.points) for m, t in zip(made.get_family(), theirs.get_family()))
    ours = _copied_with(faster_copies, group)
    copied = ours.submobjects[0].submobjects[1]
    assert [u.__self__ for u in copied.updaters if hasattr(u, "__self__")] == [copied]
    assert copied.updaters[0] is square.updaters[0] and copied.notes["alias"] is copied.points
    assert ours.submobjects[2] is ours.submobjects[0].submobjects[0] is copied.notes["list"][1]
    # a copy changed every way: the original keeps its points, colours, children and notes
    before = _look(group)
    copied.shift(UP).set_fill(S.KEY, 0.1).set_stroke(S.INK, 9)
    copied.notes["c"]._internal_value[:] = 0.5            # a ManimColor changed in place (manim does so)
    copied.notes["list"].append(Square())
    copied.points[0, 0] = 99.0
    ours.submobjects[1].submobjects[0].points[:] = 0.0
    ours.submobjects[0].submobjects.pop()
    assert _look(group) == before and _look(ours) != before


def _look(group) -> list:
    """What a mobject shows, member by member (and the square's notes above)."""
    seen = []
    for m in group.get_family():
        notes = getattr(m, "notes", {})
        seen.append((type(m).__name__, m.points.tobytes(), m.fill_rgbas.tobytes(), m.stroke_rgbas.tobytes(),
                     m.background_stroke_rgbas.tobytes(), m.stroke_width, len(m.submobjects),
                     notes and (notes["c"].to_hex(), len(notes["list"]), notes["alias"].tobytes())))
    return seen


def _copied_with(patch, mobject):
    with patch():
        return mobject.copy()

class Pictures(Scene):
    """Images as the film shows them (chapters 01 and 03: heatmaps): fading in, sliding partly off
    the frame, scaled, turned, over a still square."""

    def construct(self):
        from manim import LEFT, RIGHT, ImageMobject, Square

        rng = np.random.default_rng(6)
        pixels = rng.integers(0, 256, (6, 10, 4), dtype=np.uint8)
        pixels[..., 3] = rng.integers(0, 256, (6, 10))              # some of it see-through
        heatmap = ImageMobject(pixels).set_resampling_algorithm(0).scale_to_fit_width(4.0)
        self.add(Square(2.0, color=S.KEY, fill_opacity=0.7))
        self.play(FadeIn(heatmap), run_time=0.4)
        self.play(heatmap.animate.shift(LEFT * 6.5 + UP * 2.5), run_time=0.5)
        self.play(heatmap.animate.scale(0.4).shift(RIGHT * 7).rotate(0.3), run_time=0.5)


def test_images_are_composited_as_manim_composites_them(tmp_path):
    """FilmCamera composites an image mobject over only the part of the frame it covers: every
    picture is manim's own, pixel for pixel."""
    ours, stock = [], []

    pictures(FilmRenderer, tmp_path / "ours", ours, Pictures)
    pictures(CairoRenderer, tmp_path / "stock", stock, Pictures)
    assert len(ours) == len(stock) > 15
    for k, (a, b) in enumerate(zip(ours, stock)):
        assert np.array_equal(a, b), f"picture {k}: {np.count_nonzero((a != b).any(axis=2))} pixels differ"


# ---------------------------------------------------------------------------------------
# The contract: each internal engine/ relies on, as the supported versions have it (engine/__init__.py)

def test_the_segment_encoder_internals_engine_relies_on(tmp_path):
    """onepass.engine.frames.SegmentEncoder reads and writes VideoSegmentEncoder's _container, _stream,
    _next_pts, _closed and calls _operation_error; re-opens it through its __init__(target=, spec=);
    replaces a VideoEncoderSpec's options with dataclasses.replace."""
    import dataclasses
    import functools

    from manim._config.video_encoder import VideoEncoderSpec
    from manim.scene.video_segment_encoder import VideoSegmentEncoder

    from onepass.film.frames import holds
    assert [f.name for f in dataclasses.fields(VideoEncoderSpec)][:7] == [
        "container_format", "codec", "pixel_format", "width", "height", "frame_rate", "options"]
    spec = VideoEncoderSpec("mp4", "libx264", "yuv420p", 64, 48, __import__("fractions").Fraction(15),
                            tuple(ENCODER_OPTIONS.items()))
    plain = VideoSegmentEncoder(target=tmp_path / "plain.mp4", spec=spec)
    assert plain._next_pts == 0 and plain._closed is False
    assert plain._stream.codec_context.name == "libx264" and plain._container.streams.video[0] is plain._stream
    error = plain._operation_error("encode", ValueError("x"))
    assert isinstance(error, Exception) and "encode" in str(error)
    plain.write_frame(np.zeros((48, 64, 4), np.uint8), repeat=2)       # manim's: RGBA pixels
    frame = rgba_to_i420(np.zeros((48, 64, 4), np.uint8))                # ours: frames already converted
    assert plain._next_pts == 2
    plain.finish()
    assert plain._closed is True
    ours = SegmentEncoder(target=tmp_path / "ours.mp4", spec=spec,
                          packet_hash=functools.partial(media.packet_hash, annexb=True), hold_copies=holds.hold_copies)
    ours.write_frame(frame, repeat=HOLD_MIN_FRAMES + 2)        # a hold: the container re-opened by manim's __init__
    ours.finish()
    assert ours._closed is True and ours.hashes == media.packet_hashes(tmp_path / "ours.mp4")
    assert len(framemd5(tmp_path / "ours.mp4")) == HOLD_MIN_FRAMES + 2


class Tiny(Scene):
    def construct(self):
        from manim import Square
        square = Square(1.0, color=S.KEY, fill_opacity=0.5)
        self.play(FadeIn(square), run_time=0.2)
        self.wait(0.3)
        self.play(square.animate.shift(UP), run_time=0.2)


def test_the_file_writer_and_renderer_internals_engine_relies_on(tmp_path):
    """FilmFileWriter overrides SceneFileWriter._create_segment_encoder (manim makes every segment's
    encoder through it) and reads _current_encode_job in write_frame (set while a segment is open);
    FilmRenderer's update_frame reads CairoRenderer's static_image and camera; FilmCamera's layer
    reads Camera.pixel_array_to_cairo_context, get_mobjects_to_display and display_vectorized."""
    from manim import Camera, SceneFileWriter

    from onepass.engine.frames import FilmFileWriter
    assert callable(SceneFileWriter._create_segment_encoder)
    seen = []

    class Watching(FilmFileWriter):
        def write_frame(self, pixels, *, repeat: int = 1):
            seen.append(self._current_encode_job is not None)
            return super().write_frame(pixels, repeat=repeat)

    class WatchingRenderer(FilmRenderer):
        def init_scene(self, scene, session_spec, file_writer_settings):
            super().init_scene(scene, session_spec, file_writer_settings)
            assert type(self.file_writer) is FilmFileWriter
            self.file_writer.__class__ = Watching
            assert hasattr(self, "static_image") and isinstance(self.camera, Camera)

    times = FrameTimes()
    movie = render(lambda: film_renderer(times, WatchingRenderer), tmp_path, scene_class=Tiny)
    writer_segments = [p for p in movie.parent.rglob("*.mp4") if p != movie]
    assert seen and all(seen), "frames written while no segment was open: manim's file writer changed"
    assert times.converted > 0 and times.frames == len(framemd5(movie)) == 15 * 7 // 10
    assert writer_segments is not None
    camera = Camera()
    assert isinstance(camera.pixel_array_to_cairo_context, dict)
    assert callable(camera.get_mobjects_to_display) and callable(camera.display_vectorized)
    assert camera.cairo_line_width_multiple > 0


def test_what_display_vectorized_reads_is_what_the_layer_compares():
    """onepass.engine.still_layer.look_of restates what Camera.display_vectorized reads of a shape: two shapes
    with equal looks draw equal pixels, and changing any of those looks changes the look."""
    from manim import Camera, Square

    from onepass.engine.still_layer import look_of
    a, b = Square(1.0, color=S.KEY, fill_opacity=0.5), Square(1.0, color=S.KEY, fill_opacity=0.5)
    assert look_of(a) == look_of(b)

    def drawn(shape):
        camera = Camera()
        camera.display_vectorized(shape, camera.get_cairo_context(camera.pixel_array))
        return camera.pixel_array.copy()
    assert np.array_equal(drawn(a), drawn(b))
    for change in (lambda m: m.shift(UP * 0.1), lambda m: m.set_fill(opacity=0.4), lambda m: m.set_stroke(width=2),
                   lambda m: m.set_stroke(color=S.TOKEN), lambda m: m.set_stroke(width=3, background=True),
                   lambda m: setattr(m, "joint_type", "bevel"), lambda m: setattr(m, "cap_style", "round")):
        c = Square(1.0, color=S.KEY, fill_opacity=0.5)
        change(c)
        assert look_of(c) != look_of(a)
    for name in ("joint_type", "cap_style", "tolerance_for_point_equality", "background_image"):
        assert hasattr(a, name), f"VMobject has no {name}: display_vectorized reads something else now"


def test_the_patched_methods_are_manims_and_come_back():
    """faster_manim() replaces VMobject.get_subpaths_from_points, Mobject.get_family and
    Mobject.__deepcopy__ while a scene renders or runs dry and puts manim's own back after it (and
    after an error)."""
    from manim import Mobject, VMobject

    from onepass.engine.frames import (
        _MANIMS_BOUNDARY, _MANIMS_FAMILY, _MANIMS_SUBPATHS, _MANIMS_WITH_POINTS, faster_manim, family_of,
        members_with_points, points_defining_boundary, subpaths_from_points,
    )
    from onepass.engine.copies import mobject_deepcopy
    from onepass.engine.unseen import transform_interpolate_mobject
    from onepass.engine.dry_run import dry_run
    manims_copy = Mobject.__deepcopy__
    assert VMobject.get_subpaths_from_points is _MANIMS_SUBPATHS and Mobject.get_family is _MANIMS_FAMILY
    with pytest.raises(RuntimeError), faster_manim():
        assert VMobject.get_subpaths_from_points is subpaths_from_points and Mobject.get_family is family_of
        assert Mobject.__deepcopy__ is mobject_deepcopy
        assert Transform.interpolate_mobject is transform_interpolate_mobject
        assert Mobject.family_members_with_points is members_with_points
        with faster_manim():                   # inside another (a render that dry-runs): the same
            pass
        assert Mobject.get_family is family_of and Mobject.__deepcopy__ is mobject_deepcopy
        assert Transform.interpolate_mobject is transform_interpolate_mobject
        raise RuntimeError
    assert "interpolate_mobject" not in vars(Transform) and Mobject.family_members_with_points is _MANIMS_WITH_POINTS
    assert VMobject.get_subpaths_from_points is _MANIMS_SUBPATHS and Mobject.get_family is _MANIMS_FAMILY
    assert Mobject.__deepcopy__ is manims_copy
    with dry_run():                            # a dry run runs what a render runs
        assert Mobject.get_family is family_of and Mobject.__deepcopy__ is mobject_deepcopy
        assert VMobject.get_points_defining_boundary is points_defining_boundary
    with dry_run(faster=False):
        assert Mobject.get_family is _MANIMS_FAMILY and Mobject.__deepcopy__ is manims_copy
    assert Mobject.get_family is _MANIMS_FAMILY and Mobject.__deepcopy__ is manims_copy
    assert VMobject.get_points_defining_boundary is _MANIMS_BOUNDARY
    from manim import SVGMobject

    from onepass.engine.glyphs import glyph_svg_mobject
    with dry_run():
        assert SVGMobject.generate_mobject is glyph_svg_mobject
    assert SVGMobject.generate_mobject is not glyph_svg_mobject
    from onepass.engine import frames
    measures = {(Mobject, "length_over_dim"): (frames._MANIMS_LENGTH, frames.length_over_dim),
                (Mobject, "get_critical_point"): (frames._MANIMS_CRITICAL, frames.critical_point),
                (Mobject, "get_merged_array"): (frames._MANIMS_MERGED, frames.merged_array),
                (Scene, "get_mobject_family_members"): (frames._MANIMS_SCENE_FAMILY, frames.scene_family_members)}
    with faster_manim():
        assert all(getattr(cls, name) is ours for (cls, name), (_, ours) in measures.items())
    assert all(getattr(cls, name) is manims for (cls, name), (manims, _) in measures.items())


def test_a_dry_run_gives_manims_config_back_as_tempconfig_does():
    """dry_run()'s settings come and go as tempconfig's do: every config value back after it, and
    the classes ConvertToOpenGL made keep their bases and their list (set aside only while an
    unchanged renderer is restored); a renderer changed inside is put back, bases and all. A skipped
    play's frame is the camera's own pixels (add_frame drops it), a frame asked for otherwise a copy."""
    from manim import RendererType, config
    from manim.mobject.opengl.opengl_compatibility import ConvertToOpenGL

    from onepass.engine.dry_run import dry_run
    converted = ConvertToOpenGL._converted_classes
    bases = [cls.__bases__ for cls in converted]
    before = {key: config[key] for key in config}
    with dry_run(frame_rate=7):
        assert config.frame_rate == 7 and config.dry_run
        scene = Tiny()
        scene.renderer.skip_animations = True
        assert scene.renderer.get_frame() is scene.renderer.camera.pixel_array
        scene.renderer.skip_animations = False
        assert scene.renderer.get_frame() is not scene.renderer.camera.pixel_array
    assert {key: config[key] for key in config} == before
    assert ConvertToOpenGL._converted_classes is converted and [cls.__bases__ for cls in converted] == bases
    with dry_run():
        config.renderer = "opengl"
        assert converted[0].__bases__ != bases[0]
    assert config.renderer == RendererType.CAIRO and [cls.__bases__ for cls in converted] == bases
    assert ConvertToOpenGL._converted_classes is converted


class EveryKindOfPlay(Scene):
    """Plays a quick dry run takes the short way and plays it must leave to manim: fades in and out
    (shifted, scaled), a transform between shapes of different point counts, a lagged linear
    transform (its parts end past alpha 1 unless the rate clamps), an Indicate's there-and-back
    (ends on its start), a replacement, a cross-fade of words, the meter counting, and a mobject faded
    out and in again (FadeOut puts it back as it started once it has left)."""

    def construct(self):
        from manim import LEFT, RIGHT, Circle, Indicate, ReplacementTransform, Square, Text, VGroup, linear

        from onepass.engine.animation import CrossFade
        rng = np.random.default_rng(5)
        meter = FlopsMeter(0, "", widest=10 ** 6, title="Σ").to_corner(UP + S.END, buff=S.MARGIN)
        grid = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0)
        self.play(FadeIn(grid, shift=UP * 0.3, scale=0.8), FadeIn(meter), run_time=0.4)
        after = NumberGrid(rng.normal(0, 1.5, (3, 4)), vmax=3.0).shift(DOWN)
        self.play(Transform(grid, after, lag_ratio=0.3, rate_func=linear), run_time=0.5)
        shape = Square().shift(UP * 2)
        self.add(shape)
        self.play(Transform(shape, Circle(radius=0.4)), Indicate(grid.cells[(0, 0)]), run_time=0.5)
        words = Text("before", font_size=24).shift(LEFT * 3)
        self.add(words)
        self.play(CrossFade(words, Text("after all", font_size=24).shift(LEFT * 3)),
                  ReplacementTransform(shape, VGroup(Square(0.3), Square(0.2)).shift(RIGHT * 3)), run_time=0.5)
        self.play(CountTo(meter.counter, 654_321), FadeOut(grid, shift=DOWN), run_time=0.4)
        self.play(FadeIn(grid), run_time=0.3)          # back as it was before it left (FadeOut restores it)


def _end_state(scene) -> list:
    """Every mobject on screen, family by family: its class, points and colours (what is drawn)."""
    return [(type(m).__name__, m.points.copy(), *(np.array(getattr(m, a, 0), copy=True) for a in
             ("fill_rgbas", "stroke_rgbas", "stroke_width", "background_stroke_rgbas")))
            for top in scene.mobjects for m in top.get_family()]


def _same(one: list, other: list) -> bool:
    return len(one) == len(other) and all(a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:]))
                                          for a, b in zip(one, other))


def test_a_quick_dry_run_ends_every_play_where_manims_own_play_ends(tiny_bundle):
    """engine/dry_run.py quick_plays(): a skipped play without a Transform's starting copy or the
    moving/static split leaves every point and colour bit for bit where manim's own skipped play
    does, and the same scene time, for every kind of play the film uses (a synthetic scene) and for
    two chapter scenes full of them; the short way is taken (starting copies saved)."""
    from onepass.engine import dry_run as D
    from onepass.scenes.base import SceneInputs
    from onepass.scenes.registry import scenes_of

    def run(make, quick):
        with D.dry_run(quick=quick):
            scene = make()
            scene.render()
        return _end_state(scene), scene.renderer.time
    makers = [EveryKindOfPlay] + [
        (lambda cls=cls: cls(SceneInputs(Path(tiny_bundle.path)))) for chapter, name in (("02", "Projections"), ("04", "Pick"))
        for cls in scenes_of(chapter) if cls.__name__ == name]
    assert len(makers) == 3
    for make in makers:
        (manims, manims_time), (quick, quick_time) = run(make, False), run(make, True)
        assert manims_time == quick_time and _same(manims, quick), make
    # the short way is taken where it may be and not where it may not
    shortcuts = []
    original = D.quick_begin

    def counted(animation):
        original(animation)
        shortcuts.append((type(animation).__name__, (animation.starting_mobject is animation.target_copy,
                                                     animation.target_copy is animation.target_mobject)))
    with D.dry_run(), mock.patch.object(Transform, "begin", counted):
        EveryKindOfPlay().render()
    taken = dict(shortcuts)
    # (no starting copy, no target copy); a FadeOut makes neither: it ends as it began, off the scene
    assert taken["FadeIn"] == (True, True) and taken["FadeOut"] == (True, True)
    assert taken["Indicate"] == (False, False) and taken["ReplacementTransform"] == (True, False)


def test_the_text_internals_engine_relies_on():
    """A Text keeps its glyphs as submobjects, its string as original_text (text without spaces,
    initial_height), chars, the parse's id_to_vgroup_dict, svg_default and path_string_config, and
    each glyph its path_obj: onepass.engine.text drops those, merges the glyphs and composes numbers."""
    from manim import Text

    from onepass.engine import text as ET
    t = Text("−1.57 ab", font=S.MONO)
    for name in ET.PARSE_ONLY:
        assert name in t.__dict__, f"Text keeps no {name}"
    assert t.original_text == "−1.57 ab" and t.text == "−1.57ab" and t.initial_height > 0
    assert len(t.chars) == len(t.submobjects) == 7 and ET.glyphs_of(t) == t.submobjects
    assert any(getattr(g, "path_obj", None) is not None for g in t.get_family())
    ET.light(t)
    assert all(getattr(g, "path_obj", None) is None for g in t.get_family())
    points = np.concatenate([g.points for g in t.submobjects])
    ET.compact_text(t)
    assert len(t.submobjects) == 1 and np.array_equal(t.submobjects[0].points, points)
    assert all(not getattr(t, name) for name in ET.PARSE_ONLY)
    made = ET.composed(t, points + 1.0, "x y", S.INK, "xy")
    assert ET.string_of(made) == "x y" and made.text == "xy" and made.initial_height == made.height
    assert np.allclose(made.get_center(), 0)


def test_indication_is_manims_indicate_with_its_target_made_by_one_method():
    """onepass.engine.animation.Indication reads Indicate's scale_factor and color: with nothing overridden it
    is manim's Indicate, point for point and colour for colour."""
    from manim import Indicate, Square

    from onepass.engine.animation import Indication
    for cls in (Indicate, Indication):
        assert cls(Square(), scale_factor=1.3, color=S.WARNING).scale_factor == 1.3
    theirs = Indicate(Square().shift(UP), scale_factor=1.3, color=S.WARNING).create_target()
    ours = Indication(Square().shift(UP), scale_factor=1.3, color=S.WARNING).create_target()
    assert np.array_equal(ours.points, theirs.points) and np.array_equal(ours.get_fill_rgbas(), theirs.get_fill_rgbas())


def test_the_plugin_prompts_can_never_read_stdin(monkeypatch):
    """manim-voiceover's three prompting helpers (and a module's `input`) are replaced in every module
    of it that is loaded, once a network voice's class is loaded through onepass.engine.voiceover_plugin."""
    import builtins

    from onepass.engine import voiceover_plugin as plugin
    plugin.service_class("gtts")
    import manim_voiceover.helper as helper
    import manim_voiceover.services.base as base
    monkeypatch.setattr(builtins, "input", lambda *a: pytest.fail("input() was called"))
    with pytest.raises(plugin.NoQuestions, match="pip install"):
        helper.prompt_ask_missing_extras("no_such_module_onepass", "azure", "AzureService")
    with pytest.raises(plugin.NoQuestions):
        helper.create_dotenv_file(["OPENAI_API_KEY"])
    with pytest.raises(plugin.NoQuestions):
        helper.prompt_ask_missing_package("no_such_module_onepass", "nothing")
    assert base.prompt_ask_missing_extras is plugin._no_extras
    from manim_voiceover.services.gtts import GTTSService
    assert plugin.service_class("gtts") is GTTSService


def test_a_narrated_scene_keeps_manim_voiceovers_time(tmp_path, monkeypatch):
    """onepass.engine.narration.NarratedScene times a line as manim-voiceover's VoiceoverScene did (the scene
    this film was first cut with): the same clip start and end, the same scene time after each block
    (a short block waits for the clip, a long one does not)."""
    from manim import Wait
    from manim_voiceover import VoiceoverScene

    from onepass.engine.dry_run import dry_run
    from onepass.engine.narration import NarratedScene
    from onepass.voiceover import services
    monkeypatch.setenv(services.CACHE_ENV, str(tmp_path / "voices"))
    service = services.make_service("none")

    class Adapter:               # what VoiceoverScene read of a service
        cache_dir = service.cache_dir

        def _wrap_generate_from_text(self, text, **kwargs):
            return service.generate_from_text(" ".join(text.split()), **kwargs)

    lines = ["One short line.", "A longer line, with two sentences in it. The second one.", "End."]

    def script(scene, set_service):
        set_service()
        out = []
        for k, line in enumerate(lines):
            with scene.voiceover(text=line) as tracker:
                scene.play(Wait(0.3 if k != 1 else 9.0))
            out.append((tracker.start_t, tracker.end_t, tracker.duration, scene.time))
        return out

    results = {}

    class Ours(NarratedScene):
        def construct(self):
            results["ours"] = script(self, lambda: self.set_speech_service(service))

    class Theirs(VoiceoverScene):
        def construct(self):
            results["theirs"] = script(self, lambda: self.set_speech_service(Adapter(), create_subcaption=False))

    with dry_run(tmp_path / "media", draw=True):
        for cls in (Ours, Theirs):
            cls().render()
    assert results["ours"] == results["theirs"]
    assert results["ours"][1][3] > results["ours"][1][1]          # the long block ran past its clip


GLYPH_CASES = [("The cat sat on the", {}), ("−1.57 0.25", {"font": S.MONO}), ("Hi 0.25 ab", {"t2c": {"0.25": "#FF0000"}}),
               ("two\nlines", {}), ("بلی بیٹھی \u2066768\u2069 کی", {"font": S.RTL_FACE}), ("naïve ✓ → Σ 😀 漢字", {}),
               ("bold", {"weight": "BOLD"}), (" ", {})]


@pytest.mark.parametrize("text,kw", GLYPH_CASES, ids=range(len(GLYPH_CASES)))
def test_a_text_read_glyph_by_glyph_is_the_text_manim_parses(text, kw):
    """engine/glyphs.py (faster_manim's Text): the same glyphs, in the same order, with the same fills
    and strokes, at the same points (to rounding) as manim's parse of the whole SVG, in every script the
    film writes (Latin, numbers in the mono face, a coloured run, two lines, Urdu, symbols, emoji, CJK,
    bold, a space), and with no fallback to the whole parse on the way."""
    from manim import SVGMobject, Text

    from onepass.engine import glyphs
    whole = []
    manims = Text(text, **kw)
    with mock.patch.object(SVGMobject, "generate_mobject",
                           lambda self: glyphs.glyph_svg_mobject(self, parse_whole=lambda m: whole.append(m))):
        placed = Text(text, **kw)
    assert whole == []
    a, b = manims.family_members_with_points(), placed.family_members_with_points()
    assert len(a) == len(b) and placed.original_text == manims.original_text
    for x, y in zip(a, b):
        assert x.points.shape == y.points.shape and np.allclose(x.points, y.points, rtol=0, atol=1e-9)
        assert np.array_equal(x.get_fill_rgbas(), y.get_fill_rgbas())
        assert x.get_stroke_width() == y.get_stroke_width()
    assert np.allclose(manims.get_center(), placed.get_center()) and manims.height == pytest.approx(placed.height)


def test_an_svg_the_glyph_reader_does_not_know_is_parsed_whole():
    """A shape of cairo's SVG other than glyphs placed by uses (here a rectangle) is left to manim's parse."""
    from onepass.engine import glyphs
    svg = ('<svg width="10pt" height="10pt" viewBox="0 0 10 10">\n<defs>\n<g>\n<symbol overflow="visible" id="g0">\n'
           '<path style="stroke:none;" d="M 0 0 L 1 0 L 1 1 Z"/>\n</symbol>\n</g>\n</defs>\n<g id="surface1">\n'
           '<g style="fill:rgb(0%,0%,0%);fill-opacity:1;">\n  <use xlink:href="#g0" x="1" y="2"/>\n</g>\n{}</g>\n</svg>\n')
    assert glyphs._layout(svg.format("")) is not None
    assert glyphs._layout(svg.format('<rect x="0" y="0" width="1" height="1"/>\n')) is None


def test_every_quality_converts_to_the_videos_colours_whole():
    """rgba_to_i420 hands x264 OpenCV's I420 buffer as av's yuv420p frame: av finds the two quarter-size
    colour planes by whole rows of the frame's width, so a height that is not a multiple of 4 reads the
    second plane half a row off (a draft at 480x270 drew every colour shifted under its shape; av even
    reads a 268-row frame from it). Each quality's frame, coloured in bands, comes back in its own colours."""
    from manim.constants import QUALITIES as MANIMS
    from onepass.engine.frames import rgba_to_i420
    from onepass.film.run.media import QUALITIES

    def round_trip_error(width: int, height: int) -> int:
        pixels = np.zeros((height, width, 4), np.uint8)
        pixels[..., 3] = 255
        for band, colour in enumerate([(230, 60, 60), (60, 200, 90), (70, 90, 230), (240, 200, 40)]):
            pixels[band * height // 4:(band + 1) * height // 4, :, :3] = colour
        back = rgba_to_i420(pixels).to_ndarray(format="rgb24").astype(int)
        if back.shape != pixels[..., :3].shape:
            return 255                                    # av made another frame of the buffer
        return int(np.abs(back - pixels[..., :3]).max())
    assert round_trip_error(480, 270) > 40                # the class: colours a row off
    for name, (settings, _) in QUALITIES.items():
        base = MANIMS[settings["quality"]]
        size = settings.get("pixel_width", base["pixel_width"]), settings.get("pixel_height", base["pixel_height"])
        assert size[1] % 4 == 0 and round_trip_error(*size) <= 40, (name, size)


def test_a_scene_stopped_inside_a_segments_seal_still_ends_its_encoder_thread():
    """A SIGTERM unwinds a scene (its fork server died, or its render was stopped) wherever it lands,
    also inside manim's seal() of the open segment: flagged sealed, its end mark not yet queued. manim's
    abort then queued nothing and joined the encoder thread, which waited for the mark for ever (a scene
    process found asleep half an hour after its test). FilmFileWriter's abort ends it."""
    import threading

    from manim.scene.scene_file_writer import _PartialMovieEncodeJob

    from onepass.engine.frames import FilmFileWriter

    class Encoder:
        target, aborted = Path("segment.mp4"), threading.Event()

        def write_frame(self, frame, repeat=1):
            pass

        def finish(self):
            pass

        def abort(self):
            self.aborted.set()
    job = _PartialMovieEncodeJob(animation_index=0, encoder=Encoder(), frame_queue_size=2)
    job._sealed = True                          # stopped between seal()'s two statements
    writer = FilmFileWriter.__new__(FilmFileWriter)     # only what abort reads
    writer._current_encode_job, writer._inflight_encode_jobs, writer._inflight_by_path = job, [], {}
    aborting = threading.Thread(target=writer.abort_encode_jobs, daemon=True)
    aborting.start()
    aborting.join(timeout=10)
    hung = aborting.is_alive()
    job.queue.put((-1, None))                   # never leave the encoder thread waiting, pass or fail
    assert not hung, "the scene waits for its encoder thread for ever"
    assert Encoder.aborted.is_set() and writer._current_encode_job is None
