"""Chapter 02 — one attention head of layer 1, with the bundle's real numbers."""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, FadeIn, FadeOut, GrowArrow, LaggedStart, Line,
                   ReplacementTransform, SurroundingRectangle, Transform, VGroup, Write)

from data.facts.ch02 import head_facts
from scenes import style as S
from scenes.base import ChapterScene
from scenes.widgets import NumberGrid, below, fit_width, label, place_in, place_row, token_window


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
        note = label(f"showing the last {len(self.rows)} of {self.bundle.T} tokens", S.SMALL, S.MUTED)
        above = getattr(self, "random_mark", None) or self.heading   # top-left furniture column
        return note.next_to(above, DOWN, buff=0.12).align_to(self.heading, LEFT)


class Projections(AttentionScene):
    """x -> q, k, v for the featured head."""
    meter_start = "L0.qkv"
    show_title = True

    def build(self):
        b, h, rows = self.bundle, self.h, self.rows
        with self.beat("intro") as beat:
            tag = label(f"layer 1 · head {h + 1} of {self.H}", S.BODY_SIZE, S.ATTENTION)
            rule = fit_width(label("chosen: the head whose last row is least uniform (lowest entropy)",
                                   S.SMALL, S.MUTED), 11)
            VGroup(tag, rule).arrange(DOWN, buff=0.2).move_to(UP * 0.5)
            self.play(FadeIn(tag, shift=UP * 0.2), run_time=beat.share(0.2))
            self.play(FadeIn(rule), run_time=beat.share(0.2))
        with self.beat("inputs") as beat:
            x = NumberGrid(b["ln1"][0], row_labels=b.tokens, max_cols=4, rows=rows,
                           shape_text=f"x = LayerNorm(residual): {b.T} × {self.d}")
            place_in(x, S.CONTENT)
            note = self.window_note()
            self.play(FadeOut(tag), FadeOut(rule), run_time=beat.share(0.1))
            self.play(FadeIn(x.cell_group), FadeIn(x.row_label_mobs), run_time=beat.share(0.25))
            self.play(LaggedStart(*[FadeIn(t) for t in x.text_group], lag_ratio=0.02),
                      FadeIn(x.ellipses), FadeIn(x.shape_mob), *( [FadeIn(note)] if note else []),
                      run_time=beat.share(0.4))
        with self.beat("qkv") as beat:
            grids = VGroup()
            for name, colour in (("q", S.QUERY), ("k", S.KEY), ("v", S.VALUE)):
                g = NumberGrid(b[name][0, h], max_cols=3, rows=rows,
                               shape_text=f"{b.T} × {self.dh}")
                title = label(name, S.BODY_SIZE, colour).next_to(g, UP, buff=0.15)
                frame = SurroundingRectangle(g.cell_group, color=colour, buff=0.04, stroke_width=3)
                grids.add(VGroup(g, title, frame))
            grids.arrange(RIGHT, buff=0.45)
            x_small = x.copy()
            target = VGroup(x_small, grids).arrange(RIGHT, buff=0.9)
            place_in(fit_width(target, S.FULL_W), S.CONTENT)
            arrow = Arrow(x_small.get_right(), grids.get_left(), buff=0.12, color=S.MUTED, stroke_width=3)
            w_text = label(f"x × W_q, W_k, W_v → this head's {self.dh} columns of each", S.SMALL, S.MUTED)
            w_text.next_to(grids, UP, buff=0.25)
            self.play(Transform(x, x_small), run_time=beat.share(0.15))
            self.play(GrowArrow(arrow), FadeIn(w_text), run_time=beat.share(0.1))
            self.play(LaggedStart(*[FadeIn(g, shift=RIGHT * 0.2) for g in grids], lag_ratio=0.3),
                      run_time=beat.share(0.3))
            self.pay("L0.qkv", run_time=beat.share(0.25))


