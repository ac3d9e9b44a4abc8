"""Chapter 02 — one attention head of layer 1, with the bundle's real numbers.

Each beat steps with its line's markers (beat.at / beat.span): what a sentence names appears or
lights up while it is said. The head's weights are drawn twice, as a grid of numbers and as
lines between the tokens (widgets.AttentionArcs), from the same matrix.
"""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, FadeIn, FadeOut, GrowArrow, LaggedStart, Line,
                   Rectangle, ReplacementTransform, SurroundingRectangle, Transform, VGroup, Write)

from data.facts.ch02 import head_facts
from scenes import style as S
from scenes.base import ChapterScene
from scenes.follow import Swell
from scenes.layout import GAP, above, below, fit_to, keep_inside, place_in, table
from scenes.text import fit_lines, fit_width, label
from scenes.widgets import AttentionArcs, NumberGrid, TokenChip, token_window
from words import numbers as N


# a title above the grid: in the furniture row, clear of the meter, and low enough to pass under a long
# prompt's window note (heading, mark, note stack down the left); wide enough for a sentence at full size
TITLE_W = S.TEXT_W
TITLE_Y = S.CONTENT_TOP + 0.05


class AttentionScene(ChapterScene):
    chapter = "02"

    def setup(self):
        super().setup()
        b = self.bundle
        f = head_facts(b)
        self.h = f["head_index"]
        self.rows = token_window(b.T)
        cfg = b.config
        self.d, self.H = cfg["n_embd"], cfg["n_head"]
        self.dh = self.d // self.H

    def window_note(self):
        """Says so on screen when a long prompt is shown through a window."""
        if len(self.rows) == self.bundle.T:
            return None
        note = label(self.text("window-note", shown=len(self.rows), T=self.bundle.T), S.SMALL, S.MUTED)
        last_line = getattr(self, "random_mark", None) or self.heading   # top-left furniture column
        return below(note, last_line, buff=GAP.xs).align_to(self.heading, S.START)


