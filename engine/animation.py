"""manim's animations, extended where onepass's pictures need more than their arguments.

Indication: manim's Indicate (swell and take a colour, and back) with its target made by one
overridable method, `indicated(target, scale_factor, color)`, instead of Indicate.create_target,
which reads the `scale_factor` and `color` Indicate keeps (scenes/follow.py's Swell overrides it).
"""
from __future__ import annotations

from manim import Indicate


class Indication(Indicate):
    def create_target(self):
        return self.indicated(self.mobject.copy(), self.scale_factor, self.color)

    def indicated(self, target, scale_factor: float, color):
        """`target` (a copy of the mobject) as it looks at the indication's height: manim's Indicate
        scales it about its centre and colours it."""
        target.scale(scale_factor)
        target.set_color(color)
        return target