class Scores(AttentionScene):
    """The T x T grid: scaled scores, the causal mask, the row softmax."""
    meter_start = "L0.scores"

    def grid(self, values, percent=False):
        b = self.bundle
        g = NumberGrid(values, row_labels=b.tokens, col_labels=b.tokens, rows=self.rows, cols=self.rows,
                       cell_w=1.15, cell_h=0.5, percent=percent,
                       colour=(lambda p: S.sequential(p)) if percent else None,
                       vmax=None if not percent else 1.0)
        fit_width(g, 10.5)
        return g.move_to(DOWN * 0.35 + LEFT * 0.6)

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
        note = self.window_note()
        with self.beat("scores") as beat:
            formula = label(f"score = q · k / √{self.dh}", S.BODY_SIZE, S.INK).move_to(UP * S.TOP_LINE_Y)
            grid = self.grid(scaled)
            self.play(Write(formula), run_time=beat.share(0.15))
            self.play(FadeIn(grid.cell_group), FadeIn(grid.row_label_mobs), FadeIn(grid.col_label_mobs),
                      FadeIn(grid.ellipses), *([FadeIn(note)] if note else []), run_time=beat.share(0.2))
            self.play(LaggedStart(*[FadeIn(t) for t in grid.text_group], lag_ratio=0.03),
                      run_time=beat.share(0.3))
            self.pay("L0.scores", run_time=beat.share(0.2))
        with self.beat("mask") as beat:
            masked_grid = self.grid(masked)
            future = [(r, c) for (r, c) in grid.cells if c > r]
            mask_title = label("causal mask: no looking ahead", S.BODY_SIZE, S.WARNING).move_to(formula)
            self.play(ReplacementTransform(formula, mask_title), run_time=beat.share(0.15))
            if future:
                self.play(*[Transform(grid.cells[rc], masked_grid.cells[rc]) for rc in future],
                          *self.swap_numbers(grid, masked_grid, future),
                          run_time=beat.share(0.45))
            else:   # one token: nothing lies above the diagonal, the grid stays as it is
                self.wait(beat.share(0.45))
        with self.beat("softmax") as beat:
            pgrid = self.grid(probs, percent=True)
            sm_title = label("softmax along each row", S.BODY_SIZE, S.ATTENTION).move_to(mask_title)
            # each row's sum over all T columns (a window may hide some of them)
            sums = VGroup(*[
                label(f"Σ = {probs[r].astype(np.float64).sum():.2f}", S.SMALL, S.ATTENTION, mono=True)
                .next_to(pgrid.row_cells(r), RIGHT, buff=0.3) for r in self.rows])
            sums_header = VGroup()
            if len(self.rows) < b.T:
                sums_header.add(label(f"all {b.T}", S.SMALL, S.MUTED).next_to(sums[0], UP, buff=0.45))
            self.play(ReplacementTransform(mask_title, sm_title), run_time=beat.share(0.15))
            self.play(*[Transform(grid.cells[rc], pgrid.cells[rc]) for rc in grid.cells],
                      *self.swap_numbers(grid, pgrid, list(grid.values_mobs)),
                      run_time=beat.share(0.4))
            self.play(LaggedStart(*[FadeIn(s, shift=LEFT * 0.2) for s in sums], lag_ratio=0.15),
                      FadeIn(sums_header), run_time=beat.share(0.3))
        with self.beat("last_row") as beat:
            last = b.T - 1
            box = SurroundingRectangle(VGroup(grid.row_cells(last), sums[-1]), color=S.TOKEN, buff=0.06)
            order = np.argsort(-probs[last])[:3]
            readout = "   ".join(f"{S.show_token(b.tokens[j])} {S.fmt_pct(float(probs[last, j]))}" for j in order)
            who = fit_width(label(f"{S.show_token(b.tokens[last])} attends to:  {readout}", S.SMALL, S.TOKEN,
                                  mono=True), S.TEXT_W)
            below(who, grid, buff=0.3)
            self.play(Create(box), run_time=beat.share(0.2))
            self.play(FadeIn(who, shift=UP * 0.1), run_time=beat.share(0.25))


