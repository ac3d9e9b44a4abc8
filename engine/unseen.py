"""A Transform's parts that paint nothing from its first frame to its last, left alone until it ends.

manim interpolates every part of a Transform's mobject on every frame, and the camera draws each.
Where the mobject and its target differ in shape, manim pads both with copies (faded to nothing)
and points until their families match: chapter 02's ReplacementTransform of five value strips into
their sum (5 x 65 cells into 65) is 6,370 parts a frame, of which 5,983 are clear at both ends
(fill and strokes all transparent, or strokes of no width), so clear in every frame (a channel that
is 0 at both ends interpolates to exactly 0, whatever the rate function gives): manim spent half a
second a frame at 480p15 moving and painting shapes that paint no pixel.

For a Transform whose mobject leaves the scene when it ends (a ReplacementTransform's, a remover's),
transform_interpolate_mobject skips such parts on every frame before the last (alpha 1, where every
part is interpolated as manim does, so the mobject ends exactly as manim leaves it), and the camera
(engine/still_layer.py) does not draw them while they are in UNSEEN: the same pixels, since cairo
paints nothing with a clear source. The one thing not kept is the skipped parts' traced paths
(FilmCamera keeps a shape's last path): only a part put back in the scene and shown again could
draw from another trace, within cairo's 1/256 of a pixel.

Every other part of a Transform on a straight path is interpolated with all the others at once
(interpolate_parts): manim's arithmetic on one array per kind instead of one small array per part,
the same floats (a tenth of a draft scene's CPU in chapters 00 and 02 was manim's per part).
"""
from __future__ import annotations

import weakref

import numpy as np
from manim import Animation, Mobject, Transform, VMobject
from manim.utils.bezier import interpolate

# the parts being skipped, while their Transform runs: the camera leaves them undrawn
UNSEEN: weakref.WeakSet = weakref.WeakSet()

# each running Transform's family size and the parts it skips (by place in its family)
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

_MANIMS_INTERPOLATE = Animation.interpolate_mobject
_TRANSFORMS_PART = Transform.interpolate_submobject
_MANIMS_ANIMATION_STEP, _MANIMS_UPDATE = Animation.interpolate, Animation.update_mobjects
_MANIMS_MOBJECT_INTERPOLATE = Mobject.interpolate
_MANIMS_COLOR_INTERPOLATE = VMobject.interpolate_color
# what VMobject.interpolate_color interpolates, arrays of rows first (the points come before them)
_ROWS = ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas", "sheen_direction")
_VALUES = ("stroke_width", "background_stroke_width", "sheen_factor")
_FLOAT = np.dtype(float)


def _clear_channels(a, b) -> bool:
    """Parts `a` and `b` (a start and a target) paint nothing, and neither does any interpolation
    of them: fill transparent in both; each stroke (and background stroke) transparent in both,
    or of no width in both. (NaN counts as paint.)"""
    if not (isinstance(a, VMobject) and isinstance(b, VMobject)):
        return False
    if (a.get_fill_rgbas()[:, 3] != 0).any() or (b.get_fill_rgbas()[:, 3] != 0).any():
        return False
    for back in (False, True):
        if a.get_stroke_width(back) == 0 and b.get_stroke_width(back) == 0:
            continue
        if (a.get_stroke_rgbas(back)[:, 3] != 0).any() or (b.get_stroke_rgbas(back)[:, 3] != 0).any():
            return False
    return True


def transform_interpolate_mobject(self, alpha: float) -> None:
    """Animation.interpolate_mobject for a Transform, without the parts clear at both ends when
    the mobject leaves the scene at the end (module docstring): the same parts, in the same order,
    with the same sub-alphas for the rest."""
    if type(self).interpolate_submobject is not _TRANSFORMS_PART:     # (a part moved its own way: manim's)
        return _MANIMS_INTERPOLATE(self, alpha)
    if alpha >= 1:            # the end: every part, as manim interpolates it; all drawn again
        _BLENDS.pop(self, None)
        plan = _PLANS.pop(self, None)
        if plan is not None:
            for m in plan[1].values():
                UNSEEN.discard(m)
        return _MANIMS_INTERPOLATE(self, alpha)
    families = list(self.get_all_families_zipped())
    n = len(families)
    if not (self.remover or self.replace_mobject_with_target_in_scene):
        return interpolate_parts(self, families, alpha, ())
    plan = _PLANS.get(self)
    if plan is None or plan[0] != n or any(families[i][0] is not m for i, m in plan[1].items()):
        # found once per play (its start and target are the Transform's own copies); again only
        # where the family changed
        if plan is not None:
            for m in plan[1].values():
                UNSEEN.discard(m)
        plan = (n, {i: mobs[0] for i, mobs in enumerate(families) if _clear_channels(mobs[1], mobs[2])})
        _PLANS[self] = plan
        UNSEEN.update(plan[1].values())
    interpolate_parts(self, families, alpha, plan[1])


