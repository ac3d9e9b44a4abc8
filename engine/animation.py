"""manim's animations, extended where onepass's pictures need more than their arguments.

Indication: manim's Indicate (swell and take a colour, and back) with its target made by one
overridable method, `indicated(target, scale_factor, color)`, instead of Indicate.create_target,
which reads the `scale_factor` and `color` Indicate keeps (scenes/follow.py's Swell overrides it).
CrossFade: Transform's contract (the mobject stays where it is, in its groups, and ends looking like
the target) drawn as a fade out and then in, for words that change: a Transform moves each glyph's
outline point by point, and between two strings the letters pass through shapes that are no letters.
"""
from __future__ import annotations

from manim import Animation, Indicate, Text, Transform, VMobject

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
    part of it. Its Texts say the target's strings after.

    Only opacities change, each part's from its own look: Transform's pairing of the mobject's parts
    with the target's (align_data pads the shorter family with copies, and become() had padded the new
    look to the old one's count) paired glyphs of the new string with other glyphs, so some moved
    towards another letter's outline and some stayed unseen till the end ("dispersión" lacked its i
    and its ó for the play)."""

    def __init__(self, mobject, target_mobject, **kwargs):
        self.arrival = target_mobject.copy()
        super().__init__(mobject, target_mobject.copy(), **kwargs)

    def begin(self):
        mob = self.mobject
        self.leaving = mob.copy()
        # the new look in place from the first frame; only opacities change from here on
        mob.become(self.arrival.copy())
        mob.add(self.leaving)
        leaving = {id(m) for m in self.leaving.get_family()}
        # each part's own opacities (fill, stroke, background stroke), and whether it leaves or arrives
        self.looks = [(m, id(m) in leaving, (m.get_fill_opacity(), m.get_stroke_opacity(),
                                              m.get_stroke_opacity(background=True)))
                      for m in mob.family_members_with_points() if isinstance(m, VMobject)]
        self.target_copy = self.target_mobject     # nothing is aligned with it: no part moves
        Animation.begin(self)

    def interpolate_mobject(self, alpha: float) -> None:
        # the old look fades out over the play's first half, the new one in over its second
        a = self.rate_func(alpha)
        out, into = 1 - min(1.0, 2 * a), max(0.0, 2 * a - 1)
        for m, leaves, (fill, stroke, back) in self.looks:
            k = out if leaves else into
            m.set_fill(opacity=fill * k, family=False)
            m.set_stroke(opacity=stroke * k, family=False)
            m.set_stroke(opacity=back * k, background=True, family=False)

    def clean_up_from_scene(self, scene):
        mob = self.mobject
        mob.remove(self.leaving)
        mob.become(self.arrival)        # exactly the target's look (a shape without points is never faded)
        texts = [[m for m in x.get_family() if isinstance(m, Text)] for x in (mob, self.arrival)]
        for text, said in zip(*texts):
            set_string(text, string_of(said))
        super().clean_up_from_scene(scene)
