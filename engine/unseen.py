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
"""
from __future__ import annotations

import weakref

from manim import Animation, Transform, VMobject

# the parts being skipped, while their Transform runs: the camera leaves them undrawn
UNSEEN: weakref.WeakSet = weakref.WeakSet()

# each running Transform's family size and the parts it skips (by place in its family)
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

_MANIMS_INTERPOLATE = Animation.interpolate_mobject
_TRANSFORMS_PART = Transform.interpolate_submobject


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
    if not ((self.remover or self.replace_mobject_with_target_in_scene)
            and type(self).interpolate_submobject is _TRANSFORMS_PART):     # (a part moved its own way: all)
        return _MANIMS_INTERPOLATE(self, alpha)
    if alpha >= 1:            # the end: every part, as manim interpolates it; all drawn again
        plan = _PLANS.pop(self, None)
        if plan is not None:
            for m in plan[1].values():
                UNSEEN.discard(m)
        return _MANIMS_INTERPOLATE(self, alpha)
    families = list(self.get_all_families_zipped())
    n = len(families)
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
    skip = plan[1]
    for i, mobs in enumerate(families):
        if i not in skip:
            self.interpolate_submobject(*mobs, self.get_sub_alpha(alpha, i, n))


def forget() -> None:
    """Nothing skipped any more (a render's end, or one cut short)."""
    UNSEEN.clear()
    _PLANS.clear()