def interpolate_parts(self, families: list, alpha: float, skip) -> None:
    """Transform.interpolate_submobject on every part of `families` but those in `skip` (by place),
    each at its sub-alpha, with the arithmetic of all parts done at once. manim's Mobject.interpolate
    of a VMobject is `(1 - a) * start + a * end` (bezier.interpolate) on its points, fill, stroke and
    background stroke colours and sheen direction, one small array each per part per frame, and on three
    numbers. Here the start's and the end's rows of every part are put together once per play, after
    begin (where nothing changes a Transform's starting copy and target while it runs: _still_ends),
    and each frame is one
    numpy expression per array over all of them, each row at its part's own sub-alpha: the same
    operations on the same numbers, so the same floats; each part's arrays are its rows of the result.
    A part at sub-alpha 1 (manim then sets copies of the target's) gets manim's own interpolate, and
    so does every part of a Transform on another path than a straight one, with ends that may change,
    or with a part that interpolates its own way or whose two ends' arrays are not float rows of one
    shape."""
    n = len(families)
    plan = _BLENDS.get(self)
    if alpha == 0 and plan is None:
        # begin()'s interpolate(0): a subclass may still change its ends after it (FadeTransform fades
        # them), so no rows are kept before its first frame
        return _each_part(self, families, alpha, skip)
    if plan is None or plan.n != n or any(f[0] is not m or f[1] is not a or f[2] is not b
                                          for f, m, a, b in zip(families, plan.parts, plan.starts, plan.ends)):
        plan = _BLENDS[self] = Blend(self, families)
    if not plan.batched:
        return _each_part(self, families, alpha, skip)
    if self.lag_ratio == 0:         # every part at one sub-alpha (get_sub_alpha's, the same for each)
        a = self.get_sub_alpha(alpha, 0, n)
        alphas = [a] * n
        columns = [a] * len(_ARRAYS)
    else:
        alphas = [self.get_sub_alpha(alpha, i, n) for i in range(n)]
        columns = [np.repeat(alphas, rows)[:, None] for rows in plan.rows]
    for attr, start, end, column, at, one in zip(_ARRAYS, plan.start, plan.end, columns, plan.at, plan.flat):
        blend = (1 - column) * start + column * end
        for i, part in enumerate(plan.parts):
            if i not in skip and alphas[i] != 1.0:
                setattr(part, attr, blend[at[i]] if one[i] else blend[at[i]:at[i + 1]])
    for i, (part, start, end) in enumerate(families):
        if i in skip:
            continue
        a = alphas[i]
        if a == 1.0:
            self.interpolate_submobject(part, start, end, a)
            continue
        for attr in _VALUES:
            setattr(part, attr, interpolate(getattr(start, attr), getattr(end, attr), a))


def _each_part(self, families: list, alpha: float, skip) -> None:
    """manim's own interpolation of every part but those in `skip`, one at a time at its sub-alpha."""
    n = len(families)
    for i, mobs in enumerate(families):
        if i not in skip:
            self.interpolate_submobject(*mobs, self.get_sub_alpha(alpha, i, n))


_BLENDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ARRAYS = ("points", *_ROWS)


class Blend:
    """One Transform's starting and target rows, each array's over all its parts (`start`, `end`),
    where each part's rows begin (`at`, per array) and how many rows each part has (`rows`); `flat`:
    the part's array is one row (a sheen direction), given back without its row dimension."""

    def __init__(self, anim, families: list):
        self.n = len(families)
        self.parts = [f[0] for f in families]
        self.starts, self.ends = [f[1] for f in families], [f[2] for f in families]
        # (each part once, and none of them an end: an end read while its parts are written would
        # change from frame to frame, as kept rows do not)
        parts = set(map(id, self.parts))
        self.batched = (anim.path_func is interpolate and self.n > 1 and len(parts) == self.n
                        and parts.isdisjoint(map(id, self.starts)) and parts.isdisjoint(map(id, self.ends))
                        and _still_ends(anim) and all(_plain(*f) for f in families))
        if not self.batched:
            return
        self.start, self.end, self.at, self.rows, self.flat = [], [], [], [], []
        for attr in _ARRAYS:
            starts = [getattr(f[1], attr) for f in families]
            ends = [getattr(f[2], attr) for f in families]
            rows = [len(x) if x.ndim == 2 else 1 for x in starts]
            self.start.append(np.concatenate([x.reshape(-1, x.shape[-1]) for x in starts]))
            self.end.append(np.concatenate([x.reshape(-1, x.shape[-1]) for x in ends]))
            self.at.append([0, *np.cumsum(rows).tolist()])
            self.rows.append(rows)
            self.flat.append([x.ndim == 1 for x in starts])


def _still_ends(anim) -> bool:
    """Nothing changes `anim`'s starting copy and target while it runs: its frames are manim's own
    interpolate and update_mobjects (TransformAnimations moves its ends with two other animations),
    and no member of them has an updater (update_mobjects runs theirs every frame)."""
    cls = type(anim)
    if cls.interpolate is not _MANIMS_ANIMATION_STEP or cls.update_mobjects is not _MANIMS_UPDATE:
        return False
    return not any(m.updaters for end in anim.get_all_mobjects() if end is not anim.mobject for m in end.get_family())


def _plain(part, start, end) -> bool:
    """`part` interpolates as manim's VMobject does, and `start` and `end` hold float arrays of one
    shape for every array it interpolates (manim's numpy would broadcast others: left to it)."""
    cls = type(part)
    if cls.interpolate is not _MANIMS_MOBJECT_INTERPOLATE or cls.interpolate_color is not _MANIMS_COLOR_INTERPOLATE:
        return False
    for attr in _ARRAYS:
        a, b = getattr(start, attr, None), getattr(end, attr, None)
        if not (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is _FLOAT and b.dtype is _FLOAT
                and a.shape == b.shape and a.ndim in ((2,) if attr == "points" else (1, 2)) and a.shape[-1] > 0):
            return False
    return True


def forget() -> None:
    """Nothing skipped any more (a render's end, or one cut short)."""
    UNSEEN.clear()
    _PLANS.clear()
    _BLENDS.clear()