class Projections(AttentionScene):
    """x -> q, k, v for the featured head."""
    meter_start = "L0.qkv"
    show_title = True

    def head_strip(self, width: float) -> VGroup:
        """The layer's heads as a row of small boxes, the featured one lit, at most `width` wide."""
        pitch = min(0.42 + GAP.xs, width / self.H)        # GPT-2 small's boxes, or narrower for more heads
        size = pitch * 0.42 / (0.42 + GAP.xs)
        boxes = VGroup(*[Rectangle(width=size, height=size, stroke_width=2, stroke_color=S.MUTED,
                                   fill_color=S.ATTENTION if i == self.h else S.PANEL, fill_opacity=1)
                         for i in range(self.H)]).arrange(RIGHT, buff=pitch - size)
        return boxes

    def build(self):
        b, h, rows = self.bundle, self.h, self.rows
        probs = b["probs"][0, h]
        with self.beat("intro") as beat:
            # sentence 0: tokens looking at one another, drawn from this head's own weights
            arcs = AttentionArcs(probs, labels=b.tokens, width=9.0, height=1.0)
            tag = label(self.text("head-tag", head=h + 1, n_head=self.H), S.BODY_SIZE, S.ATTENTION)
            strip = self.head_strip(S.TEXT_W - tag.width - GAP.l)
            rule = fit_lines(self.text("head-rule"), S.SMALL, S.MUTED, 11)
            top = VGroup(tag, strip).arrange(S.END, buff=GAP.l)
            group = VGroup(arcs, top, rule).arrange(DOWN, buff=GAP.l)
            place_in(group, S.CONTENT)
            self.play(FadeIn(arcs.marks, shift=UP * GAP.xs), run_time=beat.span(0.3))
            self.play(LaggedStart(*[Create(p) for p in arcs.lines], lag_ratio=0.05), run_time=beat.span(0.7))
            beat.at("head")          # "a single head of the first layer: head h of H"
            self.play(FadeIn(tag, shift=UP * GAP.s), LaggedStart(*[FadeIn(bx, shift=DOWN * GAP.s) for bx in strip],
                                                               lag_ratio=0.25), run_time=beat.span(0.6))
            self.play(Swell(strip[h], color=S.ATTENTION, scale_factor=1.5), run_time=beat.span(0.8))
            beat.at("chosen")        # "picked because its last row is the least uniform"
            self.play(FadeIn(rule), *arcs.focus(b.T - 1), run_time=beat.span(0.4))
            self.play(Swell(arcs.marks[-1], color=S.TOKEN), run_time=beat.span(0.5))
        with self.beat("inputs") as beat:
            x = NumberGrid(b["ln1"][0], row_labels=b.tokens, max_cols=6, rows=rows,
                           shape_text=self.text("x-shape", T=b.T, d=self.d))
            place_in(x, S.CONTENT)
            note = self.window_note()
            self.play(FadeOut(group), run_time=beat.span(0.15))
            self.play(FadeIn(x.cell_group), FadeIn(x.row_label_mobs), *([FadeIn(note)] if note else []),
                      run_time=beat.span(0.6))
            beat.at("rows")          # "T rows, one per token, each d numbers wide"
            self.play(Swell(x.row_label_mobs, color=S.TOKEN), run_time=beat.span(0.3))
            self.play(LaggedStart(*[FadeIn(t) for t in x.text_group], lag_ratio=0.02),
                      FadeIn(x.ellipses), FadeIn(x.shape_mob), run_time=beat.span(0.6))
        with self.beat("qkv") as beat:
            grids = VGroup()
            for name, colour in (("q", S.QUERY), ("k", S.KEY), ("v", S.VALUE)):
                g = NumberGrid(b[name][0, h], max_cols=3, rows=rows, shape_text=f"{b.T} × {self.dh}")
                title = label(name, S.BODY_SIZE, colour).next_to(g, UP, buff=GAP.s)
                frame = SurroundingRectangle(g.cell_group, color=colour, buff=GAP.xxs, stroke_width=3)
                grids.add(VGroup(g, title, frame))
            grids.arrange(RIGHT, buff=GAP.l)
            x_small = x.copy()
            target = VGroup(x_small, grids).arrange(RIGHT, buff=0.9)
            place_in(fit_width(target, S.FULL_W), S.CONTENT)
            arrow = Arrow(x_small.get_right(), grids.get_left(), buff=GAP.xs, color=S.MUTED, stroke_width=3)
            w_text = fit_lines(self.text("qkv-note", dh=self.dh), S.SMALL, S.MUTED, S.TEXT_W)
            w_text.next_to(grids, UP, buff=GAP.m)
            if w_text.get_right()[0] > S.FRAME_W / 2:   # a longer language: back inside the margins
                keep_inside(w_text, S.FULL)
            self.play(Transform(x, x_small), run_time=beat.span(0.2))
            self.play(GrowArrow(arrow), run_time=beat.span(0.15))
            self.play(LaggedStart(*[FadeIn(g, shift=RIGHT * GAP.s) for g in grids], lag_ratio=0.3),
                      run_time=beat.span(0.6))
            beat.at("per-head")      # "for one head each is dh numbers long"
            self.play(FadeIn(w_text), *[Swell(g[0].shape_mob, color=S.INK) for g in grids],
                      run_time=beat.span(0.6))
            beat.at("cost")          # "computing them for all heads costs …"
            self.pay("L0.qkv", run_time=beat.span(0.6))


