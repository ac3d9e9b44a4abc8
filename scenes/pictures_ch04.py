"""Chapter 04's pictures that carry an idea, each drawn from data/facts/ch04.py's figures:

* `AgreementStrips`: the tied unembedding as agreement: the last row and one token's embedding,
  dimension by dimension, their products, and the sum that is that token's score (its logit);
* `EntropyScale`: how spread out the vote is at each temperature, on a line from 0 nats (one token
  certain) to ln V (an even split);
* `GreedyRun`: the bundle's own greedy continuation, each token that repeats an earlier one marked;
* `DieBar`: the die roll: one number in [0, 1) landing in a token's slice of the bar of all the
  probability (tokens in rank order), magnified where the slice is too thin to see;
* `Die`: a die, drawn.

Words come in as arguments (the scene's catalog words); numbers are formatted by words/numbers.py.
"""
from __future__ import annotations

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    DashedLine,
    Dot,
    Line,
    Rectangle,
    RoundedRectangle,
    SurroundingRectangle,
    Triangle,
    VGroup,
    VMobject,
)

from onepass.scenes import style as S
from onepass.scenes.follow import glow
from onepass.scenes.layout import GAP, below, place_row
from onepass.scenes.text import fit_lines, fit_width, label
from onepass.scenes.widgets import TokenChip
from onepass.words import numbers as N

CELL = 0.36          # one dimension's square in the agreement strips
BAR_H = 0.4          # the bar of all the probability


def strip(values: np.ndarray, vmax: float, n: int) -> VGroup:
    """The first `n` values as squares on the diverging scale, then '…'."""
    cells = VGroup(*[Rectangle(width=CELL, height=CELL, stroke_color=S.BACKGROUND, stroke_width=1,
                               fill_color=S.diverging(float(v), vmax), fill_opacity=1) for v in values[:n]])
    cells.arrange(RIGHT, buff=GAP.none)
    dots = label("…", S.SMALL, S.MUTED).next_to(cells, RIGHT, buff=GAP.xs)
    return VGroup(cells, dots)


class AgreementStrips(VGroup):
    """The last row (h) over one token's embedding (e) over their products h·e, dimension by dimension,
    each strip named on its right; the sum of all the products is the token's score.
    `texts`: (the row's name, the embedding's name, the products' name, the sum line)."""

    def __init__(self, h: np.ndarray, row: np.ndarray, products: np.ndarray, texts: tuple[str, str, str, str],
                 width: float, n: int = 20):
        super().__init__()
        h_name, e_name, prod_name, sum_text = texts
        colours = (S.RESIDUAL, S.TOKEN, S.LOGIT)
        names = [fit_lines(t, S.SMALL, c, width / 2) for t, c in zip((h_name, e_name, prod_name), colours)]
        dots_w = label("…", S.SMALL, S.MUTED).width + GAP.xs
        # as many dimensions as fit beside the widest name (text never shrinks)
        n = max(4, min(n, len(h), int((width - max(m.width for m in names) - GAP.s - dots_w) / CELL)))
        self.h = strip(h, float(np.abs(h).max()) or 1.0, n)
        self.e = strip(row, float(np.abs(row).max()) or 1.0, n)
        self.p = strip(products, float(np.abs(products).max()) or 1.0, n)
        rows = VGroup(self.h, self.e, self.p).arrange(DOWN, buff=GAP.m, aligned_edge=LEFT)
        for name, r in zip(names, (self.h, self.e, self.p)):
            name.next_to(r, RIGHT, buff=GAP.s)
        self.h_name, self.e_name, self.prod_name = names
        self.sum = fit_lines(sum_text, S.SMALL, S.LOGIT, width, mono=True)
        below(self.sum, rows, buff=GAP.m, aligned=LEFT)
        self.add(rows, *names, self.sum)