class Mixing(AttentionScene):
    """Weighted sum of values, the output projection, the residual add, the receipt."""
    meter_start = "L0.mix"

    def build(self):
        b, h, d, dh = self.bundle, self.h, self.d, self.dh
        last = b.T - 1
        weights = b["probs"][0, h, last]                     # [T]
        with self.beat("mix") as beat:
            w = NumberGrid(weights[:, None], row_labels=b.tokens, rows=self.rows, percent=True,
                           colour=lambda p: S.sequential(p), vmax=1.0, cell_w=1.15)
            w_title = label("weight", S.SMALL, S.ATTENTION).next_to(w, UP, buff=0.15)
            v = NumberGrid(b["v"][0, h], rows=self.rows, max_cols=4, shape_text=f"v: {b.T} × {dh}")
            v_title = label("v", S.BODY_SIZE, S.VALUE).next_to(v, UP, buff=0.15)
            out = NumberGrid(b["head_out"][0, h, last][None, :], max_cols=4, shape_text=f"1 × {dh}")
            out_title = fit_width(label(f"output of {S.show_token(b.tokens[last])}", S.SMALL, S.TOKEN), 3.5)
            out_title.next_to(out.cell_group, UP, buff=0.2)
            times = label("×", S.TITLE_SIZE, S.MUTED)
            sigma = label("Σ rows →", S.BODY_SIZE, S.MUTED)
            row = VGroup(VGroup(w, w_title), times, VGroup(v, v_title), sigma, VGroup(out, out_title))
            row.arrange(RIGHT, buff=0.35)
            place_in(fit_width(row, S.FULL_W), S.CONTENT)
            note = self.window_note()
            self.play(FadeIn(w), FadeIn(w_title), *([FadeIn(note)] if note else []), run_time=beat.share(0.15))
            self.play(FadeIn(times), FadeIn(v), FadeIn(v_title), run_time=beat.share(0.2))
            self.play(FadeIn(sigma), FadeIn(out, shift=RIGHT * 0.2), FadeIn(out_title), run_time=beat.share(0.2))
            self.pay("L0.mix", run_time=beat.share(0.2))
        with self.beat("out") as beat:
            self.play(FadeOut(row), *([FadeOut(note)] if note else []), run_time=beat.share(0.1))
            concat = fit_width(label(f"{self.H} heads × {dh} = {d}  →  × W_O ({d} × {d})", S.BODY_SIZE, S.ATTENTION),
                               S.TEXT_W).move_to(UP * S.TOP_LINE_Y)
            names = ("residual", "+ attention", "= new residual")
            colours = (S.RESIDUAL, S.ATTENTION, S.RESIDUAL)
            mats = (b["resid_pre"][0, last], b["attn_out"][0, last], b["resid_mid"][0, last])
            lines = VGroup()
            for name, colour, vec in zip(names, colours, mats):
                g = NumberGrid(vec[None, :], max_cols=6, cell_w=1.0)
                t = label(name, S.BODY_SIZE, colour)
                lines.add(VGroup(t, g).arrange(RIGHT, buff=0.4))
            lines.arrange(DOWN, buff=0.35, aligned_edge=RIGHT)
            shape = label(f"row of {S.show_token(b.tokens[last])}: 1 × {d}", S.SMALL, S.MUTED, mono=True)
            below(shape, lines, buff=0.25, aligned=RIGHT)
            group = VGroup(lines, shape)
            fit_width(group, S.TEXT_W).move_to(DOWN * 0.4)
            self.play(FadeIn(concat), run_time=beat.share(0.15))
            self.play(LaggedStart(*[FadeIn(l, shift=UP * 0.15) for l in lines], lag_ratio=0.35),
                      FadeIn(shape), run_time=beat.share(0.35))
            self.pay("L0.out", run_time=beat.share(0.2))
        with self.beat("receipt") as beat:
            self.play(FadeOut(concat), FadeOut(group), run_time=beat.share(0.1))
            receipt = self.receipt()
            self.play(LaggedStart(*[FadeIn(r, shift=UP * 0.1) for r in receipt], lag_ratio=0.15),
                      run_time=beat.share(0.45))

    def receipt(self) -> VGroup:
        """The itemised bill of one attention layer, straight from the ledger."""
        keys = ("L0.qkv", "L0.scores", "L0.mix", "L0.out")
        rows = VGroup()
        for key in keys:
            e = self.ledger[key]
            rows.add(VGroup(label(e.step.replace("layer 1: ", ""), S.SMALL, S.INK),
                            label(e.formula, S.SMALL, S.MUTED, mono=True),
                            label(S.fmt_int(e.flops), S.SMALL, S.FLOPS, mono=True)))
        total = self.ledger.attention_flops(0)
        rows.add(VGroup(label("attention, layer 1", S.SMALL, S.INK, weight="BOLD"), label("", S.SMALL),
                        label(S.fmt_int(total), S.SMALL, S.FLOPS, mono=True, weight="BOLD")))
        col_x = [-5.6, -1.8, 5.2]   # step and formula flush left, FLOPs flush right
        y = 1.2
        for i, r in enumerate(rows):
            if i == len(rows) - 1:
                y -= 0.15
            place_row(r, col_x, "LLR", y)
            y -= 0.55
        rule = Line([col_x[0], rows[-1].get_top()[1] + 0.12, 0], [col_x[2], rows[-1].get_top()[1] + 0.12, 0],
                    color=S.MUTED, stroke_width=2)
        note = fit_width(label("softmax and LayerNorm are not counted (see the ledger's note)", S.SMALL, S.MUTED), 11)
        below(note, rows, buff=0.35, aligned=LEFT)
        return VGroup(*rows[:-1], VGroup(rule, rows[-1]), note)


SCENES = [Projections, Scores, Mixing]
