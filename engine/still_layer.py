"""Shapes that hold still while others move, drawn once per play instead of once per frame.

Every frame of a play, manim draws every shape from the first moving one on (in draw order) over
the play's static picture, whether it moved or not: in chapter 02 about half of what it drew each
frame had not changed since the frame before (a grid's finished cells while the next cells fade
in, a caption while an arrow slides). StillLayer draws such shapes once, onto a copy of the static
picture (the layer), and a frame starts from the layer and draws only the rest over it.

Each pixel comes out exactly as manim's: cairo paints a shape over what is under it, so two shapes
painted in the other order give the same pixels wherever they do not both reach. A shape joins the
layer only if no shape drawn every frame comes before it in draw order and reaches where it does;
every frame checks, on the shapes' boxes, that nothing drawn over the layer comes before a layer
shape it reaches, and that each layer shape still looks as it did and keeps its place (a shape that
paints nothing, clear fill and strokes, reaches no pixel and may leave freely). Where that fails
the layer is dropped and built again from the static picture. A frame then copies back from its
start picture only the rows the last frame drew over (changed_rows), not the whole picture.
"""
from __future__ import annotations

import numpy as np
from manim import VMobject
from manim.mobject.types.image_mobject import AbstractImageMobject
from manim.mobject.types.point_cloud_mobject import PMobject

from onepass.engine.unseen import UNSEEN

# a shape manim draws as nothing (a plain Mobject with points): never drawn, never in the layer
NOTHING = False


def look_of(leaf) -> tuple | None:
    """What Camera.display_vectorized reads of `leaf` (its class, points, fill, stroke and
    background stroke colours and widths, joints, caps, point tolerance): equal looks draw equal
    pixels. None where the drawing reads more (a gradient reads its family's points): such a shape
    is drawn every frame."""
    fill, stroke, back = leaf.get_fill_rgbas(), leaf.get_stroke_rgbas(), leaf.get_stroke_rgbas(True)
    if len(fill) > 1 or len(stroke) > 1 or len(back) > 1:
        return None
    width, back_width = leaf.get_stroke_width(), leaf.get_stroke_width(True)
    # cairo paints nothing with a clear source (its operator reduces to DEST): such a shape reaches
    # no pixel (a NaN alpha counts as paint)
    clear = fill[0, 3] == 0 and (width == 0 or stroke[0, 3] == 0) and (back_width == 0 or back[0, 3] == 0)
    return (not clear, type(leaf), leaf.points.tobytes(), fill.tobytes(), stroke.tobytes(), back.tobytes(),
            width, back_width, leaf.joint_type, leaf.cap_style, leaf.tolerance_for_point_equality)


def visible(look) -> bool:
    """A shape with this look paints some pixel (looks that are None, gradients, may)."""
    return look is None or look[0]


def overlap(a, b) -> np.ndarray:
    """(len(a) x len(b)): which boxes of `a` share a pixel with which of `b` (each n x 4: left,
    right, top, bottom)."""
    return ((a[:, None, 0] <= b[None, :, 1]) & (b[None, :, 0] <= a[:, None, 1])
            & (a[:, None, 2] <= b[None, :, 3]) & (b[None, :, 2] <= a[:, None, 3]))