class EntropyScale(VGroup):
    """A line from 0 nats to `max_h` nats; one dot per temperature at its entropy, joined to a small
    picture of that temperature's vote over the line (its top probabilities as bars, `shapes`, on
    one scale) with its tag (`tags`); `ends`: the words under the two ends; `title` over it all."""

    def __init__(self, entropies: list[float], max_h: float, shapes: list[list[float]], tags: list[str],
                 subs: list[str], ends: tuple[str, str], title: str, width: float, bars_h: float = 1.3):
        super().__init__()
        self.axis = Line(LEFT * width / 2, RIGHT * width / 2, color=S.MUTED, stroke_width=3)
        tick = DOWN * GAP.s
        self.ticks = VGroup()
        for x, value in ((0.0, 0.0), (1.0, max_h)):
            p = self.at(x * max_h, max_h)
            # the value a gap under its tick: the glow that lights the value and its end's words (`ends_lit`)
            # keeps clear of the tick and the line (around the tick too, its edge ran along the line)
            self.ticks.add(Line(p, p + tick, color=S.MUTED, stroke_width=2),
                           label(N.fmt_fixed(value, 1), S.SMALL, S.MUTED, mono=True).next_to(p + tick, DOWN,
                                                                                             buff=GAP.m))
        left, right = (label(t, S.SMALL, S.MUTED) for t in ends)
        left.next_to(self.ticks[1], DOWN, buff=GAP.xs).align_to(self.axis, LEFT)
        right.next_to(self.ticks[3], DOWN, buff=GAP.xs).align_to(self.axis, RIGHT)
        self.ends = VGroup(left, right)
        top = max((max(p) for p in shapes if len(p)), default=1.0) or 1.0
        self.dots, self.minis, self.leads = VGroup(), VGroup(), VGroup()
        n = len(entropies)
        for j, (h, probs, t, sub) in enumerate(zip(entropies, shapes, tags, subs)):
            p = self.at(h, max_h)
            self.dots.add(Dot(p, radius=0.09, color=S.LOGIT))
            bars = VGroup(*[Rectangle(width=0.22, height=max(bars_h * q / top, 0.02), stroke_width=0,
                                      fill_color=S.LOGIT, fill_opacity=0.85) for q in probs])
            bars.arrange(RIGHT, buff=GAP.xxs, aligned_edge=DOWN)
            tag = VGroup(label(t, S.SMALL, S.LOGIT, mono=True), label(sub, S.SMALL, S.INK)).arrange(DOWN, buff=GAP.xxs)
            fit_width(tag, width / n - GAP.m)
            tag.next_to(bars, UP, buff=GAP.xs)
            mini = VGroup(bars, tag)
            # evenly spaced over the line, their bottoms a gap above it
            mini.next_to(self.axis.point_from_proportion((j + 0.5) / n), UP, buff=GAP.xl, coor_mask=UP)
            mini.set_x(self.axis.point_from_proportion((j + 0.5) / n)[0])
            self.minis.add(mini)
            self.leads.add(DashedLine(bars.get_bottom() + DOWN * GAP.xxs, p, color=S.LOGIT, stroke_width=2.5))
        self.title = label(title, S.SMALL, S.LOGIT)
        self.title.next_to(VGroup(self.axis, self.minis), UP, buff=GAP.m).align_to(self.axis, S.START)
        self.add(self.axis, self.ticks, self.ends, self.title, self.minis, self.leads, self.dots)

    def end_lit(self, k: int, color) -> VMobject:
        """A glow around end `k`'s words and its value (0: the left end, 1: the right), clear of its tick."""
        return glow(VGroup(self.ends[k], self.ticks[2 * k + 1]), color, buff=GAP.xs)

    def at(self, h: float, max_h: float) -> np.ndarray:
        frac = min(max(h / max_h, 0.0), 1.0) if max_h > 0 else 0.0
        return self.axis.point_from_proportion(frac)