class Scores(AttentionScene):
    """The T x T grid: scaled scores, the causal mask, the row softmax; then the same weights as lines."""
    meter_start = "L0.scores"

    def setup(self):
        super().setup()
        # short prompts get wider cells, so the grid alone fills half the content box
        self.cell_w = 1.2 if len(self.rows) <= 6 else 1.0

    def grid(self, values, percent=False, vmax=None):
        b = self.bundle
        g = NumberGrid(values, row_labels=b.tokens, col_labels=b.tokens, rows=self.rows, cols=self.rows,
                       cell_w=self.cell_w, cell_h=0.5, percent=percent,
                       colour=(lambda p: S.sequential(p)) if percent else None,
                       vmax=vmax if not percent else 1.0)
        fit_width(g, 10.0)
        return place_in(g, S.CONTENT)

    @staticmethod
    def swap_numbers(grid, target, cells):
        """Cross-fade cell numbers (morphing glyphs into other glyphs is unreadable mid-way)."""
        anims = []
        for rc in cells:
            old, new = grid.values_mobs[rc], target.values_mobs[rc]
            anims += [FadeOut(old), FadeIn(new)]
            grid.values_mobs[rc] = new
        return anims

    def build(self):
        b, h = self.bundle, self.h
        scaled = b["scores_scaled"][0, h]     # [T, T]
        masked = b["scores_masked"][0, h]     # [T, T], −inf above the diagonal
        probs = b["probs"][0, h]              # [T, T]
        last = b.T - 1
        note = self.window_note()
        # the dot products before the scaling, from the bundle's own q and k (same colour scale as after)
        dots = b["q"][0, h].astype(np.float64) @ b["k"][0, h].astype(np.float64).T
        vmax = float(np.abs(scaled).max())
        with self.beat("scores") as beat:
            dot_formula = label("q · k", S.BODY_SIZE, S.INK).move_to(UP * TITLE_Y)
            formula = label(self.text("score-formula", dh=self.dh), S.BODY_SIZE, S.INK)
            root = label(f"√{self.dh} = {N.fmt_general(np.sqrt(self.dh))}", S.BODY_SIZE, S.MUTED)
            VGroup(formula, root).arrange(S.END, buff=GAP.xl).move_to(UP * TITLE_Y)
            grid = self.grid(dots, vmax=vmax)
            scaled_grid = self.grid(scaled, vmax=vmax)
            shape = label(self.text("scores-shape", T=b.T), S.SMALL, S.MUTED, mono=True)
            keep_inside(below(shape, grid.cell_group, buff=GAP.s, aligned=RIGHT),
                        S.FULL.with_(bottom=S.CAPTION_TOP - 0.04))   # taller letters: out of the caption band
            self.play(Write(dot_formula), FadeIn(grid.cell_group), FadeIn(grid.row_label_mobs),
                      FadeIn(grid.col_label_mobs), FadeIn(grid.ellipses), *([FadeIn(note)] if note else []),
                      run_time=beat.span(0.4))
            self.play(LaggedStart(*[FadeIn(t) for t in grid.text_group], lag_ratio=0.03), run_time=beat.span(0.7))
            beat.at("scale")         # "each product is divided by the square root of dh, which is …"
            self.play(ReplacementTransform(dot_formula, formula), FadeIn(root, shift=S.START * GAP.s),
                      run_time=beat.span(0.3))
            self.play(*[Transform(grid.cells[rc], scaled_grid.cells[rc]) for rc in grid.cells],
                      *self.swap_numbers(grid, scaled_grid, list(grid.values_mobs)), run_time=beat.span(0.6))
            beat.at("grid")          # "the result is a T by T grid of scores, … FLOPs"
            self.play(FadeIn(shape, shift=UP * GAP.xs), Swell(grid.cell_group, color=S.INK, scale_factor=1.04),
                      run_time=beat.span(0.4))
            self.pay("L0.scores", run_time=beat.span(0.5))
        with self.beat("mask") as beat:
            masked_grid = self.grid(masked, vmax=vmax)
            future = [(r, c) for (r, c) in grid.cells if c > r]
            mask_title = label(self.text("mask-title"), S.BODY_SIZE, S.WARNING).move_to(UP * TITLE_Y)
            self.play(ReplacementTransform(VGroup(formula, root), mask_title), FadeOut(shape),
                      run_time=beat.span(0.3))
            if future:                # "no token may look ahead": the cells where a token would
                self.play(*[Swell(grid.cells[rc], color=S.WARNING, scale_factor=1.0) for rc in future],
                          run_time=beat.span(0.7))
            beat.at("minus")         # "every score above the diagonal becomes minus infinity"
            if future:
                self.play(*[Transform(grid.cells[rc], masked_grid.cells[rc]) for rc in future],
                          *self.swap_numbers(grid, masked_grid, future),
                          run_time=beat.span(0.7))
            else:   # one token: nothing lies above the diagonal, the grid stays as it is
                self.play(Swell(grid.cell_group, color=S.WARNING), run_time=beat.span(0.7))
        with self.beat("softmax") as beat:
            pgrid = self.grid(probs, percent=True)
            sm_title = label(self.text("softmax-title"), S.BODY_SIZE, S.ATTENTION).move_to(mask_title)
            # each row's sum over all T columns (a window may hide some of them)
            sums = VGroup(*[
                label(f"Σ = {N.fmt_fixed(probs[r].astype(np.float64).sum(), 2)}", S.SMALL, S.ATTENTION, mono=True)
                .next_to(pgrid.row_cells(r), RIGHT, buff=GAP.m) for r in self.rows])
            sums_header = VGroup()
            if len(self.rows) < b.T:
                header = label(self.text("sums-header", T=b.T), S.SMALL, S.MUTED)
                sums_header.add(above(header, sums[0], buff=GAP.l))   # over the column labels
            side = VGroup(sums, sums_header)
            # the grid and its sums, centred together
            shift = S.CONTENT.x - VGroup(pgrid.cell_group, pgrid.row_label_mobs, side).get_center()[0]
            for m in (pgrid, side, masked_grid):
                m.shift(RIGHT * shift)
            self.play(ReplacementTransform(mask_title, sm_title), run_time=beat.span(0.25))
            self.play(*[Transform(grid.cells[rc], pgrid.cells[rc]) for rc in grid.cells],
                      grid.row_label_mobs.animate.shift(RIGHT * shift),
                      grid.col_label_mobs.animate.shift(RIGHT * shift),
                      grid.ellipses.animate.shift(RIGHT * shift),
                      *self.swap_numbers(grid, pgrid, list(grid.values_mobs)),
                      run_time=beat.span(0.6))
            beat.at("sums")          # "each row now sums to one, and the masked cells get exactly zero"
            self.play(LaggedStart(*[FadeIn(s, shift=LEFT * GAP.s) for s in sums], lag_ratio=0.15),
                      FadeIn(sums_header), run_time=beat.span(0.4))
            zeros = [grid.values_mobs[(r, c)] for (r, c) in grid.values_mobs if c > r]
            if zeros:
                self.play(*[Swell(z, color=S.WARNING) for z in zeros], run_time=beat.span(0.5))
        with self.beat("arcs") as beat:
            # the lines leave each row of the grid (its queries) for a column of the keys beside it
            cells = grid.cell_group
            arcs = AttentionArcs(probs, labels=b.tokens, layout="columns", width=1.4, clip=7,
                                 anchors=[VGroup(*[grid.cells[(r, c)] for c in self.rows]) for r in self.rows])
            whole = VGroup(grid.row_label_mobs, cells, arcs)
            shift = S.CONTENT.x - whole.get_center()[0]
            arcs.shift(RIGHT * shift)
            # the grid as it now stands (its numbers are the softmax grid's, swapped in)
            shown = VGroup(cells, grid.row_label_mobs, grid.col_label_mobs, grid.ellipses, *grid.values_mobs.values())
            arcs_title = fit_lines(self.text("arcs-title"), S.BODY_SIZE, S.ATTENTION, TITLE_W).move_to(sm_title)
            self.play(FadeOut(side), shown.animate.shift(RIGHT * shift), ReplacementTransform(sm_title, arcs_title),
                      run_time=beat.span(0.25))
            self.play(FadeIn(arcs.key_marks, shift=LEFT * GAP.s), run_time=beat.span(0.2))
            self.play(LaggedStart(*[LaggedStart(*[Create(p) for p in arcs.row(r)], lag_ratio=0.1)
                                    for r in self.rows], lag_ratio=0.3), run_time=beat.span(0.5))
            beat.at("heavier")       # "the heavier the weight, the thicker the line"
            heaviest = max(arcs.weight_of, key=arcs.weight_of.get)
            self.play(Swell(grid.values_mobs[heaviest], color=S.TOKEN),
                      arcs.arcs[heaviest].animate.set_stroke(color=S.TOKEN), run_time=beat.span(0.5))
            self.play(arcs.arcs[heaviest].animate.set_stroke(color=S.ATTENTION), run_time=beat.span(0.3))
            beat.at("back")          # "every line leads back: to the token itself, or to one before it"
            back = fit_lines(self.text("back-title"), S.BODY_SIZE, S.WARNING, TITLE_W).move_to(arcs_title)
            self.play(ReplacementTransform(arcs_title, back), run_time=beat.span(0.3))
            # the cells no line comes from: every one above the diagonal
            ahead = [grid.cells[(r, c)] for (r, c) in grid.cells if c > r]
            if ahead:
                self.play(*[Swell(c, color=S.WARNING, scale_factor=1.0) for c in ahead], run_time=beat.span(0.5))
            selfs = [arcs.arcs[(r, r)] for r in self.rows if (r, r) in arcs.arcs]
            self.play(*[Swell(p, color=S.TOKEN, scale_factor=1.0) for p in selfs],
                      *[Swell(m, color=S.TOKEN) for m in arcs.key_marks], run_time=beat.span(0.8))
        with self.beat("last_row") as beat:
            box = SurroundingRectangle(grid.row_cells(last), color=S.TOKEN, buff=GAP.xxs)
            order = np.argsort(-probs[last])[:3]
            readout = "   ".join(f"{S.show_token(b.tokens[j])} {N.fmt_pct(float(probs[last, j]))}" for j in order)
            who = fit_lines(self.text("attends-to", token=S.show_token(b.tokens[last]), readout=readout),
                            S.SMALL, S.TOKEN, TITLE_W, mono=True).move_to(back)
            self.play(Create(box), *arcs.focus(last), run_time=beat.span(0.3))
            self.play(ReplacementTransform(back, who), run_time=beat.span(0.3))
            top = int(order[0])
            if (last, top) in arcs.arcs:
                self.play(Swell(arcs.key_marks[self.rows.index(top)], color=S.TOKEN),
                          run_time=beat.span(0.6))
            self.point_at_mark(beat, "chance", 0.6)   # random weights: "this one is chance"


