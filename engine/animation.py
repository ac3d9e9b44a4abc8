"""manim's animations, extended where onepass's pictures need more than their arguments.

Indication: manim's Indicate (swell and take a colour, and back) with its target made by one
overridable method, `indicated(target, scale_factor, color)`, instead of Indicate.create_target,
which reads the `scale_factor` and `color` Indicate keeps (scenes/follow.py's Swell overrides it).
CrossFade: Transform's contract (the mobject stays where it is, in its groups, and ends looking like
the target) drawn as a fade out and then in, for words that change: a Transform moves each glyph's
outline point by point, and between two strings the letters pass through shapes that are no letters.
"""
from __future__ import annotations

from manim import Indicate, Text, Transform

from onepass.engine.text import set_string, string_of


class Indication(Indicate):
    def create_target(self):
        return self.indicated(self.mobject.copy(), self.scale_factor, self.color)

    def indicated(self, target, scale_factor: float, color):
        """`target` (a copy of the mobject) as it looks at the indication's height: manim's Indicate
        scales it about its centre and colours it."""
        target.scale(scale_factor)
        target.set_color(color)
        return target


class CrossFade(Transform):
    """`mobject` becomes `target_mobject`: its old look fades out where it stood, then the new one fades
    in where it will stand; nothing moves. The old look is gone by half the play and the new one
    starts after it, so the two never show at once (two notes over each other read as neither). Like
    Transform (unlike FadeTransform, which puts the target in its place) the mobject stays the one on
    screen, inside whatever groups hold it: the old look is drawn, for the length of the play, as a
    part of it. Its Texts say the target's strings after."""

    def __init__(self, mobject, target_mobject, **kwargs):
        self.arrival = target_mobject.copy()
        super().__init__(mobject, target_mobject.copy(), **kwargs)

    def begin(self):
        mob = self.mobject
        self.leaving = mob.copy()
        # the new look in place from the first frame, unseen; only opacities change from here on
        mob.become(self.arrival.copy()).fade(1)
        mob.add(self.leaving)
        self.leaving_ids = {id(m) for m in self.leaving.get_family()}
        self.target_mobject.add(self.leaving.copy().fade(1))
        super().begin()

    def interpolate_submobject(self, submobject, starting_submobject, target_copy, alpha):
        # the old look fades out over the play's first half, the new one in over its second
        alpha = min(1.0, 2 * alpha) if id(submobject) in self.leaving_ids else max(0.0, 2 * alpha - 1)
        return super().interpolate_submobject(submobject, starting_submobject, target_copy, alpha)

    def clean_up_from_scene(self, scene):
        mob = self.mobject
        mob.remove(self.leaving)
        mob.become(self.arrival)        # exactly the target's look (a shape without points is never faded)
        texts = [[m for m in x.get_family() if isinstance(m, Text)] for x in (mob, self.arrival)]
        for text, said in zip(*texts):
            set_string(text, string_of(said))
        super().clean_up_from_scene(scene)