class GreedyRun(VGroup):
    """The greedy continuation as chips, after `head` (the scene's words); a token that repeats an
    earlier one is boxed, with `again` under it."""

    def __init__(self, texts: list[str], ids: list[int], repeated: list[bool], head: str, again: str, width: float):
        super().__init__()
        self.head = label(head, S.SMALL, S.MUTED)
        self.chips = VGroup(*[TokenChip(t, color=S.LOGIT, size=S.SMALL) for t in texts])
        # chips flowed into lines as wide as `width` (text never shrinks), a tag's height between lines;
        # chips far enough apart that the tags under neighbours keep a word's gap (Spanish 'otra vez' is
        # wider than its chip: three tags read as one run of words)
        tag_w = label(again, S.SMALL).width
        gap = max(GAP.s, tag_w - min(c.width for c in self.chips) + GAP.m) if any(repeated) else GAP.s
        lines, line, used = VGroup(), [], 0.0
        for chip in self.chips:
            if line and used + gap + chip.width > width:
                lines.add(VGroup(*line).arrange(RIGHT, buff=gap))
                line, used = [], 0.0
            used += (gap if line else 0.0) + chip.width
            line.append(chip)
        if line:
            lines.add(VGroup(*line).arrange(RIGHT, buff=gap))
        lines.arrange(DOWN, buff=GAP.s + GAP.xs + label(again, S.SMALL).height, aligned_edge=LEFT)
        self.marks = VGroup()
        for chip, rep in zip(self.chips, repeated):
            if rep:
                box = SurroundingRectangle(chip, color=S.WARNING, buff=GAP.xxs, stroke_width=3)
                tag = label(again, S.SMALL, S.WARNING).next_to(box, DOWN, buff=GAP.xxs)
                self.marks.add(VGroup(box, tag))
        body = VGroup(self.chips, self.marks)
        below(body, self.head, buff=GAP.s, aligned=S.START)     # the heading over the run's start (right in Urdu)
        self.add(self.head, self.chips, self.marks)


class Die(VGroup):
    """A die showing five pips."""

    def __init__(self, side: float = 0.6, color=S.TOKEN):
        super().__init__()
        face = RoundedRectangle(corner_radius=side / 6, width=side, height=side, stroke_color=color, stroke_width=3,
                                fill_color=S.PANEL, fill_opacity=1)
        pips = VGroup(*[Dot(face.get_center() + side / 4 * np.array([dx, dy, 0.0]), radius=side / 12, color=color)
                        for dx, dy in ((-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1))])
        self.add(face, pips)


