"""Placing things by name: the film's spacing scale, regions (style.Region: S.CONTENT, S.TEXT,
S.SIDE_PANEL, S.LEFT_HALF, …) and the helpers that put mobjects into them, under each other and
into tables.

Scenes say where a thing goes relative to a region, a line of style.py (S.HEADLINE_Y, S.FOOTER_Y)
or another mobject, with gaps from `GAP`, instead of writing coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, VGroup

from onepass.scenes import style as S


@dataclass(frozen=True)
class Spacing:
    """One spacing scale for every gap of the film (manim units; the frame is 14.22 wide).

    Each step is about 1.5 times the last; manim's own SMALL_BUFF (0.1) and MED_SMALL_BUFF (0.25)
    are steps of it. A gap that has to hold something (a column of lines, a note) is computed from
    what it holds, not taken from the scale."""
    none: float = 0.0    # touching: the cells of one strip, an arrow from exactly its point
    xxs: float = 0.05    # hairline: an outline hugging what it marks
    xs: float = 0.1      # a label against the thing it names; the lines of one note
    s: float = 0.15      # the parts of one row: a chip and its id, a bar and its value
    m: float = 0.25      # a title over its grid; the rows of a list
    l: float = 0.4       # between the blocks of one picture
    xl: float = 0.6      # between pictures side by side


GAP = Spacing()


def place_in(mob, region: S.Region, aligned=None, buff: float = 0.0, x: float | None = None,
             y: float | None = None):
    """Move mob into a region: centred, or flush with an edge or a corner (LEFT, UP + LEFT, …), `buff`
    inside it. x= or y= pins that coordinate of the anchor instead (e.g. flush left at a row's height)."""
    direction = np.zeros(3) if aligned is None else np.sign(np.asarray(aligned, dtype=float))
    point = region.point(direction) - direction * buff
    if x is not None:
        point[0] = x
    if y is not None:
        point[1] = y
    return mob.move_to(point, aligned_edge=direction)


def fit_to(mob, region: S.Region | None = None, width: float | None = None, height: float | None = None,
           grow: float = 1.0):
    """Scale mob to fit a region's width and height (or the width/height given): down as far as needed,
    up by at most `grow` (1: never up). Scales about its centre: place it afterwards."""
    width = width if width is not None else (region.width if region is not None else None)
    height = height if height is not None else (region.height if region is not None else None)
    factor = grow
    if width is not None and mob.width > 0:
        factor = min(factor, width / mob.width)
    if height is not None and mob.height > 0:
        factor = min(factor, height / mob.height)
    return mob.scale(factor) if factor != 1.0 else mob


def below(mob, ref, buff: float = GAP.m, aligned=None):
    """mob under ref, `buff` apart; flush with ref's LEFT or RIGHT edge when `aligned` says so."""
    mob.next_to(ref, DOWN, buff=buff)
    return mob.align_to(ref, aligned) if aligned is not None else mob


def above(mob, ref, buff: float = GAP.m, aligned=None):
    """mob over ref, `buff` apart; flush with ref's LEFT or RIGHT edge when `aligned` says so."""
    mob.next_to(ref, UP, buff=buff)
    return mob.align_to(ref, aligned) if aligned is not None else mob


def columns(region: S.Region, n: int) -> list[S.Region]:
    """The region cut into n equal columns side by side, left to right (three families, three thirds)."""
    w = region.width / n
    return [region.with_(left=region.left + k * w, right=region.left + (k + 1) * w) for k in range(n)]


def keep_inside(mob, region: S.Region):
    """Shift mob (never scale it) back inside a region where it pokes out: into the content box, out of
    the caption band, off the frame's edge. Where it is larger than the region, left and bottom win."""
    left, right = mob.get_left()[0], mob.get_right()[0]
    bottom, top = mob.get_bottom()[1], mob.get_top()[1]
    dx = region.left - left if left < region.left else min(0.0, region.right - right)
    dy = region.bottom - bottom if bottom < region.bottom else min(0.0, region.top - top)
    if dx or dy:
        mob.shift(np.array([dx, dy, 0.0]))
    return mob


_EDGES = {"L": LEFT, "R": RIGHT, "C": np.zeros(3)}


def place_row(cells, xs, aligns, y: float) -> VGroup:
    """The cells of a table row on one line: each at its column's x, its LEFT ("L") or RIGHT ("R") edge
    there or centred ("C"). None leaves a column empty."""
    for m, x, a in zip(cells, xs, aligns):
        if m is not None:
            m.move_to([x, y, 0], aligned_edge=_EDGES[a])
    return VGroup(*[m for m in cells if m is not None])


def flow(items: Sequence, width: float, gap: float = GAP.s, line_gap: float = GAP.m, along=RIGHT,
         edge=UP, lines_aligned=LEFT) -> VGroup:
    """Lay items out like words in a paragraph: as many to a line as fit in `width` (`gap` apart,
    placed `along` RIGHT, or S.END for the reading direction, tops level with `edge`; None: centres),
    the lines under each other `line_gap` apart, flush with `lines_aligned` (None: centred). The items
    themselves move; returns the lines, a VGroup of one VGroup per line."""
    lines, line, used = [], [], 0.0
    for m in items:
        if line and used + gap + m.width > width:
            lines.append(line)
            line, used = [], 0.0
        used += (gap if line else 0.0) + m.width
        line.append(m)
    if line:
        lines.append(line)
    level = {} if edge is None else {"aligned_edge": edge}
    rows = VGroup(*[VGroup(*ln).arrange(along, buff=gap, **level) for ln in lines])
    rows.arrange(DOWN, buff=line_gap, **({} if lines_aligned is None else {"aligned_edge": lines_aligned}))
    return rows


def even_gaps(rows: Sequence[Sequence], width: float, least: float = GAP.s) -> float:
    """The one gap that spreads table() columns over `width`: each column as wide as its widest cell,
    the rest shared equally between neighbouring columns (never less than `least`)."""
    n = max(len(r) for r in rows)
    col_w = [max((r[j].width for r in rows if j < len(r) and r[j] is not None), default=0.0) for j in range(n)]
    return max(least, (width - sum(col_w)) / max(1, n - 1))


def table(rows: Sequence[Sequence], aligns: str, gaps: float | Sequence[float] = GAP.m,
          widths: Sequence[float | None] | None = None, width: float | None = None, pitch: float | None = None,
          row_gap: float = GAP.s, ys: Sequence[float] | None = None, space_before: dict[int, float] | None = None,
          indent: dict[int, float] | None = None, x: float = 0.0, y: float = 0.0,
          rtl_aligns: str | None = None) -> VGroup:
    """Rows of cells laid out in columns: the table's rows, each a VGroup of its cells.

    Column j is as wide as its widest cell (at least `widths[j]` where given), `gaps` apart (one gap,
    or one per pair of neighbouring columns); each cell sits flush LEFT ("L") or RIGHT ("R") in its
    column or centred ("C"), per `aligns` ("LLR": one letter per column). `width`: the table is at
    least this wide, the last gap taking the extra (numbers flush right under a fixed edge).
    Rows are `pitch` apart, centre to centre (default: the tallest cell plus `row_gap`), or at the
    `ys` given (a readout beside each floor of a stack); `space_before={k: gap}` adds air above row k
    (a total under its items), `indent={k: gap}` moves row k's first cell right (a sub-item).
    The first column's left edge is at `x`, the first row's centre at `y`. None leaves a cell empty.
    `rtl_aligns` (one letter per column, in the columns' own order): a table of the film's own words
    that a right-to-left film mirrors. There (S.RTL) the first column is the rightmost, each column
    keeps its width and gaps, and its cells sit flush as rtl_aligns says (words "R", numbers still
    "R"); an indent moves a first cell left. Without it, or in a left-to-right film, nothing changes.
    """
    rows = [list(r) for r in rows]
    n = max(len(r) for r in rows)
    gaps = [gaps] * (n - 1) if np.isscalar(gaps) else list(gaps)
    indent = indent or {}
    col_w = []
    for j in range(n):
        cells = [(r[j], indent.get(k, 0.0) if j == 0 else 0.0) for k, r in enumerate(rows)
                 if j < len(r) and r[j] is not None]
        w = max((m.width + ind for m, ind in cells), default=0.0)
        if widths is not None and j < len(widths) and widths[j] is not None:
            w = max(w, widths[j])
        col_w.append(w)
    lefts = [x]
    for j in range(1, n):
        lefts.append(lefts[-1] + col_w[j - 1] + gaps[j - 1])
    if width is not None and n > 1 and lefts[-1] + col_w[-1] - x < width:
        lefts[-1] += width - (lefts[-1] + col_w[-1] - x)
    sign = 1.0
    if rtl_aligns is not None and S.RTL:      # the same columns mirrored about the table's middle
        end = lefts[-1] + col_w[-1]
        lefts = [x + end - (a + w) for a, w in zip(lefts, col_w)]
        aligns, sign = rtl_aligns, -1.0
    anchors = {"L": lefts, "R": [a + w for a, w in zip(lefts, col_w)], "C": [a + w / 2 for a, w in zip(lefts, col_w)]}
    if ys is None:
        step = pitch if pitch is not None else max(m.height for r in rows for m in r if m is not None) + row_gap
        ys, at = [], y
        for k in range(len(rows)):
            at -= (space_before or {}).get(k, 0.0)
            ys.append(at)
            at -= step
    out = VGroup()
    for k, (r, row_y) in enumerate(zip(rows, ys)):
        xs = [anchors[a][j] + sign * (indent.get(k, 0.0) if j == 0 else 0.0) for j, a in enumerate(aligns[:len(r)])]
        out.add(place_row(r, xs, aligns, row_y))
    return out
