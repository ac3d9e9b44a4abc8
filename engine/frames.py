"""The scene process's side of manim: its renderer, camera, file writer and segment encoder.

manim's Cairo renderer, camera and file writer, subclassed where manim takes a class
(`Scene(renderer=...)`, `CairoRenderer(camera_class=, file_writer_class=)`), and where manim offers
no extension point, its internals (engine/__init__.py lists them; tests/test_frame_path.py checks
each against the supported versions, engine/versions.py):

* SegmentEncoder: manim's VideoSegmentEncoder fed frames already converted, holds encoded as two
  frames (its `_container`, `_stream`, `_next_pts`, `_closed`, `_operation_error`), the hash of
  every packet it muxes kept;
* FilmFileWriter: SceneFileWriter converting each frame as it is written (its
  `_create_segment_encoder` and `_current_encode_job`);
* FilmCamera: Camera tracing a shape's path only when it changed shape, and drawing still shapes
  once per play (engine/still_layer.py);
* faster_manim(): VMobject.get_subpaths_from_points, Mobject.get_family and Mobject.__deepcopy__
  (engine/copies.py), a scene's members and a mobject's measures (width and height, bounding box,
  merged points) replaced by faster equivalents while a scene renders or runs dry;
* FilmRenderer: CairoRenderer writing through those, drawing the camera's own pixel array.

The film's own parts come in as arguments (FilmRenderer(packet_hash=, hold_copies=)): engine
imports nothing of film/, scenes/ or voiceover/.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import operator
import time
import weakref
from fractions import Fraction
from pathlib import Path
from typing import Callable

import av
import cairo
import cv2
import numpy as np
from PIL import Image
from av.video.reformatter import VideoReformatter
from manim import (TAU, Arc, Camera, CairoRenderer, Mobject, RendererType, Scene, SceneFileWriter, SVGMobject,
                   Transform, VMobject, config)
from manim.mobject.geometry import polygram
from manim.utils.iterables import list_update, remove_list_redundancies
from manim._config.video_encoder import VideoEncoderSpec
from manim.scene.video_segment_encoder import VideoSegmentEncoder

from onepass.engine.copies import faster_copies
from onepass.engine.glyphs import glyph_svg_mobject
from onepass.engine import unseen
from onepass.engine.still_layer import StillLayer
from onepass.engine.unseen import transform_interpolate_mobject

# the colour conversion (RGBA -> the stream's YUV) runs on one thread, as x264 does (engine/encoding.py):
# a converter's own threads would make its output depend on the machine's core count
CONVERT_THREADS = 1
cv2.setNumThreads(CONVERT_THREADS)


def rgba_to_i420(pixels) -> av.VideoFrame:
    """An RGBA frame (H x W x 4, H a multiple of 4, W even) as the yuv420p frame x264 takes: OpenCV's integer
    BT.601 conversion (studio range, as swscale's; luma within one level of it, chroma averaged
    over each 2 x 2 block where swscale filters across blocks), wrapped without a copy. At 1080p it
    costs 2.3-2.6 ms a frame where swscale took 7.9-9.1 in the same run."""
    return av.VideoFrame.from_numpy_buffer(cv2.cvtColor(pixels, cv2.COLOR_RGBA2YUV_I420), format="yuv420p")
# segments (one per play) encoded at once while the scene draws on: manim's default, 1, makes the
# drawing wait at the end of every play until x264 has finished it. Each segment has its own
# single-threaded encoder, so the bytes do not depend on how many run at once (the same MP4 with
# 1, 2 or 4); a lone 1080p60 scene (chapter 02's Mixing) took 29 s of wall time instead of 34-40
INFLIGHT_ENCODERS = 2
# a frozen-frame wait of at least this many frames is encoded as a hold (SegmentEncoder._write_hold):
# x264 costs about as much for a repeated frame as for a new one (13 ms at 1080p on 2 cores)
HOLD_MIN_FRAMES = 3
# the hold's second frame at x264's coarsest quantizer: its macroblocks all come out skipped (at
# the stream's own quantizer x264 spends it refining the first frame, which no copy may repeat)
HOLD_ZONE = "zones=1,1,q=51"


class FrameTimes:
    """Where a scene process's CPU time goes (bench/render_speed.py prints it): drawing (manim's
    renderer putting mobjects on the frame, in the main thread), converting (RGBA to the stream's
    YUV, main thread), encoding (x264 and muxing: every thread but the main one)."""

    def __init__(self):
        self.draw = self.convert = 0.0
        # pictures drawn (frames, and the backgrounds manim keeps for a play), converted, written
        self.drawn = self.converted = self.frames = 0
        self.paths: dict[str, int] = {}     # how the shapes drawn got their paths (FilmCamera.paths)


class SegmentEncoder(VideoSegmentEncoder):
    """manim's segment encoder, fed frames already in the stream's pixel format (FilmFileWriter
    converts them). A held frame (`repeat` > 1, a wait) is converted once; a hold that is the whole
    segment (manim's frozen-frame wait) goes to x264 as two frames and the rest are copies of
    x264's 'nothing changed' frame (hold_copies), at consecutive timestamps: the frame rate stays
    constant. It keeps the hash of every packet it muxes (`hashes`): what the scene's MP4 must hold.

    `packet_hash` (a packet's bytes -> its hash; None: none kept) and `hold_copies` (film/frames/holds.py's:
    x264's first two frames of a hold -> the copies of its second, or None; None: holds are encoded
    frame by frame) are the film's, passed in."""

    def __init__(self, *args, packet_hash: Callable[[bytes], bytes] | None = None,
                 hold_copies: Callable | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.packet_hash, self.hold_copies = packet_hash, hold_copies
        self.hashes: list[bytes] = []
        self._held = False

    def _mux(self, packets) -> None:
        for packet in packets:
            if self.packet_hash is not None:
                self.hashes.append(self.packet_hash(bytes(packet)))
            self._container.mux(packet)

    def write_frame(self, frame: av.VideoFrame, *, repeat: int = 1) -> None:
        if self._closed or self._held:
            raise RuntimeError(f"Video segment encoder for {self.target} is closed.")
        if repeat <= 0:
            raise ValueError("Frame repeat must be a positive integer.")
        try:
            if (repeat >= HOLD_MIN_FRAMES and self._next_pts == 0 and self.hold_copies is not None
                    and self._write_hold(frame, repeat)):
                return
            for _ in range(repeat):
                self._encode(frame)
        except BaseException as error:
            raise self._operation_error("encode", error) from error

    def _encode(self, frame: av.VideoFrame) -> None:
        self._mux(self._stream.encode(self._stamped(frame, self._next_pts)))
        self._next_pts += 1

    def _reopen(self, spec: VideoEncoderSpec) -> None:
        """A fresh container and encoder on the same target with `spec` (nothing was written yet),
        opened by manim's own code."""
        with contextlib.suppress(Exception):
            self._container.close()
        self.target.unlink(missing_ok=True)
        VideoSegmentEncoder.__init__(self, target=self.target, spec=spec)

    def _write_hold(self, frame: av.VideoFrame, repeat: int) -> bool:
        """The whole segment is `frame` held `repeat` frames: x264 encodes it twice (its second
        frame at the coarsest quantizer, so that it comes out all skipped) and the other frames
        are that second frame again. False (nothing written) where the copy does not decode to
        the same picture: the caller then encodes every frame."""
        spec = self.spec
        options = dict(spec.options)
        options["x264-params"] = ":".join(filter(None, (options.get("x264-params", ""), HOLD_ZONE)))
        self._reopen(dataclasses.replace(spec, options=tuple(options.items())))
        first = [*self._stream.encode(self._stamped(frame, 0)), *self._stream.encode(self._stamped(frame, 1)),
                 *self._stream.encode()]
        copies = self.hold_copies(self._stream.codec_context.extradata, first)
        if copies is None:
            self._reopen(spec)
            return False
        step, last = first[1].pts - first[0].pts, first[1]
        packets = list(first)
        for k in range(2, repeat):
            packet = av.Packet(copies.frame(k))
            packet.pts, packet.dts = first[0].pts + k * step, last.dts + (k - 1) * step
            packet.time_base, packet.duration = last.time_base, last.duration
            packet.stream = self._stream
            packets.append(packet)
        self._mux(packets)
        self._next_pts, self._held = repeat, True
        return True

    def _stamped(self, frame: av.VideoFrame, pts: int) -> av.VideoFrame:
        """`frame` as the frame at `pts` (x264 keeps its own reference to what it was sent: setting
        the next timestamp on the same frame changes nothing already sent)."""
        rate = self.spec.frame_rate
        frame.pts, frame.time_base = pts, Fraction(rate.denominator, rate.numerator)
        return frame

    def finish(self) -> None:
        """manim's finish (flush x264's delayed packets, close the file), those packets hashed too."""
        if self._closed:
            return
        self._closed = True
        first_error: Exception | None = None
        try:
            try:
                if not self._held:          # a hold flushed x264 already
                    self._mux(self._stream.encode())
            except Exception as error:
                first_error = error
        finally:
            try:
                self._container.close()
            except Exception as error:
                first_error = first_error or error
        if first_error is not None:
            raise self._operation_error("finish", first_error) from first_error


class FilmFileWriter(SceneFileWriter):
    """Converts each frame to the stream's pixel format as it is written, straight from the
    camera's pixels (no copy of the RGBA frame, no second copy into an AVFrame), and hands the
    encoder thread the converted frame. Its encoders get the renderer's packet_hash and hold_copies."""

    times: FrameTimes | None = None
    packet_hash: Callable[[bytes], bytes] | None = None
    hold_copies: Callable | None = None

    @functools.cached_property
    def _reformatter(self) -> VideoReformatter:
        """One colour converter for the whole scene: a frame's own would set swscale up afresh for
        every frame (the same pixels out, 10% more of the conversion's CPU)."""
        return VideoReformatter()

    def _create_segment_encoder(self, target: Path) -> VideoSegmentEncoder:
        encoder = SegmentEncoder(target=target, spec=self.video_encoder, packet_hash=self.packet_hash,
                                 hold_copies=self.hold_copies)
        # the list its packets' hashes go into, not the encoder: a finished encoder must be freed
        # (holding each one held its x264 buffers, 2 GB by the end of a 1080p60 scene)
        self._segment_hashes[str(target)] = encoder.hashes
        return encoder

    @functools.cached_property
    def _segment_hashes(self) -> dict[str, list[bytes]]:
        return {}

    def encoded_packets(self) -> list[bytes]:
        """The hashes of the packets x264 produced, in the order manim joins the segments into the
        scene's movie (its partial movie files, the skipped plays left out)."""
        return [h for path in self.partial_movie_files if path is not None for h in self._segment_hashes[str(path)]]

    def abort_encode_jobs(self, reraise_encoder_failures: bool = False) -> None:
        """manim's, with the open segment's end mark queued once more first. A scene stopped by a
        signal (SIGTERM unwinds it: film/run/render_job.py) can be stopped inside the segment's seal(),
        after it marked itself sealed and before it queued the end mark; manim's abort then queues none
        and joins an encoder thread that waits for one for ever (a scene whose fork server was killed,
        found asleep half an hour later). A second end mark is never read."""
        job = self._current_encode_job
        if job is not None:
            job.queue.put((-1, None))
        super().abort_encode_jobs(reraise_encoder_failures)

    def write_frame(self, pixels, *, repeat: int = 1) -> None:
        if not (self.output_spec.is_video and self._current_encode_job is not None):
            return super().write_frame(pixels, repeat=repeat)
        t0 = time.thread_time()
        if self.video_encoder.pixel_format == "yuv420p":
            frame = rgba_to_i420(pixels)
        else:          # another format (manim's transparent WebM): swscale
            frame = self._reformatter.reformat(av.VideoFrame.from_numpy_buffer(pixels, format="rgba"),
                                               format=self.video_encoder.pixel_format, threads=CONVERT_THREADS)
        if self.times is not None:
            self.times.convert += time.thread_time() - t0
            self.times.converted += 1
            self.times.frames += repeat
        super().write_frame(frame, repeat=repeat)   # the camera may now draw the next frame over `pixels`


class _Traced:
    """A shape's traced path (in the surface's coordinates), kept with the points it was traced from
    (n x 3) and the last points it was put back for (`last`, their bytes; `move`: None, or the
    surface matrix that carries the traced path onto them)."""

    __slots__ = ("tolerance", "points", "refs", "spans", "path", "last", "move", "scale", "shift", "off")

    def __init__(self, points, tolerance, path):
        self.tolerance, self.path = tolerance, path
        self.points = points.copy()                 # n x 3
        # the points that fix a scale along each axis: the lowest and highest x, the lowest and highest y
        xs, ys = self.points[:, 0], self.points[:, 1]
        ix0, ix1, iy0, iy1 = int(xs.argmin()), int(xs.argmax()), int(ys.argmin()), int(ys.argmax())
        self.refs = (ix0, ix1, iy0, iy1)
        self.spans = (float(xs[ix1] - xs[ix0]), float(ys[iy1] - ys[iy0]))
        self.last, self.move = points.tobytes(), None
        # scratch arrays for _move: the scale and shift tried, each point's miss (numpy's per-call
        # cost, not the arithmetic, is most of a check: no temporaries)
        self.scale, self.shift, self.off = np.ones(3), np.zeros(3), np.empty_like(self.points)


class FilmCamera(Camera):
    """manim's Cairo camera, tracing a shape's path only when it changed shape.

    manim traces every shape it draws point by point, in Python, on every frame (a grid that
    fades in is a few hundred shapes a frame). Here a shape keeps the path it was last traced to:
    - while its points stay as they were, that path is put back whole, exactly as it was traced
      (cairo's fixed point, kept in the surface's own coordinates: the same pixels);
    - while its points are those same points shifted and scaled along the axes (a shape sliding
      into place, growing, a label scaled down: most of what moves in the film), the path is put
      back through the matrix that shifts and scales it the same way, on the surface. Its
      coordinates then come out within 1/256 of a pixel of a fresh trace's (cairo rounds a
      point to 1/256 of a pixel both ways), so an edge pixel's coverage may differ by a level.
    Everything else is traced afresh (trace_path, or manim's own code).
    """

    # how far (surface pixels) a point may be from where the shift and scale puts it, for the
    # kept path to be put back moved: well under cairo's own 1/256 of a pixel
    MOVE_TOLERANCE_PX = 1 / 1024
    # the most a kept path is enlarged: its points, rounded to cairo's 1/256 of a pixel when traced,
    # then land within 1/256 of a pixel of exact (a shape growing from nothing is traced afresh
    # each time it has doubled)
    MAX_SCALE = 2.0
    # still shapes drawn once per play onto a layer (onepass.engine.still_layer) instead of once per frame
    LAYERED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._paths: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # shapes put on the surface so far: traced, put back as traced, put back moved; and shapes
        # not drawn because they were on the layer of still shapes (the bench's split)
        self.paths = {"traced": 0, "kept": 0, "moved": 0, "layered": 0}
        self.still = StillLayer(self) if self.LAYERED else None

    def set_cairo_context_path(self, ctx, vmobject):
        points = vmobject.points
        if len(points) == 0:          # manim leaves the context's path as it is: so do we
            return super().set_cairo_context_path(ctx, vmobject)
        data, tolerance = points.tobytes(), vmobject.tolerance_for_point_equality
        kept = self._paths.get(vmobject)
        matrix = ctx.get_matrix()
        if kept is not None and kept.points.shape == points.shape and kept.tolerance == tolerance:
            if kept.last != data:
                move = self._move(kept, points, matrix)
                if move is not None:
                    kept.last, kept.move = data, move
            if kept.last == data:
                self.paths["moved" if kept.move is not None else "kept"] += 1
                ctx.set_matrix(kept.move) if kept.move is not None else ctx.identity_matrix()
                ctx.new_path()
                ctx.append_path(kept.path)
                ctx.set_matrix(matrix)
                return self
        if not trace_path(ctx, vmobject):
            super().set_cairo_context_path(ctx, vmobject)
        self.paths["traced"] += 1
        ctx.identity_matrix()
        self._paths[vmobject] = _Traced(points, tolerance, ctx.copy_path())
        ctx.set_matrix(matrix)
        return self

    def overlay_PIL_image(self, pixel_array, image) -> None:
        """manim's overlay of an image mobject (already pasted into a clear frame-sized image)
        composited over only the part of the frame it covers: the same pixels, since PIL's
        alpha_composite leaves a pixel under a clear one exactly as it was, without converting the
        whole frame to PIL and back for each image in each frame."""
        box = image.getbbox()                 # where it is not clear (alpha_only)
        if box is None:
            return
        left, top, right, bottom = box
        under = Image.fromarray(np.ascontiguousarray(pixel_array[top:bottom, left:right]))      # RGBA
        pixel_array[top:bottom, left:right] = np.asarray(Image.alpha_composite(under, image.crop(box)))

    def _move(self, kept: _Traced, points, matrix):
        """The surface matrix that carries `kept`'s path onto `points`, where `points` are its
        points shifted and scaled along the axes (to MOVE_TOLERANCE_PX); else None."""
        now, was = points.item, kept.points.item
        ix0, ix1, iy0, iy1 = kept.refs
        sx = (now(ix1, 0) - now(ix0, 0)) / kept.spans[0] if kept.spans[0] > 1e-9 else 1.0
        sy = (now(iy1, 1) - now(iy0, 1)) / kept.spans[1] if kept.spans[1] > 1e-9 else 1.0
        if not (1e-6 < sx <= self.MAX_SCALE and 1e-6 < sy <= self.MAX_SCALE):   # (False for NaN)
            return None
        tx, ty = now(ix0, 0) - sx * was(ix0, 0), now(iy0, 1) - sy * was(iy0, 1)
        scale, shift, off = kept.scale, kept.shift, kept.off
        scale[0], scale[1] = sx, sy
        shift[0], shift[1], shift[2] = tx, ty, now(0, 2) - was(0, 2)
        np.multiply(kept.points, scale, out=off)
        np.add(off, shift, out=off)
        np.subtract(off, points, out=off)
        np.abs(off, out=off)
        if not off.max() * max(abs(matrix.xx), abs(matrix.yy)) <= self.MOVE_TOLERANCE_PX:   # (False for NaN)
            return None
        # surface -> scene (the inverse of `matrix`), the shift and scale, scene -> surface
        move = cairo.Matrix(*matrix)
        move.invert()
        return move.multiply(cairo.Matrix(sx, 0.0, 0.0, sy, tx, ty)).multiply(matrix)


# the rtol manim's point comparisons take from numpy.isclose
_RTOL = 1.0e-5


def trace_path(ctx, vmobject) -> bool:
    """manim's Camera.set_cairo_context_path for a plain VMobject, the same cairo calls with the
    same numbers in the same order, in a third of the time: one pass of array arithmetic for the
    subpaths' ends, the coordinates read as Python floats. False (nothing done) where manim's own
    must run: a shape whose class compares its points its own way, or with points that are not
    all finite (manim draws those as an empty path)."""
    cls = type(vmobject)
    if (cls.get_subpath_split_indices_from_points is not VMobject.get_subpath_split_indices_from_points
            or cls.consider_points_equals_2d is not VMobject.consider_points_equals_2d
            or vmobject.n_points_per_cubic_curve != 4):
        return False
    points = vmobject.points
    if not np.isfinite(points).all():
        return False
    atol, n = vmobject.tolerance_for_point_equality, len(points)
    ctx.new_path()
    if n < 4:
        return True
    xy = points[:, :2]           # n x 2: anchor, handle, handle, anchor, per cubic curve
    ends, starts = xy[3:n - 1:4], xy[4::4]           # each curve's end anchor; the next one's start
    split = ~(np.abs(ends - starts) <= atol + _RTOL * np.abs(starts)).all(axis=1)
    bounds = [0, *((np.flatnonzero(split) + 1) * 4).tolist(), n]
    flat = xy.ravel().tolist()
    move_to, curve_to, new_sub_path, close_path = ctx.move_to, ctx.curve_to, ctx.new_sub_path, ctx.close_path
    for start, end in zip(bounds, bounds[1:]):
        if end - start < 4:
            continue
        new_sub_path()
        x0, y0 = flat[2 * start], flat[2 * start + 1]
        move_to(x0, y0)
        for b in range(2 * start + 2, 2 * end - 5, 8):
            curve_to(flat[b], flat[b + 1], flat[b + 2], flat[b + 3], flat[b + 4], flat[b + 5])
        x1, y1 = flat[2 * end - 2], flat[2 * end - 1]
        if (x0 == x1 or abs(x0 - x1) <= atol + _RTOL * abs(x1)) and (y0 == y1 or abs(y0 - y1) <= atol + _RTOL * abs(y1)):
            close_path()
    return True


_MANIMS_SUBPATHS = VMobject.get_subpaths_from_points


def subpaths_from_points(self, points):
    """VMobject.get_subpaths_from_points with its point comparisons made at once: the same
    numpy.isclose test between each curve's end and the next curve's start (what its per-curve
    numpy.allclose calls make), in one call instead of one per curve, and the same subpaths out
    (views of `points`). Every Transform aligns its shapes' subpaths this way as it begins.
    manim's own runs for a class that compares points its own way."""
    cls = type(self)
    if cls.consider_points_equals is not VMobject.consider_points_equals or self.n_points_per_cubic_curve != 4:
        return _MANIMS_SUBPATHS(self, points)
    n = len(points)
    ends, starts = points[3:n - 1:4], points[4::4]           # curve k's end, curve k+1's start
    split = ~np.isclose(ends, starts, rtol=_RTOL, atol=self.tolerance_for_point_equality).all(axis=1)
    bounds = [0, *((np.flatnonzero(split) + 1) * 4).tolist(), n]
    return [points[a:b] for a, b in zip(bounds, bounds[1:]) if b - a >= 4]


_MANIMS_BOUNDARY = VMobject.get_points_defining_boundary


def points_defining_boundary(self):
    """VMobject.get_points_defining_boundary with each member's anchors interleaved by numpy: the
    same rows in the same order (each curve's start anchor, then its end anchor; a single point as
    it is), instead of a tuple of every row made into an array. Every next_to, get_left and
    move_to measures a shape this way (a dry run spent a tenth of its time here). manim's own for
    a family with a member that is not a VMobject or not made of whole curves."""
    rows: list = []
    run: list = []                 # consecutive members made of whole curves of `n` points: one array
    run_n = 0
    for member in self.get_family():
        points = member.points
        n = getattr(member, "n_points_per_cubic_curve", 0)
        if not isinstance(member, VMobject) or type(member).get_anchors is not VMobject.get_anchors:
            return _MANIMS_BOUNDARY(self)
        if len(points) == 1:
            _anchor_rows(run, run_n, rows)
            run = []
            rows.append(points)
        elif len(points) % n:
            return _MANIMS_BOUNDARY(self)        # not whole curves: manim's own (its strict zip says so)
        elif len(points):
            if n != run_n:
                _anchor_rows(run, run_n, rows)
                run, run_n = [], n
            run.append(points)
    _anchor_rows(run, run_n, rows)
    return np.concatenate(rows) if rows else np.array(())


def _anchor_rows(run: list, n: int, rows: list) -> None:
    """Each curve's start and end anchor of the members in `run` (whole curves of n points each,
    so their points put end to end still start a curve every n rows), interleaved, onto `rows`."""
    if run:
        points = run[0] if len(run) == 1 else np.concatenate(run)
        both = np.empty((2 * (len(points) // n), points.shape[1]))
        both[0::2], both[1::2] = points[::n], points[n - 1::n]
        rows.append(both)


_MANIMS_CORNER_ARC = polygram.ArcBetweenPoints
_PLACED_ARCS: dict = {}            # (angle, num_components) -> the arc ArcBetweenPoints places


def corner_arc(start, end, angle: float = TAU / 4, radius=None, **kwargs):
    """ArcBetweenPoints as Polygram.round_corners makes it (every rounded box: a glow, a chip, a panel's
    frame), its points made as that class makes them: the same Arc at the origin (one per angle and
    count of components, built once and copied), then put_start_and_end_on(start, end). round_corners
    reads only its points, so the centre ArcBetweenPoints then measures is not; a radius, an angle of 0
    or other arguments: manim's own class."""
    if radius is not None or angle == 0 or set(kwargs) - {"num_components"}:
        return _MANIMS_CORNER_ARC(start, end, angle=angle, radius=radius, **kwargs)
    key = (angle, kwargs.get("num_components", 9))
    if key not in _PLACED_ARCS:
        _PLACED_ARCS[key] = Arc(radius=None, angle=angle, num_components=key[1])
    return _PLACED_ARCS[key].copy().put_start_and_end_on(start, end)


_MANIMS_ROUND_CORNERS = polygram.Polygram.round_corners
_ROUNDED: dict = {}                # (outline's points, radius, spacing, arcs per corner) -> rounded points
_ROUNDED_KEPT = 4096               # outlines kept (a few hundred bytes each); the oldest go first


def round_corners(self, radius=0.5, evenly_distribute_anchors: bool = False, components_per_rounded_corner: int = 2):
    """Polygram.round_corners, each outline rounded once per process: its new points depend only on
    the outline's points and the three arguments (a glow, a chip, a panel's frame: a RoundedRectangle
    is rounded at the origin, before it is moved), so an outline met again takes a copy of the points
    manim made for it. A subclass that reads its vertices its own way: manim's own every time."""
    if type(self).get_vertex_groups is not polygram.Polygram.get_vertex_groups or not isinstance(self.points, np.ndarray):
        return _MANIMS_ROUND_CORNERS(self, radius, evenly_distribute_anchors, components_per_rounded_corner)
    key = (self.points.shape, self.points.dtype.str, self.points.tobytes(), type(radius),
           tuple(radius) if isinstance(radius, list) else radius, evenly_distribute_anchors,
           components_per_rounded_corner)
    rounded = _ROUNDED.get(key)
    if rounded is None:
        _MANIMS_ROUND_CORNERS(self, radius, evenly_distribute_anchors, components_per_rounded_corner)
        if len(_ROUNDED) >= _ROUNDED_KEPT:
            del _ROUNDED[next(iter(_ROUNDED))]
        _ROUNDED[key] = self.points.copy()
    else:
        self.set_points(rounded)      # (set_points copies)
    return self


_MANIMS_FAMILY = Mobject.get_family


def family_of(self, recurse: bool = True) -> list:
    """Mobject.get_family without a generator per member: the same members in the same order
    (each before its submobjects, depth first; a member met again further on is kept there; a
    submobject that contains its own ancestor is not followed back). manim asks for families many
    times a frame (every shape the camera draws, every updater): at 1080p this was 2 ms a frame."""
    if not self.submobjects:         # most of what the camera flattens each frame (a glyph, a cell)
        return [self]
    found: list = []
    _gather(self, set(), found)
    # what remove_list_redundancies keeps: each member's last place (nothing to do without repeats)
    return found if len(set(found)) == len(found) else remove_list_redundancies(found)


_MANIMS_WITH_POINTS = Mobject.family_members_with_points


def members_with_points(self) -> list:
    """Mobject.family_members_with_points with len(points) for get_num_points() (what it returns;
    no class of manim's Cairo renderer nor of onepass overrides it): the camera asks it of every
    mobject from the first moving one on, every frame (chapter 02's Mixing: some 400 a frame)."""
    return [m for m in self.get_family() if len(m.points) > 0]


_MANIMS_SCENE_FAMILY = Scene.get_mobject_family_members
_Z_INDEX = operator.attrgetter("z_index")


def scene_family_members(self) -> list:
    """Scene.get_mobject_family_members for the Cairo renderer (extract_mobject_family_members: every
    top-level mobject's family_of, chained, each member kept at its last place, sorted by z_index where
    the camera orders by it) in one walk, repeats looked for with one set and the sort keyed by
    attrgetter instead of a lambda: the same list. manim asks for it at each play, each introducing
    animation and each wait. manim's own where Mobject.get_family is not family_of."""
    if config.renderer != RendererType.CAIRO or Mobject.get_family is not family_of:
        return _MANIMS_SCENE_FAMILY(self)
    found: list = []
    path: set = set()
    for top in self.mobjects:
        if top.submobjects:
            _gather(top, path, found)
        else:
            found.append(top)
    if len(set(found)) != len(found):
        found = remove_list_redundancies(found)
    if self.renderer.camera.use_z_index:
        found.sort(key=_Z_INDEX)           # (stable, as sorted() is)
    return found


_MANIMS_REDUCE = Mobject.reduce_across_dimension
_MANIMS_LENGTH = Mobject.length_over_dim
_FLOAT = np.dtype(float)


def length_over_dim(self, dim: int):
    """Mobject.length_over_dim (a mobject's width, height or depth) from one numpy max and min over
    the points of its whole family, instead of reduce_across_dimension's Python max and min, one
    number at a time, over each member's points: the same highest and lowest coordinate, so the same
    length. Every width and height a scene asks for comes this way (a held beat's veil measures the
    whole picture: a fifth of a dry run in Urdu). manim's own where a member measures itself its own
    way or holds points that are not float rows, where the coordinates hold a NaN (Python's max keeps
    what comes first), or where the highest and lowest are both 0 (which of 0.0 and -0.0 comes first
    decides the length's sign)."""
    members: list = []
    _gather(self, set(), members)            # (repeats kept: they change no max)
    arrays = []
    for m in members:
        points = m.points
        if type(m).reduce_across_dimension is not _MANIMS_REDUCE or points.dtype is not _FLOAT or points.ndim != 2:
            return _MANIMS_LENGTH(self, dim)
        if len(points):
            arrays.append(points)
    if not arrays:
        return 0                             # (manim's 0: no member has points)
    column = (arrays[0] if len(arrays) == 1 else np.concatenate(arrays))[:, dim]
    high, low = column.max(), column.min()
    length = high - low
    if length != length or (high == 0 and low == 0):
        return _MANIMS_LENGTH(self, dim)
    return length


_MANIMS_CRITICAL = Mobject.get_critical_point
_MANIMS_EXTREMUM = Mobject.get_extremum_along_dim


def critical_point(self, direction):
    """Mobject.get_critical_point (every move_to, next_to, align_to, get_center, get_left) taking the
    same min and max of the same columns of the boundary's points that get_extremum_along_dim takes
    (numpy's one reduction: the same numbers, every zero's sign and NaN included; the middle (min +
    max) / 2 as manim adds them), without a call through np.min's wrapper and a 0-d array made of the
    direction per axis: under half of manim's time for a shape. manim's own for a class that measures
    along an axis its own way."""
    if type(self).get_extremum_along_dim is not _MANIMS_EXTREMUM:
        return _MANIMS_CRITICAL(self, direction)
    result = np.zeros(self.dim)
    all_points = self.get_points_defining_boundary()
    if len(all_points) == 0:
        return result
    points = np.asarray(all_points)
    for dim in range(self.dim):
        key = direction[dim]                 # (manim compares np.array(direction[dim]): the same answers)
        values = points[:, dim]
        if key < 0:
            result[dim] = values.min()
        elif key == 0:
            result[dim] = (values.min() + values.max()) / 2
        else:
            result[dim] = values.max()
    return result


_MANIMS_MERGED = Mobject.get_merged_array


def merged_array(self, array_attr: str):
    """Mobject.get_merged_array (get_all_points: a group's boundary, what move_to and next_to measure
    a Group by) as one numpy concatenation of its members' arrays, in manim's order (each member
    before its submobjects, depth first, a member met twice counted twice) instead of an np.append
    per member (each copying all the rows so far); a childless mobject's own array, as manim's."""
    if not self.submobjects:
        return getattr(self, array_attr)
    members: list = []
    _gather(self, set(), members)
    if any(type(m).get_merged_array not in _MERGING for m in members):     # (one of its own: manim's)
        return _MANIMS_MERGED(self, array_attr)
    return np.concatenate([getattr(m, array_attr) for m in members], axis=0)


_MERGING = (_MANIMS_MERGED, merged_array)


def _gather(mobject, path: set, found: list) -> None:
    """`mobject` and its submobjects, depth first, into `found` (repeats kept); `path`: the ancestors
    being walked (a submobject that is one is not followed back). A childless submobject (most
    members: a glyph, a cell) is put down without a call: it is nobody's ancestor."""
    path.add(mobject)
    found.append(mobject)
    for sub in mobject.submobjects:
        if not sub.submobjects:
            found.append(sub)
        elif sub not in path:
            _gather(sub, path, found)
    path.remove(mobject)


@contextlib.contextmanager
def faster_manim():
    """While the block runs (a scene's render or dry run), VMobject.get_subpaths_from_points is
    subpaths_from_points, VMobject.get_points_defining_boundary points_defining_boundary, the arcs
    Polygram.round_corners makes are corner_arc's and an outline it rounded before is rounded from
    memory (round_corners), Mobject.get_family is family_of (and
    family_members_with_points members_with_points, a scene's members scene_family_members), a
    width or height is measured by length_over_dim, a bounding box's point by critical_point and a
    group's points merged by merged_array, Mobject.__deepcopy__ is
    engine/copies.py's mobject_deepcopy, a Text's SVG is read glyph by glyph (engine/glyphs.py) and a
    Transform leaves alone its parts that paint nothing (engine/unseen.py); what they were before again
    after it (manim's own, unless the block is inside another)."""
    before = (VMobject.get_subpaths_from_points, Mobject.get_family, SVGMobject.generate_mobject,
              VMobject.get_points_defining_boundary, polygram.ArcBetweenPoints, Transform.interpolate_mobject,
              Mobject.family_members_with_points, polygram.Polygram.round_corners, Mobject.length_over_dim,
              Mobject.get_merged_array, Mobject.get_critical_point, Scene.get_mobject_family_members)
    VMobject.get_subpaths_from_points, Mobject.get_family = subpaths_from_points, family_of
    Mobject.family_members_with_points = members_with_points
    SVGMobject.generate_mobject, VMobject.get_points_defining_boundary = glyph_svg_mobject, points_defining_boundary
    own = "interpolate_mobject" in vars(Transform)        # (manim's Transform inherits Animation's)
    polygram.ArcBetweenPoints, Transform.interpolate_mobject = corner_arc, transform_interpolate_mobject
    polygram.Polygram.round_corners = round_corners
    Mobject.length_over_dim, Mobject.get_merged_array = length_over_dim, merged_array
    Mobject.get_critical_point, Scene.get_mobject_family_members = critical_point, scene_family_members
    try:
        with faster_copies():
            yield
    finally:
        (VMobject.get_subpaths_from_points, Mobject.get_family, SVGMobject.generate_mobject,
         VMobject.get_points_defining_boundary, polygram.ArcBetweenPoints, Transform.interpolate_mobject,
         Mobject.family_members_with_points, polygram.Polygram.round_corners, Mobject.length_over_dim,
         Mobject.get_merged_array, Mobject.get_critical_point, Scene.get_mobject_family_members) = before
        if not own:
            del Transform.interpolate_mobject
        unseen.forget()


class FilmRenderer(CairoRenderer):
    """manim's Cairo renderer writing through FilmFileWriter: a frame goes to the writer as the
    camera's own pixel array (converted there before the camera draws again), not as a copy.
    `times` (if given) is filled with where the CPU time goes; `packet_hash` and `hold_copies` go
    to every segment encoder (SegmentEncoder)."""

    def __init__(self, times: FrameTimes | None = None, packet_hash: Callable[[bytes], bytes] | None = None,
                 hold_copies: Callable | None = None, **kwargs):
        kwargs.setdefault("camera_class", FilmCamera)
        super().__init__(file_writer_class=FilmFileWriter, **kwargs)
        self.times, self.packet_hash, self.hold_copies = times, packet_hash, hold_copies

    def init_scene(self, scene, session_spec, file_writer_settings) -> None:
        super().init_scene(scene, session_spec, file_writer_settings)
        writer = self.file_writer
        writer.times, writer.packet_hash, writer.hold_copies = self.times, self.packet_hash, self.hold_copies

    def update_frame(self, scene, mobjects=None, include_submobjects: bool = True, ignore_skipping: bool = True,
                     **kwargs) -> None:
        t0 = time.thread_time()
        camera = self.camera
        still = getattr(camera, "still", None)       # (None: a stock camera, or LAYERED off)
        drawn = False
        if (still is not None and include_submobjects and not kwargs
                and not (self.skip_animations and not ignore_skipping)):
            base = self.static_image if self.static_image is not None else camera.background
            drawn = still.capture(base, mobjects or list_update(scene.mobjects, scene.foreground_mobjects))
        if not drawn:
            if still is not None:
                still.painted = None                 # the layer cannot know what manim leaves drawn
            super().update_frame(scene, mobjects, include_submobjects, ignore_skipping, **kwargs)
        if self.times is not None:
            self.times.draw += time.thread_time() - t0
            self.times.drawn += 1

    def render(self, scene, t, moving_mobjects=None) -> None:
        self.update_frame(scene, moving_mobjects)
        self.add_frame(self.camera.pixel_array)

    def freeze_current_frame(self, duration: float) -> None:
        dt = 1 / self.camera.frame_rate          # manim's own frame count for a hold, to the frame
        self.add_frame(self.camera.pixel_array, num_frames=int(duration / dt))
