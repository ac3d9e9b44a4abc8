"""The Σ FLOPs meter: a total drawn from glyphs shaped once (no Text or TeX per frame) and the
step being paid for. ChapterScene (scenes/base.py) builds it and pays through it; scenes call
`self.pay(...)`, never the meter.
"""
from __future__ import annotations

import numpy as np
from manim import DOWN, RIGHT, Animation, FadeIn, FadeOut, Rectangle, Text, VGroup, VMobject, rate_functions

from onepass.scenes import style as S
from onepass.words import numbers as N
from onepass.scenes.text import MonoGlyphs, fit_width, label

_DIGITS = "0123456789,"
# the step line's widest: English's steps fit in 4.2; a translation's longer words get room to the
# left (the heading column ends at 6.5 from the left edge, far from here) instead of shrinking
STEP_W = 5.2


class GlyphCounter(VGroup):
    """A right-aligned integer drawn from the glyphs `MonoGlyphs` shaped once (no per-frame Text/TeX).

    The digits are one VMobject whose points are put together from those outlines, laid out
    as Pango lays out the same string, when the value changes: setting a value costs a few
    array copies, and drawing it is one cairo path however many digits it has.
    """

    def __init__(self, value: int = 0, slots: int = 15, size: int = 30, color=S.FLOPS):
        super().__init__()
        self.font = MonoGlyphs.at(max(size, S.SMALL))
        if self.font is None:
            raise ValueError(f"the monospace face cannot be composed at size {size}")
        self.advance = self.font.advance
        ink = np.concatenate([self.font.points[c] for c in _DIGITS])
        # the outline's first column, as a cell: digits sit in the middle of their advance
        first = self.font.points[_DIGITS[0]][:, 0]
        self.cell_left = (first.min() + first.max()) / 2 - self.advance / 2
        self.ink_mid = (ink[:, 1].min() + ink[:, 1].max()) / 2
        self.digits = VMobject(stroke_width=0, fill_color=color, fill_opacity=1)
        self.add(self.digits)
        self.slots = slots
        # a fixed invisible frame so the group keeps its size while digits change
        self.frame = Rectangle(width=slots * self.advance, height=np.ptp(ink[:, 1]), stroke_width=0,
                               fill_opacity=0)
        self.add(self.frame)
        self.value = None
        self.set_value(value)

    def set_value(self, value: int):
        value = int(value)
        if value == self.value:
            return self
        self.value = value
        text = N.fmt_int(value)
        if len(text) > self.slots:  # never show a silently truncated total
            raise ValueError(f"{text} needs {len(text)} slots; this counter has {self.slots}")
        left = self.frame.get_right()[0] - len(text) * self.advance
        self.digits.set_points(self.font.outline(text) + np.array(
            [left - self.cell_left, self.frame.get_center()[1] - self.ink_mid, 0]))
        return self


class CountTo(Animation):
    """Animate a GlyphCounter from its value to `target`, eased by `rate_func` (smooth unless told)."""

    def __init__(self, counter: GlyphCounter, target: int, **kw):
        self.start_value, self.target = counter.value, int(target)
        kw.setdefault("rate_func", rate_functions.smooth)
        super().__init__(counter, **kw)

    def interpolate_mobject(self, alpha: float) -> None:
        # as manim's ChangingDecimal: the value follows rate_func(alpha), not alpha itself
        t = self.rate_func(alpha)
        self.mobject.set_value(round(self.start_value + (self.target - self.start_value) * t))


def meter_slots(widest: int) -> int:
    """Digits and commas a meter needs to show totals up to `widest`, and a gap before them."""
    return len(N.fmt_int(widest)) + 1


class FlopsMeter(VGroup):
    """Σ FLOPs: the running total and the step being paid for; `widest` is the largest total it
    will show (the meter is as wide as that, so it never changes width while it counts); `title`
    its name in the film's language."""

    def __init__(self, value: int, step: str, widest: int, title: str):
        super().__init__()
        self.title = label(title, S.SMALL, S.MUTED, compact=True)
        self.counter = GlyphCounter(value, slots=meter_slots(max(widest, value)), size=28)
        self.counter.next_to(self.title, RIGHT, buff=0.2)
        self.title.align_to(self.counter, DOWN)
        self.step_mob = self._step_text(step)
        self.add(self.title, self.counter, self.step_mob)

    def _step_text(self, step: str) -> Text:
        t = fit_width(label(step or "·", S.SMALL, S.FLOPS, compact=True), STEP_W)
        if not step:
            t.set_opacity(0)  # an invisible placeholder keeps the layout
        return t.next_to(self.counter, DOWN, buff=0.12).align_to(self.counter, RIGHT)

    @property
    def value(self) -> int:
        return self.counter.value

    def pay(self, target: int, step: str, run_time: float = 1.5):
        """Animations that show `step` and run the total up to `target`."""
        new = self._step_text(step)
        old = self.step_mob
        self.remove(old)
        self.step_mob = new
        self.add(new)
        return [CountTo(self.counter, target, run_time=run_time), FadeOut(old, run_time=min(0.4, run_time)),
                FadeIn(new, run_time=min(0.4, run_time))]