class Mixing(AttentionScene):
    """Weighted sum of values, the output projection, the residual add, the receipt."""
    meter_start = "L0.mix"

    def build(self):
        b, h, d, dh = self.bundle, self.h, self.d, self.dh
        last = b.T - 1
        weights = b["probs"][0, h, last]                     # [T]
        with self.beat("mix") as beat:
            w = NumberGrid(weights[:, None], rows=self.rows, percent=True,
                           colour=lambda p: S.sequential(p), vmax=1.0, cell_w=1.15)
            w_title = label(self.text("weight-title"), S.SMALL, S.ATTENTION).next_to(w, UP, buff=GAP.s)
            keys = VGroup(*[label(S.clip_token(b.tokens[r], 7), S.SMALL, S.TOKEN, mono=True, compact=True)
                            .next_to(w.row_cells(r), LEFT, buff=GAP.s) for r in self.rows])
            for k in keys:
                k.align_to(keys, RIGHT)
            query = TokenChip(S.clip_token(b.tokens[last], 7), size=S.SMALL, max_text_width=1.6)
            query.next_to(keys, LEFT, buff=1.6).set_y(w.cell_group.get_y())
            # the last row's lines: from the last token to every token whose value it mixes
            arcs = AttentionArcs(b["probs"][0, h], layout="columns", positions=self.rows,
                                 anchors=[query if r == last else None for r in self.rows], key_anchors=list(keys))
            v = NumberGrid(b["v"][0, h], rows=self.rows, max_cols=3, shape_text=f"v: {b.T} × {dh}")
            v_title = label("v", S.BODY_SIZE, S.VALUE).next_to(v, UP, buff=GAP.s)
            out = NumberGrid(b["head_out"][0, h, last][None, :], max_cols=3, shape_text=f"1 × {dh}")
            out_title = fit_lines(self.text("output-of", token=S.show_token(b.tokens[last])), S.SMALL,
                                  S.TOKEN, 3.2)
            out_title.next_to(out.cell_group, UP, buff=GAP.s)
            times = label("×", S.TITLE_SIZE, S.MUTED)
            sigma = label(self.text("sum-rows"), S.BODY_SIZE, S.MUTED)
            left = VGroup(query, arcs, keys, w, w_title)
            row = VGroup(left, times, VGroup(v, v_title), sigma, VGroup(out, out_title))
            row.arrange(RIGHT, buff=GAP.l)
            place_in(fit_width(row, S.FULL_W), S.CONTENT)
            note = self.window_note()
            self.play(FadeIn(query), FadeIn(keys), *([FadeIn(note)] if note else []), run_time=beat.span(0.15))
            self.play(LaggedStart(*[Create(p) for p in arcs.lines], lag_ratio=0.15), FadeIn(w), FadeIn(w_title),
                      run_time=beat.span(0.3))
            self.play(FadeIn(times), FadeIn(v), FadeIn(v_title), run_time=beat.span(0.25))
            self.play(FadeIn(sigma), FadeIn(out, shift=RIGHT * GAP.s), FadeIn(out_title), run_time=beat.span(0.25))
            beat.at("layer-cost")    # "for the whole layer that is another … FLOPs"
            e = self.ledger["L0.mix"]
            bill = fit_lines(self.text("mix-bill", n_head=self.H, formula=e.formula, flops=N.fmt_int(e.flops)),
                             S.SMALL, S.FLOPS, TITLE_W, mono=True).move_to(UP * TITLE_Y)
            self.play(FadeIn(bill, shift=UP * GAP.s), Swell(sigma, color=S.FLOPS), run_time=beat.span(0.4))
            self.pay("L0.mix", run_time=beat.span(0.6))
        with self.beat("out") as beat:
            self.play(FadeOut(row), FadeOut(bill), *([FadeOut(note)] if note else []), run_time=beat.span(0.1))
            # the heads side by side: H boxes of dh numbers, the one we followed lit
            total = label(f"= {d}", S.BODY_SIZE, S.ATTENTION)
            # as wide as a line allows: GPT-2 XL's 25 heads still read "64" in every box
            box_w = min(0.62, (S.TEXT_W - total.width - GAP.m) / self.H)
            heads = VGroup(*[Rectangle(width=box_w, height=0.5, stroke_width=2, stroke_color=S.MUTED,
                                       fill_color=S.ATTENTION if i == h else S.PANEL, fill_opacity=1)
                             for i in range(self.H)]).arrange(RIGHT, buff=GAP.none)
            nums = VGroup(*[label(str(dh), S.SMALL, S.INK, mono=True).move_to(box) for box in heads])
            for n in nums:
                fit_width(n, box_w - 0.06)
            total.next_to(heads, RIGHT, buff=GAP.m)
            strip = VGroup(heads, nums, total)
            proj = label(f"× W_O ({d} × {d})", S.BODY_SIZE, S.ATTENTION)
            names = (self.text("residual"), self.text("plus-attention"), self.text("new-residual"))
            colours = (S.RESIDUAL, S.ATTENTION, S.RESIDUAL)
            mats = (b["resid_pre"][0, last], b["attn_out"][0, last], b["resid_mid"][0, last])
            lines = VGroup()
            for name, colour, vec in zip(names, colours, mats):
                g = NumberGrid(vec[None, :], max_cols=6, cell_w=1.0)
                t = label(name, S.BODY_SIZE, colour)
                lines.add(VGroup(t, g).arrange(RIGHT, buff=GAP.l))
            lines.arrange(DOWN, buff=GAP.m, aligned_edge=RIGHT)
            shape = label(self.text("row-of", token=S.show_token(b.tokens[last]), d=d), S.SMALL, S.MUTED, mono=True)
            below(shape, lines, buff=GAP.s, aligned=RIGHT)
            top = VGroup(strip, proj).arrange(RIGHT, buff=GAP.xl)
            if top.width > S.TEXT_W:      # many heads: the projection goes under the strip
                top.arrange(DOWN, buff=GAP.m)
            group = VGroup(top, VGroup(lines, shape)).arrange(DOWN, buff=GAP.l)
            fit_to(group, S.CONTENT)
            place_in(group, S.CONTENT)
            self.play(LaggedStart(*[FadeIn(VGroup(bx, n), shift=DOWN * GAP.s) for bx, n in zip(heads, nums)],
                                  lag_ratio=0.3), run_time=beat.span(0.7))
            self.play(FadeIn(total, shift=LEFT * GAP.s), Swell(heads[h], color=S.ATTENTION),
                      run_time=beat.span(0.6))
            beat.at("projection")    # "an output projection mixes them, for … FLOPs"
            self.play(FadeIn(proj, shift=LEFT * GAP.s), FadeIn(lines[1]), run_time=beat.span(0.3))
            self.pay("L0.out", run_time=beat.span(0.6))
            beat.at("residual")      # "the result is added back onto the residual stream"
            self.play(FadeIn(lines[0], shift=DOWN * GAP.s), run_time=beat.span(0.35))
            self.play(FadeIn(lines[2], shift=UP * GAP.s), FadeIn(shape), run_time=beat.span(0.4))
        with self.beat("receipt") as beat:
            self.play(FadeOut(group), run_time=beat.span(0.1))
            receipt, rows = self.receipt()
            self.play(LaggedStart(*[FadeIn(r, shift=UP * GAP.xs) for r in receipt], lag_ratio=0.15),
                      run_time=beat.span(0.5))
            # "nearly all of it in the projections"
            self.play(Swell(rows[0][2], color=S.FLOPS), Swell(rows[3][2], color=S.FLOPS),
                      run_time=beat.span(0.8))
            beat.at("cheap")         # "at T tokens the score grid itself is cheap"
            self.play(Swell(rows[1], color=S.KEY), run_time=beat.span(0.7))

    def receipt(self) -> tuple[VGroup, VGroup]:
        """The itemised bill of one attention layer, straight from the ledger (and its rows)."""
        keys = ("L0.qkv", "L0.scores", "L0.mix", "L0.out")
        # each step as the meter says it, without its layer (the receipt is layer 1's)
        steps = (self.text("receipt-qkv"), self.text("receipt-scores"), self.text("receipt-mix"),
                 self.text("receipt-out"))
        rows = VGroup()
        for key, step in zip(keys, steps):
            e = self.ledger[key]
            rows.add(VGroup(label(step, S.SMALL, S.INK),
                            label(e.formula, S.SMALL, S.MUTED, mono=True),
                            label(N.fmt_int(e.flops), S.SMALL, S.FLOPS, mono=True)))
        total = self.ledger.attention_flops(0)
        rows.add(VGroup(label(self.text("receipt-total"), S.SMALL, S.INK, weight="BOLD"), label("", S.SMALL),
                        label(N.fmt_int(total), S.SMALL, S.FLOPS, mono=True, weight="BOLD")))
        # step and formula flush left, FLOPs flush right at the text width; the total a little apart
        table(rows, "LLR", gaps=GAP.xl, width=S.TEXT_W, row_gap=GAP.m, space_before={len(rows) - 1: GAP.s},
              rtl_aligns="RRR")
        rule_y = rows[-1].get_top()[1] + GAP.xs
        rule = Line([rows.get_left()[0], rule_y, 0], [rows.get_right()[0], rule_y, 0], color=S.MUTED, stroke_width=2)
        note = fit_lines(self.text("receipt-note"), S.SMALL, S.MUTED, 11)
        below(note, rows, buff=GAP.l, aligned=S.START)
        receipt = VGroup(*rows[:-1], VGroup(rule, rows[-1]), note)
        place_in(receipt, S.CONTENT)
        return receipt, rows


SCENES = [Projections, Scores, Mixing]