class DieBar(VGroup):
    """All the probability as one bar from 0 to 1, tokens in rank order (the top ones' slices, then
    the rest), the sampled token's slice lit, and the die's number `roll["u"]` as a pointer over it.
    Where the slice is thinner than `thin` the ranks around it are drawn magnified under the bar,
    joined to where they sit on it. `texts`: (the die's number, the magnifier's title)."""

    def __init__(self, f: dict, width: float, texts: tuple[str, str], colour=S.TOKEN, thin: float = 0.12,
                 around: int = 3):
        super().__init__()
        probs, order, roll = f["probs"], f["order"], f["roll"]
        self.w = width
        self.frame = Rectangle(width=width, height=BAR_H, stroke_color=S.MUTED, stroke_width=1.5)
        left = self.frame.get_left()[0]
        top = f["top"]
        slices, x = [], 0.0
        for i, c in enumerate(top):
            slices.append(self.slice(x, c["prob"], S.LOGIT, 0.9 if i % 2 == 0 else 0.55))
            x += c["prob"]
        slices.append(self.slice(x, 1.0 - x, S.MUTED, 0.35))          # the rest of the vocabulary
        self.slices = VGroup(*slices)
        self.chosen = self.slice(roll["start"], roll["end"] - roll["start"], colour, 1.0)
        ends = VGroup(label(N.fmt_general(0), S.SMALL, S.MUTED, mono=True).next_to(self.frame, DOWN, buff=GAP.xs,
                                                                                   aligned_edge=LEFT),
                      label(N.fmt_general(1), S.SMALL, S.MUTED, mono=True).next_to(self.frame, DOWN, buff=GAP.xs,
                                                                                   aligned_edge=RIGHT))
        self.ends = ends
        ux = left + width * roll["u"]
        self.pointer = self.arrow(ux, self.frame, texts[0], colour)
        self.add(self.slices, self.frame, self.chosen, ends)
        self.zoom = VGroup()
        if (roll["end"] - roll["start"]) * width < thin:
            self.zoom = self.magnify(probs, order, roll, texts[1], colour, around)
        self.add(self.zoom, self.pointer)
        self.thin = len(self.zoom) > 0

    def slice(self, start: float, share: float, colour, opacity: float) -> Rectangle:
        r = Rectangle(width=max(self.w * share, 1e-3), height=BAR_H, stroke_width=0, fill_color=colour,
                      fill_opacity=opacity)
        return place_row([r], [self.frame.get_left()[0] + self.w * start], "L", self.frame.get_y())[0]

    @staticmethod
    def arrow(x: float, frame, text: str, colour) -> VGroup:
        tip = Triangle(color=colour, fill_opacity=1, stroke_width=0).scale(0.12).rotate(np.pi)
        tip.next_to(frame, UP, buff=GAP.xxs).set_x(x)
        line = Line(tip.get_bottom(), [x, frame.get_bottom()[1], 0.0], color=colour, stroke_width=2)
        value = label(text, S.SMALL, colour, mono=True).next_to(tip, UP, buff=GAP.xs)
        value.set_x(min(max(x, frame.get_left()[0] + value.width / 2), frame.get_right()[0] - value.width / 2))
        return VGroup(tip, line, value)

    def magnify(self, probs, order, roll, title: str, colour, around: int) -> VGroup:
        """The ranks around the sampled one, as a bar of their own: their slices in proportion, the
        chosen one lit, the die's place in it marked; dashed lines to where they sit on the bar."""
        rank = roll["rank"]
        a, b = max(1, rank - around), min(len(order), rank + around)
        shares = np.asarray([probs[order[r - 1]] for r in range(a, b + 1)], dtype=np.float64)
        lo = roll["start"] - float(shares[:rank - a].sum())
        span = float(shares.sum())
        frame = Rectangle(width=self.w, height=BAR_H, stroke_color=S.MUTED, stroke_width=1.5)
        name = label(title, S.SMALL, S.MUTED)
        group = VGroup(name, frame).arrange(DOWN, buff=GAP.xs, aligned_edge=LEFT)
        below(group, self.ends, buff=GAP.m, aligned=LEFT).align_to(self.frame, LEFT)
        cells, x = VGroup(), frame.get_left()[0]
        for r, share in zip(range(a, b + 1), shares):
            w = self.w * share / span
            lit = r == rank
            cells.add(place_row([Rectangle(width=max(w, 1e-3), height=BAR_H, stroke_color=S.BACKGROUND, stroke_width=1,
                                           fill_color=colour if lit else S.MUTED, fill_opacity=1.0 if lit else 0.45)],
                                [x], "L", frame.get_y())[0])
            x += w
        left = self.frame.get_left()[0]
        x0, x1 = left + self.w * lo, left + self.w * (lo + span)
        bottom = self.frame.get_bottom()[1]
        joins = VGroup(DashedLine([x0, bottom, 0.0], frame.get_corner(UP + LEFT), color=S.MUTED, stroke_width=1.5),
                       DashedLine([x1, bottom, 0.0], frame.get_corner(UP + RIGHT), color=S.MUTED, stroke_width=1.5))
        ux = frame.get_left()[0] + self.w * (roll["u"] - lo) / span
        mark = Line([ux, frame.get_top()[1], 0.0], [ux, frame.get_bottom()[1], 0.0], color=S.INK, stroke_width=3)
        out = VGroup(joins, cells, frame, name, mark)
        out.frame, out.cells = frame, cells
        return out
