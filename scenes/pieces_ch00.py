"""Chapter 00's pictures of why: a sequence as a strip and the square of comparisons attention makes
over it, the 256 bytes every text is made of, and the vocabulary as one long list with ids as places
in it. Each is built from numbers it is given (the bundle's, the tokenizer files'); nothing here is
a figure of its own.
"""
from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Line, Rectangle, Square, VGroup

from onepass.scenes import style as S
from onepass.scenes.layout import GAP
from onepass.scenes.widgets import TokenChip

# Lines between cells are drawn up to this many cells a side; a longer sequence is drawn as one
# filled shape (its size still says how long it is).
MOST_CUTS = 40


def cells_strip(n: int, unit: float, colour) -> VGroup:
    """A sequence of n positions as one bar n units long, cut into its cells."""
    bar = Rectangle(width=n * unit, height=unit, stroke_color=colour, stroke_width=2, fill_color=colour,
                    fill_opacity=0.35)
    cuts = VGroup()
    if n <= MOST_CUTS:
        left = bar.get_left()[0]
        cuts = VGroup(*[Line([left + k * unit, bar.get_bottom()[1], 0], [left + k * unit, bar.get_top()[1], 0],
                             color=S.BACKGROUND, stroke_width=2) for k in range(1, n)])
    return VGroup(bar, cuts)


def comparisons_square(n: int, unit: float, colour) -> VGroup:
    """The n x n comparisons attention makes over a sequence of n: a square of n x n cells."""
    side = n * unit
    body = Square(side, stroke_color=colour, stroke_width=2, fill_color=colour, fill_opacity=0.3)
    grid = VGroup()
    if n <= MOST_CUTS:
        left, top = body.get_left()[0], body.get_top()[1]
        bottom, right = body.get_bottom()[1], body.get_right()[0]
        for k in range(1, n):
            grid.add(Line([left + k * unit, bottom, 0], [left + k * unit, top, 0], color=S.BACKGROUND, stroke_width=1))
            grid.add(Line([left, top - k * unit, 0], [right, top - k * unit, 0], color=S.BACKGROUND, stroke_width=1))
    return VGroup(body, grid)


def byte_grid(lit: set[int], cell: float) -> VGroup:
    """The 256 byte values as a 16 x 16 grid; the cells in `lit` in the tokens' colour."""
    side = 16
    cells = VGroup(*[Square(cell, stroke_color=S.BACKGROUND, stroke_width=1,
                            fill_color=S.TOKEN if b in lit else S.PANEL, fill_opacity=1)
                     for b in range(side * side)])
    return cells.arrange_in_grid(rows=side, cols=side, buff=GAP.none)


class VocabStrip(VGroup):
    """GPT-2's vocabulary as one long bar: the bytes, the merges in the order they were learned, the
    end-of-text marker. The bytes and the marker are a sliver of 50,257 entries; each gets at least
    `least` of the width so it can be seen (ids inside a part are spread evenly across it)."""

    def __init__(self, byte_tokens: int, merges: int, special: int, width: float, height: float,
                 least: float, order: list[tuple[str, int]] | None = None):
        super().__init__()
        total = byte_tokens + merges + special
        w_bytes = max(least, width * byte_tokens / total)
        w_special = max(least, width * special / total) if special else 0.0
        w_merges = width - w_bytes - w_special
        self.counts = (byte_tokens, merges, special)
        # `order`: the parts in id order as runs, [('special', 17), ('bytes', 235), ('merges', 48900)] for
        # SmolLM2 (data/facts/ch00.py vocab_order); None: GPT-2's bytes, merges, marker
        self.order = order
        self.kinds = [k for k, _ in order] if order else ["bytes", "merges", "special"][:3 if special else 2]
        self.parts = VGroup()
        looks = {"bytes": (w_bytes, S.MUTED, 0.9), "merges": (w_merges, S.TOKEN, 0.55),
                 "special": (w_special, S.ATTENTION, 0.9)}
        for kind in (self.kinds if order else ("bytes", "merges", "special")):
            w, colour, opacity = looks[kind]
            if w > 0:
                self.parts.add(Rectangle(width=w, height=height, stroke_width=0, fill_color=colour,
                                         fill_opacity=opacity))
        self.parts.arrange(RIGHT, buff=GAP.none)
        self.add(self.parts)

    def x_of(self, token_id: int) -> float:
        """Where id `token_id` sits along the bar (the middle of its slot)."""
        if self.order:
            start = 0
            for part, (_, n) in zip(self.parts, self.order):
                if token_id < start + n:
                    return part.get_left()[0] + part.width * (token_id - start + 0.5) / n
                start += n
            return self.parts[-1].get_right()[0]
        byte_tokens, merges, _ = self.counts
        for part, start, n in zip(self.parts, (0, byte_tokens, byte_tokens + merges), self.counts):
            if token_id < start + n:
                return part.get_left()[0] + part.width * (token_id - start + 0.5) / n
        return self.parts[-1].get_right()[0]


def callouts(strip: VocabStrip, texts: list[str], ids: list[int], size: int, lift: float) -> VGroup:
    """Chips for some ids above the strip, in the order of their ids (evenly spread, so that ids close
    together stay readable), each joined to its place on the strip by a line. Returns (chips, lines,
    ticks) as one VGroup of three."""
    order = sorted(range(len(ids)), key=lambda k: (ids[k], k))
    chips = VGroup(*[TokenChip(texts[k], ids[k], size=size) for k in order])
    for chip, k in zip(chips, order):
        chip.token_id = ids[k]
    chips.arrange(RIGHT, buff=GAP.m, aligned_edge=DOWN)
    if chips.width > strip.width:
        chips.scale_to_fit_width(strip.width)
    chips.move_to(strip.get_top() + UP * (lift + chips.height / 2))
    chips.set_x(strip.get_x())
    top = strip.get_top()[1]
    ticks, lines = VGroup(), VGroup()
    for chip, k in zip(chips, order):
        x = strip.x_of(ids[k])
        ticks.add(Line([x, strip.get_bottom()[1], 0], [x, top, 0], color=S.INK, stroke_width=3))
        lines.add(Line(chip.get_bottom() + DOWN * GAP.xs, [x, top, 0], color=S.MUTED, stroke_width=2))
    return VGroup(chips, lines, ticks)


def squares_pair(sizes: tuple[int, int], most_side: float, colours) -> tuple[VGroup, VGroup, float]:
    """Two sequences (strips) and their squares of comparisons at one scale: the longer square is
    `most_side` a side. Returns (strips, squares, unit)."""
    unit = most_side / max(sizes)
    strips = VGroup(*[cells_strip(n, unit, c) for n, c in zip(sizes, colours)])
    squares = VGroup(*[comparisons_square(n, unit, c) for n, c in zip(sizes, colours)])
    for strip, square in zip(strips, squares):
        square.next_to(strip, DOWN, buff=GAP.none, aligned_edge=LEFT)
    return strips, squares, unit
