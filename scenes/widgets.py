"""The shared visual vocabulary: token chips, number grids, probability bars, legends, attention arcs.

Everything here is built from plain Text (Pango, through onepass.scenes.text.label) and shapes: no TeX, so
user text can never reach LaTeX, and nothing is re-typeset per frame.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import DOWN, LEFT, ORIGIN, RIGHT, UP, CubicBezier, Dot, Rectangle, RoundedRectangle, VGroup, VMobject

from onepass.scenes import style as S
from onepass.words import numbers as N
from onepass.scenes.layout import GAP
from onepass.scenes.text import LEGIBLE, fit_width, label, line_height
from onepass.data.visible import GRID_TOKENS, token_window, window  # noqa: F401 (the scenes' names for them)


class TokenChip(VGroup):
    """A token as a rounded chip: its visible text, optionally its id beneath."""

    def __init__(self, text: str, token_id: int | None = None, color=S.TOKEN, size: int = S.BODY_SIZE,
                 max_text_width: float = 2.6, generated: bool = False):
        """generated: a token the model wrote (not one of the prompt's) also has a second, inner
        outline, so the two kinds differ by shape and not by colour alone (WCAG 1.4.1)."""
        super().__init__()
        self.text_mob = label(S.show_token(text), size, color, mono=True, compact=True)
        natural_w = self.text_mob.width
        fit_width(self.text_mob, max_text_width)
        shrink = self.text_mob.width / natural_w if natural_w > 0 else 1.0
        # every chip of one size is as tall as its tallest letters: rows of chips line up
        height = max(self.text_mob.height, line_height(size) * shrink)
        self.box = RoundedRectangle(corner_radius=0.08, width=self.text_mob.width + 0.3,
                                    height=height + 0.3, stroke_color=color,
                                    stroke_width=2, fill_color=S.PANEL, fill_opacity=1)
        self.text_mob.move_to(self.box)
        self.add(self.box, self.text_mob)
        if token_id is not None:
            self.id_mob = label(str(token_id), S.SMALL, S.MUTED, mono=True, compact=True).next_to(self.box, DOWN, buff=0.1)
            self.add(self.id_mob)
        if generated:
            inset = 0.06
            self.mark = RoundedRectangle(corner_radius=0.05, width=self.box.width - 2 * inset,
                                         height=self.box.height - 2 * inset, stroke_color=color, stroke_width=1.5,
                                         fill_opacity=0).move_to(self.box)
            self.add(self.mark)


def token_row(texts: Sequence[str], ids: Sequence[int] | None = None, max_width: float = 12.5,
              buff: float = 0.15) -> VGroup:
    """Chips side by side, shrunk to fit the width (long prompts wrap into rows)."""
    chips = VGroup(*[TokenChip(t, None if ids is None else i) for t, i in
                     zip(texts, ids if ids is not None else [None] * len(texts))])
    chips.arrange(RIGHT, buff=buff, aligned_edge=UP)
    if chips.width > max_width:
        per_row = max(1, int(len(chips) * max_width / chips.width))
        chips.arrange_in_grid(cols=per_row, buff=(buff, 0.25), cell_alignment=LEFT)
        fit_width(chips, max_width)
    return chips


STACK_ROWS = 12   # at most this many floors of a layer stack at 480p (GPT-2 small's twelve fit)


def layer_window(n_layer: int, limit: int = STACK_ROWS) -> list:
    """The rows of a stack of `n_layer` layers drawn in at most `limit` rows, bottom first: every
    layer's index when they fit, else the first and the last few layers with one gap row between
    them, `(first, last)`: the hidden layers' indexes, inclusive (48 layers -> 0..4, (5, 42), 43..47).
    The top layer is always the last row, the bottom one the first."""
    if n_layer <= limit:
        return list(range(n_layer))
    low = (limit - 1) // 2
    high = limit - 1 - low
    return [*range(low), (low, n_layer - high - 1), *range(n_layer - high, n_layer)]


# the least room between two neighbouring numbers of a grid, as a share of their height
NUMBER_GAP = 0.6


class NumberGrid(VGroup):
    """A matrix as coloured cells with real values, row/column labels and its true shape.

    Wide or tall matrices show a window (first rows/columns) with '…' and the true
    shape written beside, e.g. "5 × 768". Cells are indexed by (row, col) in
    `self.cells` / `self.values_mobs` for highlighting.
    """

    def __init__(self, values: np.ndarray, row_labels: Sequence[str] | None = None,
                 col_labels: Sequence[str] | None = None, decimals: int = 2, max_rows: int = 8,
                 max_cols: int = 8, cell_w: float = 1.15, cell_h: float = 0.5, colour=None,
                 vmax: float | None = None, show_values: bool = True, shape_text: str | None = None,
                 label_color=S.TOKEN, number_size: int = S.NUMBER_SIZE, percent: bool = False,
                 rows: Sequence[int] | None = None, cols: Sequence[int] | None = None,
                 labels_are_tokens: bool = True, label_w: float = 1.8):
        """labels_are_tokens: the row/column labels are the model's tokens, drawn visible
        (S.show_token: a leading space as '·'); False for labels that are words ("pos 0"), whose
        no-break space show_token would draw as '␣'. label_w: the widest a row label is drawn (a longer
        one is scaled down to it)."""
        super().__init__()
        shown = S.show_token if labels_are_tokens else str
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            values = values[None, :]
        self.values = values
        # an explicit window (e.g. the last rows of a long prompt) or the first ones that fit
        rows, self.more_rows = (list(rows), len(rows) < values.shape[0]) if rows is not None \
            else window(values.shape[0], max_rows)
        cols, self.more_cols = (list(cols), len(cols) < values.shape[1]) if cols is not None \
            else window(values.shape[1], max_cols)
        self.rows, self.cols = rows, cols
        finite = values[np.isfinite(values)]
        vmax = vmax if vmax is not None else (float(np.abs(finite).max()) if finite.size else 1.0)
        colour = colour or (lambda v: S.diverging(v, vmax))
        self.cells, self.values_mobs = {}, {}
        cell_group, text_group = VGroup(), VGroup()
        numbers = self.number_labels(values, rows, cols, colour, decimals, percent, number_size, cell_w) \
            if show_values else {}
        for r_i, r in enumerate(rows):
            for c_i, c in enumerate(cols):
                v = values[r, c]
                cell = Rectangle(width=cell_w, height=cell_h, stroke_width=1, stroke_color=S.BACKGROUND,
                                 fill_color=colour(v), fill_opacity=1)
                cell.move_to([c_i * cell_w, -r_i * cell_h, 0])
                self.cells[(r, c)] = cell
                cell_group.add(cell)
                if show_values:
                    t = numbers[(r, c)]
                    t.move_to(cell).align_to(cell, RIGHT).shift(LEFT * 0.05)  # right-aligned numbers
                    self.values_mobs[(r, c)] = t
                    text_group.add(t)
        self.cell_group, self.text_group = cell_group, text_group
        self.add(cell_group, text_group)
        ellipses = VGroup()
        if self.more_cols:  # '…' on the side where columns were left out
            side = LEFT if cols[0] > 0 else RIGHT
            ellipses.add(label("…", number_size, S.MUTED).next_to(cell_group, side, buff=0.12))
        if self.more_rows:
            side = UP if rows[0] > 0 else DOWN
            ellipses.add(label("⋮", number_size, S.MUTED).next_to(cell_group, side, buff=0.08))
        self.ellipses = ellipses
        self.add(ellipses)
        self.row_label_mobs = VGroup()
        if row_labels is not None:
            for r_i, r in enumerate(rows):
                t = fit_width(label(shown(row_labels[r]), S.SMALL, label_color, mono=True, compact=True), label_w)
                gap = 0.5 if (self.more_cols and cols[0] > 0) else 0.12  # room for a left '…'
                t.next_to(cell_group[r_i * len(cols)], LEFT, buff=gap)
                self.row_label_mobs.add(t)
            self.add(self.row_label_mobs)
        self.col_label_mobs = VGroup()
        if col_labels is not None:
            tags = [label(shown(col_labels[c]), S.SMALL, label_color, mono=True, compact=True) for c in cols]
            # a column's width less a gap: tags that filled their columns ran into each other (SmolLM2's
            # "<|endoftext|><|im_start|>" over chapter 04's scores). Where a tag would shrink under the
            # legible floor to fit (a long prompt's words), every other tag goes one line up and each may
            # take two columns' width: neighbours on one line are then two columns apart
            room = cell_w - GAP.s
            staggered = len(tags) > 1 and max(t.width for t in tags) * LEGIBLE > room
            if staggered:
                room = 2 * cell_w - GAP.s
            for t in tags:
                fit_width(t, room)
            rise = max(t.height for t in tags) + GAP.xxs if staggered else 0.0
            for c_i, t in enumerate(tags):
                gap = 0.45 if (self.more_rows and rows[0] > 0) else 0.1  # room for a top '⋮'
                t.next_to(cell_group[c_i], UP, buff=gap + (rise if c_i % 2 else 0.0))
                self.col_label_mobs.add(t)
            self.add(self.col_label_mobs)
        self.shape_mob = None
        if shape_text is not None:
            self.shape_mob = label(shape_text, S.SMALL, S.MUTED, mono=True, compact=True)
            self.shape_mob.next_to(self, DOWN, buff=0.15).align_to(cell_group, RIGHT)
            self.add(self.shape_mob)

    @staticmethod
    def number_labels(values, rows, cols, colour, decimals, percent, number_size, cell_w) -> dict:
        """The shown cells' numbers, all at one size, that size fitting the widest in its cell with
        NUMBER_GAP of a label's height clear of the next cell's number (right-aligned numbers that
        fill their cells read as one: "0.00−0.01"). Where that size would fall under the legible floor
        the numbers lose a decimal (a large model's "−102.34" as "−102.3"), down to whole numbers."""
        for places in range(decimals, -1, -1):
            numbers = {}
            for r in rows:
                for c in cols:
                    v = values[r, c]
                    txt = N.fmt_pct(v) if percent and np.isfinite(v) else N.fmt_signed(v, places)
                    numbers[(r, c)] = label(txt, number_size, S.MUTED if not np.isfinite(v) else S.ink_on(colour(v)),
                                            mono=True, compact=True)
            widest = max(t.width for t in numbers.values())
            tallest = max(t.height for t in numbers.values())
            scale = min(1.0, (cell_w - 0.03) / (widest + NUMBER_GAP * tallest))
            if scale * number_size >= LEGIBLE * S.SMALL or places == 0 or percent:
                break
        if scale < 1:
            for t in numbers.values():
                t.scale(scale)
        return numbers

    def row_cells(self, r: int) -> VGroup:
        return VGroup(*[m for (rr, _), m in self.cells.items() if rr == r])

    def row_values(self, r: int) -> VGroup:
        return VGroup(*[m for (rr, _), m in self.values_mobs.items() if rr == r])


class ProbBars(VGroup):
    """Candidates as rows: rank, token, a bar proportional to probability, the percentage.

    The name column is as wide as the longest name (so several sets fit side by side),
    percentages are right-aligned in one column, and small probabilities keep two
    significant digits (style.prob_decimals).
    """

    def __init__(self, texts, probs, ranks=None, bar_max: float = 2.6, bar_h: float = 0.26, pitch: float = 0.38,
                 scale_to: float | None = None, name_max: float = 1.9, color=S.LOGIT):
        super().__init__()
        top = scale_to or max(max(probs), 1e-12)
        self.probs = [float(p) for p in probs]
        self.decimals = N.prob_decimals(self.probs)
        self.rows = VGroup()
        names = [fit_width(label(S.clip_token(t, int(name_max / 0.166)), S.SMALL, S.TOKEN, mono=True), name_max)
                 for t in texts]
        name_w = max(n.width for n in names)
        rank_w = 0.0
        for i, (name, p) in enumerate(zip(names, self.probs)):
            rank = label("#" + N.fmt_int(ranks[i]) if ranks is not None else "·", S.SMALL, S.MUTED, mono=True)
            if ranks is None:
                rank.set_opacity(0)
            rank_w = max(rank_w, rank.width if ranks is not None else 0)
            bar = Rectangle(width=max(bar_max * p / top, 0.02), height=bar_h, stroke_width=0,
                            fill_color=color, fill_opacity=0.9)
            pct = label(N.fmt_prob(p, self.decimals), S.SMALL, S.INK, mono=True)
            row = VGroup(rank, name, bar, pct)
            row.rank, row.name, row.bar, row.pct = rank, name, bar, pct
            self.rows.add(row)
        x_name = rank_w + 0.15 if ranks is not None else 0.0
        x_bar = x_name + name_w + 0.15
        pct_w = max(r.pct.width for r in self.rows)
        self.pct_right = x_bar + bar_max + 0.12 + pct_w
        for i, row in enumerate(self.rows):
            y = -i * pitch
            row.rank.move_to([rank_w, y, 0], aligned_edge=RIGHT)
            row.name.move_to([x_name, y, 0], aligned_edge=LEFT)
            row.bar.move_to([x_bar, y, 0], aligned_edge=LEFT)
            row.pct.move_to([self.pct_right, y, 0], aligned_edge=RIGHT)
        self.add(self.rows)

    def pct_x(self) -> float:
        """Where the percentage column ends (right edge), wherever the bars now are."""
        return self.rows[0].pct.get_right()[0]


class DivergingLegend(VGroup):
    """A small colour bar for signed values: −vmax, 0, +vmax."""

    def __init__(self, vmax: float, width: float = 2.2, decimals: int = 1):
        super().__init__()
        n = 24
        bar = VGroup(*[Rectangle(width=width / n, height=0.16, stroke_width=0,
                                 fill_color=S.diverging((i / (n - 1) * 2 - 1) * vmax, vmax), fill_opacity=1)
                       for i in range(n)]).arrange(RIGHT, buff=0)
        lo = label(N.fmt_signed(-vmax, decimals), S.SMALL, S.MUTED, mono=True).next_to(bar, LEFT, buff=0.1)
        hi = label(N.fmt_signed(vmax, decimals), S.SMALL, S.MUTED, mono=True).next_to(bar, RIGHT, buff=0.1)
        self.add(bar, lo, hi)


# ---------------------------------------------------------------------------
# Attention drawn as a picture (BertViz, Transformer Explainer): the same weights a grid shows.

_BLANK_CURVE: list = []


def curve(start, start_handle, end_handle, end) -> CubicBezier:
    """CubicBezier(start, start_handle, end_handle, end), made as a copy of one blank curve: the same
    object a construction makes (its points appended as CubicBezier appends them), in about a fifth of
    the time (attention pictures draw thousands)."""
    if not _BLANK_CURVE:
        _BLANK_CURVE.append(CubicBezier(ORIGIN, ORIGIN, ORIGIN, ORIGIN).clear_points())
    return _BLANK_CURVE[0].copy().append_points([start, start_handle, end_handle, end])


class MarkEdges:
    """A mark's top, bottom, left and right edge points, each measured once while lines are drawn
    to it (the mark does not move meanwhile)."""

    def __init__(self):
        self.seen: dict = {}

    def _edge(self, mark, side: str):
        key = (id(mark), side)
        if key not in self.seen:
            self.seen[key] = getattr(mark, f"get_{side}")()
        return self.seen[key]

    def top(self, mark):
        return self._edge(mark, "top")

    def bottom(self, mark):
        return self._edge(mark, "bottom")

    def left(self, mark):
        return self._edge(mark, "left")

    def right(self, mark):
        return self._edge(mark, "right")


class AttentionArcs(VGroup):
    """A head's T x T attention weights (rows = queries) as lines from each token to the tokens it reads:
    a line's width and opacity are its weight; a weight too small to see draws nothing at all.

    layout="row": the tokens in one row (`labels` as small chips, or dots), a query's line to an earlier
      key bows ABOVE the row, to a later key BELOW it; a token's weight on itself is a small loop above
      it. Under the causal mask every line is above (backwards only); without it lines appear below
      too (both ways). `anchors` (mobjects, e.g. chips already on screen) replace the widget's own marks.
    layout="columns" (BertViz): queries in a column on the left, keys on the right, straight lines;
      with labels=None it is a small multiple (one head drawn small, dots for tokens). `anchors` (one
      per drawn token, e.g. a grid's rows) stand for the queries: lines leave their right edges and
      the key column stands `width` to the right of them, each key level with its query; `key_anchors`
      stand for the keys (lines end at their left edges). A None anchor draws no lines from it.

    positions: the token positions drawn (default `token_window(T)`, the window the grids show);
    weights to positions outside it are not drawn. rows: the queries whose lines are drawn (default
    all drawn positions). highlight=q: q's lines at full strength, the others faded (`focus(q)`
    animates the same).

    `arcs[(q, k)]` is the line for query q reading key k (absolute positions), `weight_of[(q, k)]`
    its weight; `marks[i]` the i-th drawn token's mark; `row(q)` a query's lines.
    """

    FLOOR = 0.005            # weights below this (half a percent) are not drawn
    FADED = 0.12             # opacity factor of lines outside the focused row

    def __init__(self, weights, positions: Sequence[int] | None = None, labels: Sequence[str] | None = None,
                 layout: str = "row", width: float = 6.0, height: float = 2.0, anchors=None,
                 rows: Sequence[int] | None = None, highlight: int | None = None, max_stroke: float = 10.0,
                 color=S.ATTENTION, label_color=S.TOKEN, dot_radius: float = 0.05, key_anchors=None,
                 clip: int = 8):
        super().__init__()
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 2 or w.shape[0] != w.shape[1]:
            raise ValueError(f"attention weights must be T x T, got shape {w.shape}")
        if layout not in ("row", "columns"):
            raise ValueError(f"layout must be 'row' or 'columns', not {layout!r}")
        T = w.shape[0]
        self.T, self.layout, self.color, self.max_stroke, self.clip = T, layout, color, max_stroke, clip
        self.positions = list(positions) if positions is not None else token_window(T)
        drawn = set(self.positions)
        self.rows = [q for q in (rows if rows is not None else self.positions) if q in drawn]
        n = len(self.positions)
        self.marks = VGroup()          # one per drawn token (the row), or two (query, key) in columns
        self.key_marks = VGroup()
        if layout == "row":
            if anchors is not None:
                if len(anchors) != n:
                    raise ValueError(f"{len(anchors)} anchors for {n} drawn tokens")
                self.marks = VGroup(*anchors)
            else:
                self.marks = self._marks(labels, dot_radius, label_color)
                pitch = width / max(n - 1, 1) if labels is None else None
                if labels is None:
                    for i, m in enumerate(self.marks):
                        m.move_to([i * pitch, 0, 0])
                else:   # chips spread across `width` (gaps of 0.18 to 1.2), or shrunk to fit it
                    gap = (width - sum(m.width for m in self.marks)) / max(n - 1, 1)
                    self.marks.arrange(RIGHT, buff=float(np.clip(gap, 0.18, 1.2)))
                    fit_width(self.marks, width)
                self.add(self.marks)
            self.key_marks = self.marks
        else:
            for given in (anchors, key_anchors):
                if given is not None and len(given) != n:
                    raise ValueError(f"{len(given)} anchors for {n} drawn tokens")
            if anchors is not None:
                self.marks = VGroup(*[m if m is not None else VMobject() for m in anchors])
                self.rows = [q for q, m in zip(self.positions, anchors) if m is not None and q in self.rows]
                x0 = max(m.get_right()[0] for m in anchors if m is not None)
                ys = [m.get_center()[1] if m is not None else 0.0 for m in anchors]
            else:
                self.marks = self._marks(labels, dot_radius, label_color)
                pitch = height / max(n - 1, 1)
                x0, ys = 0.0, [-i * pitch for i in range(n)]
                for qm, y in zip(self.marks, ys):
                    qm.move_to([0, y, 0], aligned_edge=RIGHT if labels is not None else np.zeros(3))
                self.add(self.marks)
            if key_anchors is not None:
                self.key_marks = VGroup(*key_anchors)
            else:
                self.key_marks = self._marks(labels, dot_radius, label_color)
                for km, y in zip(self.key_marks, ys):
                    km.move_to([x0 + width, y, 0], aligned_edge=LEFT if labels is not None else np.zeros(3))
                self.add(self.key_marks)
        self.arcs: dict[tuple[int, int], VMobject] = {}
        self.weight_of: dict[tuple[int, int], float] = {}
        self.lines = VGroup()
        span = max(n - 1, 1)
        edges = MarkEdges()       # each mark measured once (a 64-token head draws ~2,000 lines)
        for q in self.rows:
            qi = self.positions.index(q)
            for ki, k in enumerate(self.positions):
                v = float(w[q, k]) if np.isfinite(w[q, k]) else 0.0
                if v < self.FLOOR:
                    continue
                if layout == "row":
                    path = self._arc(qi, ki, span, height, edges)
                else:
                    path = self._line(qi, ki, labels is not None or anchors is not None, edges)
                stroke, opacity = self.style_of(v)
                path.set_stroke(color=color, width=stroke * max_stroke / 10.0, opacity=opacity)
                path.weight, path.base_opacity = v, opacity
                self.arcs[(q, k)] = path
                self.weight_of[(q, k)] = v
                self.lines.add(path)
        # lines under the marks: chips keep their text readable where lines meet them
        self.add_to_back(self.lines)
        if highlight is not None:
            for (q, _), path in self.arcs.items():
                if q != highlight:
                    path.set_stroke(opacity=path.base_opacity * self.FADED)

    @staticmethod
    def style_of(weight: float) -> tuple[float, float]:
        """(stroke width at max_stroke 10, opacity) of a line of this weight: both grow with it."""
        wgt = float(np.clip(weight, 0.0, 1.0))
        return max(0.6, 10.0 * wgt), float(min(1.0, 0.15 + 0.85 * np.sqrt(wgt)))

    def _marks(self, labels, dot_radius, label_color) -> VGroup:
        if labels is None:
            return VGroup(*[Dot(radius=dot_radius, color=S.MUTED) for _ in self.positions])
        if self.layout == "columns":   # plain names: chips stacked at a grid's row pitch would touch
            return VGroup(*[label(S.clip_token(labels[p], self.clip), S.SMALL, label_color, mono=True, compact=True)
                            for p in self.positions])
        return VGroup(*[TokenChip(S.clip_token(labels[p], self.clip), color=label_color, size=S.SMALL,
                                  max_text_width=1.6) for p in self.positions])

    def _arc(self, qi: int, ki: int, span: int, height: float, edges: MarkEdges) -> VMobject:
        q_mark, k_mark = self.marks[qi], self.marks[ki]
        if qi == ki:        # the token reading itself: a small loop on top of it
            top = edges.top(q_mark)
            r = min(0.22, max(q_mark.width * 0.3, 0.08))
            return curve(top + LEFT * r * 0.5, top + UP * r * 2.4 + LEFT * r * 1.4,
                         top + UP * r * 2.4 + RIGHT * r * 1.4, top + RIGHT * r * 0.5)
        up = ki < qi                  # an earlier key: above the row; a later one: below
        side = UP if up else DOWN
        a = edges.top(q_mark) if up else edges.bottom(q_mark)
        b = edges.top(k_mark) if up else edges.bottom(k_mark)
        # arcs to farther tokens rise higher, so nested arcs do not lie on top of each other
        h = height * (0.25 + 0.75 * abs(qi - ki) / span)
        nudge = RIGHT * 0.04 * np.sign(ki - qi)    # ends a little apart from the self-loop
        return curve(a + nudge, a + side * h * 4 / 3, b + side * h * 4 / 3, b - nudge)

    def _line(self, qi: int, ki: int, labelled: bool, edges: MarkEdges) -> VMobject:
        q_mark, k_mark = self.marks[qi], self.key_marks[ki]
        a = edges.right(q_mark) + (RIGHT * 0.08 if labelled else 0)
        b = edges.left(k_mark) + (LEFT * 0.08 if labelled else 0)
        # lines leave each mark straight, then bend: several lines from one mark stay apart
        return curve(a, a + RIGHT * (b[0] - a[0]) * 0.4, b + LEFT * (b[0] - a[0]) * 0.4, b)

    def row(self, q: int) -> VGroup:
        """The lines of query q (absolute position)."""
        return VGroup(*[p for (qq, _), p in self.arcs.items() if qq == q])

    def focus(self, q: int | None) -> list:
        """Animations that bring query q's lines to full strength and fade the others (None: all back)."""
        anims = []
        for (qq, _), path in self.arcs.items():
            factor = 1.0 if q is None or qq == q else self.FADED
            anims.append(path.animate.set_stroke(opacity=path.base_opacity * factor))
        return anims