class StillLayer:
    """A camera's layer: its shapes (in draw order), its pixels, and what the last frame drew."""

    # still shapes that make a new layer worth its cost (a copy of the static picture, then each of
    # them drawn once more); once there is a layer, any still shape that can join it does (free)
    MIN_SHAPES = 6
    # a layer lost within this many frames of being made was not worth making: the next one waits a
    # frame, then 3, 7, ... up to PAUSE_MAX (a shape sweeping across still ones drops any layer)
    SHORT_LIFE = 2
    PAUSE_MAX = 15
    # frames before a still shape that could not join the layer is tried again
    RETRY = 4

    def __init__(self, camera):
        self.camera = camera
        self.shapes: list = []          # (leaf, look) in draw order, all painted on self.pixels
        self.at: dict[int, int] = {}    # id(leaf) -> its place in self.shapes
        self.boxes = np.empty((0, 4))   # len(shapes) x 4: each layer shape's box (surface pixels)
        self.pixels = None              # the layer: the static picture with its shapes drawn
        self.base = None                # that static picture
        self.last: dict[int, tuple] = {}      # id(leaf) -> (leaf, look): what the last frame drew
        self.refused: dict[int, tuple] = {}   # id(leaf) -> (leaf, frame): still, but could not join then
        self.frame = self.made = self.pause = self.quiet_until = 0
        self.to_px = None               # scene -> surface: x scale, x shift, y scale, y shift
        # what the camera's pixels hold after the last frame this drew: (its base, the boxes of the
        # shapes drawn over the layer, the layer's boxes); None where unknown (manim drew it)
        self.painted = None
        self.dropped = False            # the layer was dropped this frame (not only grown)

    def capture(self, base, mobjects) -> bool:
        """Draw `mobjects` over `base` (the play's static picture) on the camera's pixel array as
        Camera.capture_mobjects does, starting from the layer where it holds. False, with nothing
        drawn, where a shape is of a kind this does not know (a point cloud, an image, a shape
        painted with a background image): the caller draws as manim does."""
        camera = self.camera
        leaves = camera.get_mobjects_to_display(mobjects)
        looks, unseen = [], UNSEEN
        for leaf in leaves:
            if not isinstance(leaf, VMobject):
                if isinstance(leaf, (PMobject, AbstractImageMobject)):
                    self.painted = None            # manim draws this frame: what it leaves is unknown
                    return False
                looks.append(NOTHING)
            elif leaf.background_image is not None:
                self.painted = None
                return False
            elif unseen and leaf in unseen:        # a Transform's part clear all through it: paints nothing
                looks.append(NOTHING)
            else:
                looks.append(look_of(leaf))
        self.frame += 1
        if base is not self.base:                  # a new play: a new static picture under everything
            self.drop(short=False)
            self.base = base
        elif self.shapes and not self.holds(leaves, looks):
            self.drop(short=self.frame - self.made <= self.SHORT_LIFE)
        self.grow(leaves, looks)
        start, pixels, at = self.pixels if self.shapes else base, camera.pixel_array, self.at
        rows = self.changed_rows(base)
        if rows is None:
            np.copyto(pixels, start, casting="unsafe")
        else:                                       # the rest of the frame already shows `start`
            for top, bottom in rows:
                pixels[top:bottom] = start[top:bottom]
        ctx = camera.get_cairo_context(pixels)
        drawn = [i for i, (leaf, look) in enumerate(zip(leaves, looks)) if look is not NOTHING and id(leaf) not in at]
        for i in drawn:
            camera.display_vectorized(leaves[i], ctx)
        camera.paths["layered"] += len(self.shapes)
        # what the frame holds over `base`: the layer's shapes and the ones drawn (their boxes)
        self.painted = (base, self.boxes_of(leaves, looks, drawn) if drawn else np.empty((0, 4)), self.boxes)
        self.dropped = False
        self.last = {id(leaf): (leaf, look) for leaf, look in zip(leaves, looks) if look}
        return True

    def holds(self, leaves, looks) -> bool:
        """The layer still gives this frame's pixels: every layer shape is among `leaves`, in the same
        order, looking the same, and no shape drawn over the layer comes before one it reaches. A
        layer shape that paints nothing (clear fill and strokes) may go, change or move in the
        order: it leaves the layer, which stays as it is (a shape that fades in waits there)."""
        shapes, at = self.shapes, self.at
        seen, placed, layer_rows, drawn, gone = -1, [], [], [], []
        for i, (leaf, look) in enumerate(zip(leaves, looks)):
            j = at.get(id(leaf))
            if j is not None:
                if shapes[j][1] == look and j > seen:
                    placed.append(i)
                    layer_rows.append(j)
                    seen = j
                    continue
                if visible(shapes[j][1]):
                    return False
                gone.append(j)           # leaves the layer, drawn from now on
            if look is not NOTHING:
                drawn.append(i)
        if len(placed) + len(gone) < len(shapes):     # some layer shapes went: only clear ones may
            kept = set(layer_rows) | set(gone)
            if any(visible(shapes[j][1]) for j in range(len(shapes)) if j not in kept):
                return False
        if placed and drawn and drawn[0] < placed[-1]:
            drawn = [i for i in drawn if i < placed[-1]]
            # (drawn x layer): a drawn shape reaches a layer shape that comes after it
            hit = (overlap(self.boxes_of(leaves, looks, drawn), self.boxes[layer_rows])
                   & (np.array(drawn)[:, None] < np.array(placed)[None, :]))
            if hit.any():
                return False
        if len(layer_rows) < len(shapes):
            self.shapes = [shapes[j] for j in layer_rows]
            self.boxes = self.boxes[layer_rows]
            self.at = {id(shape[0]): k for k, shape in enumerate(self.shapes)}
        return True

    def grow(self, leaves, looks) -> None:
        """Paint onto the layer the shapes that look as they did in the last frame and can join it:
        no shape drawn every frame comes before one and reaches it. (No layer shape after it
        reaches it either: holds() saw to that for every shape not on the layer. A shape that could
        not join is tried again RETRY frames later: what was in its way may have moved on.)"""
        last, refused, at, frame = self.last, self.refused, self.at, self.frame
        still = []
        for i, (leaf, look) in enumerate(zip(leaves, looks)):
            key = id(leaf)
            if look and key not in at:
                was = last.get(key)
                if was is not None and was[1] == look:
                    no = refused.get(key)
                    if no is None or frame - no[1] >= self.RETRY:
                        still.append(i)
        if not still or (not self.shapes and (len(still) < self.MIN_SHAPES or frame < self.quiet_until)):
            return
        # the shapes not on the layer up to the last still one (the still ones among them)
        reach = still[-1]
        others = [i for i in range(reach + 1) if looks[i] is not NOTHING and id(leaves[i]) not in at]
        row = {i: r for r, i in enumerate(others)}
        boxes, order = self.boxes_of(leaves, looks, others), np.array(others)
        tried = boxes[[row[i] for i in still]]                               # still x 4
        # (still x others): a shape comes before the still one and reaches it
        under = (overlap(tried, boxes) & (order[None, :] < np.array(still)[:, None]))
        drawn = np.ones(len(others), dtype=bool)       # a still shape that joins is no longer drawn
        joined = []
        for c, i in enumerate(still):
            if (under[c] & drawn).any():
                refused[id(leaves[i])] = (leaves[i], frame)
            else:
                drawn[row[i]] = False
                joined.append(i)
        if not joined or (not self.shapes and len(joined) < self.MIN_SHAPES):
            return
        camera = self.camera
        if not self.shapes:
            if self.pixels is None or self.pixels.shape != camera.pixel_array.shape:
                if self.pixels is not None:      # manim keeps a context per array id: not for a freed one
                    camera.pixel_array_to_cairo_context.pop(id(self.pixels), None)
                self.pixels = np.empty_like(camera.pixel_array)
            np.copyto(self.pixels, self.base, casting="unsafe")
            self.made = frame
        ctx = camera.get_cairo_context(self.pixels)
        for i in joined:
            camera.display_vectorized(leaves[i], ctx)
            refused.pop(id(leaves[i]), None)
        # the layer's shapes in draw order: those it had, and those that joined
        merged = sorted([(i, self.shapes[at[id(leaves[i])]], self.boxes[at[id(leaves[i])]])
                         for i, leaf in enumerate(leaves) if id(leaf) in at]
                        + [(i, (leaves[i], looks[i]), boxes[row[i]]) for i in joined], key=lambda e: e[0])
        self.shapes = [shape for _, shape, _ in merged]
        self.boxes = np.array([box for _, _, box in merged])
        self.at = {id(shape[0]): k for k, shape in enumerate(self.shapes)}

    def drop(self, short: bool) -> None:
        """Forget the layer (and which shapes could not join it); after a short-lived one, wait
        longer before the next."""
        if self.shapes:
            self.pause = min(2 * self.pause + 1, self.PAUSE_MAX) if short else 0
            self.quiet_until = self.frame + self.pause
            self.dropped = True
        self.shapes, self.at, self.boxes, self.refused = [], {}, np.empty((0, 4)), {}

    def changed_rows(self, base) -> list[tuple[int, int]] | None:
        """The rows (top, bottom: merged bands) where the camera's pixels, as the last frame left
        them, may differ from this frame's start picture (the layer, or `base`): those the shapes
        drawn over the layer reached, and where the layer was dropped, those its shapes reached
        and the new layer's do. (A shape that joined the layer was drawn in the last frame.) None:
        the whole frame (a new base, or pixels manim drew)."""
        if self.painted is None or self.painted[0] is not base:
            return None
        _, drawn, layer = self.painted
        boxes = np.concatenate([drawn, layer, self.boxes]) if self.dropped else drawn
        height = self.camera.pixel_array.shape[0]
        boxes = boxes[boxes[:, 2] <= boxes[:, 3]]                 # (one that paints nothing: none)
        if not len(boxes):
            return []
        tops = np.clip(np.floor(boxes[:, 2]), 0, height).astype(int)
        bottoms = np.clip(np.ceil(boxes[:, 3]) + 1, 0, height).astype(int)
        rows: list[list[int]] = []
        for top, bottom in sorted(zip(tops.tolist(), bottoms.tolist())):
            if rows and top <= rows[-1][1]:
                rows[-1][1] = max(rows[-1][1], bottom)
            elif top < bottom:
                rows.append([top, bottom])
        return [(top, bottom) for top, bottom in rows]

    def boxes_of(self, leaves, looks, indices) -> np.ndarray:
        """len(indices) x 4: the surface pixels each shape can paint (left, right, top, bottom): its
        points' box (a Bezier curve stays inside its control points'), widened by its stroke as far
        as a mitred corner reaches (cairo's miter limit, 10, is 5 widths from the corner) and by two
        pixels of antialiasing; the whole plane for a shape with points that are not finite, none
        for one that paints nothing."""
        if self.to_px is None:
            m = self.camera.get_cairo_context(self.camera.pixel_array).get_matrix()
            self.to_px = (m.xx, m.x0, m.yy, m.y0)
        sx, tx, sy, ty = self.to_px
        points, sizes, widths, clear = [], [], [], []
        for i in indices:
            leaf, look = leaves[i], looks[i]
            points.append(leaf.points)
            sizes.append(len(leaf.points))
            if look:                            # (its widths are in its look)
                widths.append(look[6] if look[6] > look[7] else look[7])
                clear.append(not look[0])
            else:
                widths.append(max(leaf.get_stroke_width(), leaf.get_stroke_width(True)))
                clear.append(False)
        starts = np.cumsum([0, *sizes[:-1]])                               # each shape's first point
        xy = np.concatenate(points)[:, :2]                                 # all points, n x 2
        lo, hi = np.minimum.reduceat(xy, starts), np.maximum.reduceat(xy, starts)   # per shape
        pad = 2.0 + np.array(widths) * (5.0 * self.camera.cairo_line_width_multiple * max(abs(sx), abs(sy)))
        xa, xb, ya, yb = sx * lo[:, 0] + tx, sx * hi[:, 0] + tx, sy * lo[:, 1] + ty, sy * hi[:, 1] + ty
        boxes = np.stack([np.minimum(xa, xb) - pad, np.maximum(xa, xb) + pad,
                          np.minimum(ya, yb) - pad, np.maximum(ya, yb) + pad], axis=1)
        boxes[~np.isfinite(boxes).all(axis=1)] = (-np.inf, np.inf, -np.inf, np.inf)
        boxes[clear] = (np.inf, -np.inf, np.inf, -np.inf)
        return boxes
