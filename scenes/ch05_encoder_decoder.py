"""Chapter 05 — encoder vs decoder: the same real scores with and without the triangle.

The meter holds at the one-pass total all chapter: nothing here adds arithmetic. The head's
weights are drawn as a grid and as lines from each row to the tokens it reads (AttentionArcs):
backwards only under the mask, both ways without it. Each beat steps with its line's markers.
"""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, FadeIn, FadeOut, FadeTransform, GrowArrow, LaggedStart,
                   Polygon, RoundedRectangle, Square, SurroundingRectangle, Transform,
                   VGroup)

from onepass.data.facts.ch00 import model_title
from onepass.data.facts.ch05 import FAMILIES, ORIGINAL_YEAR, VISIBLE_CHANGE, mask_facts
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Swell, say
from onepass.scenes.layout import GAP, below, columns, fit_to, flow, keep_inside, place_in
from onepass.scenes.text import LEGIBLE, fit_lines, fit_width, label
from onepass.scenes.widgets import AttentionArcs, NumberGrid, token_window
from onepass.words import numbers as N


class EncoderDecoderScene(ChapterScene):
    chapter = "05"

    def meter_opening(self):
        return self.ledger.total, self.text("hold-step")   # the full one-token total: chapter 05 adds nothing


def mask_icon(n: int, kind: str, cell: float = 0.26) -> VGroup:
    """A small n x n attention pattern: lit cells may be attended to, dark ones are masked."""
    cells = VGroup()
    for r in range(n):
        for c in range(n):
            allowed = kind == "none" or c <= r
            cells.add(Square(cell, stroke_width=1, stroke_color=S.BACKGROUND,
                             fill_color=S.ATTENTION if allowed else S.PANEL, fill_opacity=0.85 if allowed else 1))
    return cells.arrange_in_grid(rows=n, cols=n, buff=GAP.none)


def staircase(grid: NumberGrid) -> Polygon:
    """Outline of the masked cells (column after row) of a square window of a grid."""
    rows, cols = grid.rows, grid.cols
    n = len(rows)
    first = grid.cells[(rows[0], cols[0])]
    w, h = first.width, first.height
    x0, y0 = first.get_left()[0], first.get_top()[1]
    pts = [[x0 + n * w, y0, 0], [x0 + w, y0, 0]]
    for i in range(n - 1):
        pts += [[x0 + (i + 1) * w, y0 - (i + 1) * h, 0], [x0 + (i + 2) * w, y0 - (i + 1) * h, 0]]
    return Polygon(*pts, color=S.WARNING, stroke_width=4)


class MaskOff(EncoderDecoderScene):
    """The chapter-02 head's weights with the causal triangle, then without it."""
    show_title = True

    def setup(self):
        super().setup()
        self.f = mask_facts(self.bundle)
        self.rows = token_window(self.bundle.T)

    def grid(self, probs: np.ndarray) -> NumberGrid:
        b = self.bundle
        return NumberGrid(probs, row_labels=b.tokens, col_labels=b.tokens, rows=self.rows, cols=self.rows,
                          cell_w=1.1 if len(self.rows) <= 6 else 1.0, cell_h=0.46, percent=True,
                          colour=lambda p: S.sequential(p), vmax=1.0)

    def arcs(self, grid: NumberGrid, weights: np.ndarray) -> AttentionArcs:
        """The weights as lines from each row of the grid (its query) to a column of the keys beside it."""
        return AttentionArcs(weights, labels=self.bundle.tokens, layout="columns", width=1.5, clip=7,
                             anchors=[grid.row_cells(r) for r in self.rows])

    def build(self):
        b, f = self.bundle, self.f
        T, last = b.T, b.T - 1
        causal, full = self.grid(f["causal"]), self.grid(f["full"])
        # the change column beside the grid: how far each row's weights moved (percentage points)
        head = label(self.text("change-head"), S.SMALL, S.MUTED)
        changes = VGroup()
        for r_i, r in enumerate(self.rows):
            shifted = f["row_change"][r] >= VISIBLE_CHANGE
            t = label(self.text("change-pts", change=N.fmt_fixed(100 * f["row_change"][r], 1)), S.SMALL,
                      S.INK if shifted else S.MUTED, mono=True)
            changes.add(t)
        layout = VGroup(causal, VGroup(head, changes))
        # position everything once (both grids share a layout), then fit the frame
        changes.arrange(DOWN, aligned_edge=RIGHT).next_to(causal.cell_group, RIGHT, buff=GAP.l)
        for r, t in zip(self.rows, changes):   # right-aligned, one per row
            t.match_y(causal.row_cells(r))
        head.match_y(causal.col_label_mobs).align_to(changes, RIGHT)
        # room below for a two-line summary; above for the title
        scale = min(1.0, S.TEXT_W / layout.width, 4.4 / layout.height)
        layout.scale(scale)
        block = layout.height + 0.9      # the grid and the summary under it, centred in the content box
        place_in(layout, S.CONTENT, UP, y=min(S.CONTENT.top, S.CONTENT_Y + block / 2))
        full.scale(scale).move_to(causal, aligned_edge=UP + LEFT)
        back, both = self.arcs(causal, f["causal"]), self.arcs(causal, f["full"])
        # the grid and its lines centred together (the change column later stands where the lines were)
        dx = S.CONTENT.x - VGroup(causal, back).get_center()[0]
        for m in (layout, full, back, both):
            m.shift(RIGHT * dx)
        triangle = staircase(causal) if len(self.rows) > 1 else VGroup()
        titles = {
            "decoder": fit_lines(self.text("decoder-title" if self.bundle.arch == "gpt2" else "decoder-title-any"),
                                 S.BODY_SIZE, S.WARNING, 8.5),
            "encoder": fit_lines(self.text("encoder-title"), S.BODY_SIZE, S.ATTENTION, 8.5),
        }
        for t in titles.values():
            t.move_to(UP * S.TOP_LINE_Y)   # clear of the meter note above

        ahead = [causal.cells[(r, c)] for (r, c) in causal.cells if c > r]
        with self.beat("decoder") as beat:
            self.play(FadeIn(titles["decoder"]), FadeIn(causal.cell_group), FadeIn(causal.row_label_mobs),
                      FadeIn(causal.col_label_mobs), FadeIn(causal.ellipses), run_time=beat.span(0.4))
            self.play(LaggedStart(*[FadeIn(t) for t in causal.text_group], lag_ratio=0.02),
                      run_time=beat.span(0.7))
            beat.at("masked")        # "here is the head from chapter two, with its triangle"
            self.play(Create(triangle), run_time=beat.span(0.4))
            beat.at("zero")          # "every cell above the diagonal was minus infinity … exactly zero"
            if ahead:
                self.play(*[Swell(c, color=S.WARNING, scale_factor=1.0) for c in ahead], run_time=beat.span(0.6))
            else:                     # one token: nothing lies above the diagonal
                self.play(Swell(causal.cell_group, color=S.WARNING, scale_factor=1.0), run_time=beat.span(0.6))
            beat.at("lines")         # "drawn as lines, every token reads only backwards"
            self.play(FadeIn(back.key_marks, shift=LEFT * GAP.s), run_time=beat.span(0.2))
            if len(back.lines):       # one token has no other token to read
                self.play(LaggedStart(*[Create(p) for p in back.lines], lag_ratio=0.08), run_time=beat.span(0.7))
            beat.at("trained")       # "trained to predict every next token at once: a look ahead would copy the answer"
            shade = triangle.copy().set_fill(S.WARNING, opacity=0.25).set_stroke(opacity=0) if len(self.rows) > 1 \
                else VGroup()
            self.play(FadeIn(shade), Swell(titles["decoder"], color=S.WARNING), run_time=beat.span(0.4))
            beat.at("trained", into=0.5)     # "… a token that could see ahead would copy its answer"
            self.play(*([Swell(c, color=S.WARNING, scale_factor=1.0) for c in ahead] or
                        [Swell(causal.cell_group, color=S.WARNING, scale_factor=1.0)]), run_time=beat.span(0.6))
            beat.at("decoder")       # "the triangle is what makes GPT a decoder"
            self.play(Swell(triangle, color=S.WARNING), FadeOut(shade), run_time=beat.span(0.7))
        with self.beat("encoder") as beat:
            self.play(FadeTransform(titles["decoder"], titles["encoder"]), run_time=beat.span(0.3))
            self.play(FadeOut(triangle), run_time=beat.span(0.4))
            beat.at("softmax")       # "the same softmax along each row … forward as well as back"
            # cells recolour in place; numbers that change fade across (morphing glyphs is unreadable)
            moved = [rc for rc in causal.values_mobs if causal.values_mobs[rc].text != full.values_mobs[rc].text]
            self.play(*[Transform(causal.cells[rc], full.cells[rc]) for rc in causal.cells],
                      *[FadeOut(causal.values_mobs[rc]) for rc in moved],
                      *[FadeIn(full.values_mobs[rc]) for rc in moved],
                      run_time=beat.span(0.4))
            for rc in moved:   # the grid now holds the new numbers
                causal.text_group.remove(causal.values_mobs[rc])
                causal.values_mobs[rc] = full.values_mobs[rc]
                causal.text_group.add(full.values_mobs[rc])
            # the same lines reweighted, new ones forward (down the key column), lost ones gone
            kept = [qk for qk in back.arcs if qk in both.arcs]
            new = [both.arcs[qk] for qk in both.arcs if qk not in back.arcs]
            if back.arcs:             # one token draws no line
                self.play(*[Transform(back.arcs[qk], both.arcs[qk]) for qk in kept],
                          *[FadeOut(back.arcs[qk]) for qk in back.arcs if qk not in both.arcs],
                          run_time=beat.span(0.3))
            if new:                   # one token: nothing lies ahead of it to read
                self.play(LaggedStart(*[Create(p) for p in new], lag_ratio=0.08), run_time=beat.span(0.8))
            beat.at("encoder")       # "that is an encoder's attention"
            self.play(Swell(titles["encoder"], color=S.ATTENTION), run_time=beat.span(0.7))
            # "but a real encoder is also trained for it, to fill in blanked-out words from both sides":
            # the lines that read forward, the ones such training teaches
            forward = VGroup(*new) if new else causal.cell_group
            say(self, beat, "fill", Swell(forward, color=S.ATTENTION, scale_factor=1.0))
            # "so this model, trained never to look ahead, does not become one": those lines fade
            say(self, beat, "notone", Swell(titles["encoder"], color=S.WARNING),
                *([m.animate.set_stroke(opacity=0.35) for m in new]))
        lines = VGroup(*[back.arcs[qk] for qk in back.arcs if qk in both.arcs], *new, back.key_marks)
        with self.beat("changes") as beat:
            # the lines make way for the change column; the grid and the column centred together
            dx = S.CONTENT.x - VGroup(causal.cell_group, causal.row_label_mobs, head, changes).get_center()[0]
            VGroup(head, changes).shift(RIGHT * dx)
            self.play(FadeOut(lines), causal.animate.shift(RIGHT * dx), run_time=beat.span(0.3))
            r, c = f["big_row"], f["big_col"]
            big = fit_lines(
                self.text("biggest-shift", row=S.show_token(b.tokens[r]), col=S.show_token(b.tokens[c]),
                          was=N.fmt_pct(float(f["causal"][r, c])), now=N.fmt_pct(float(f["full"][r, c]))),
                S.SMALL, S.ATTENTION, S.TEXT_W, mono=True)
            if len(self.rows) < T:     # a long prompt, seen through a window
                rows_note = self.text("rows-change-window", changed=len(f["changed"]), T=T, shown=len(self.rows))
            else:
                rows_note = self.text("rows-change", changed=len(f["changed"]), T=T)
            summary = VGroup(big, fit_lines(rows_note, S.SMALL, S.MUTED, S.TEXT_W)).arrange(DOWN, buff=GAP.xs)
            keep_inside(below(fit_width(summary, S.TEXT_W), VGroup(causal, changes), buff=GAP.s), S.CONTENT)
            if (r, c) in causal.cells:
                box = SurroundingRectangle(causal.cells[(r, c)], color=S.TOKEN, buff=GAP.xxs, stroke_width=4)
            else:
                box = VGroup()
            last_box = SurroundingRectangle(VGroup(causal.row_cells(last), changes[-1]), color=S.KEY, buff=GAP.xxs)
            column = SurroundingRectangle(VGroup(head, changes), color=S.MUTED, buff=GAP.xs)
            # "k of the T rows change"
            self.play(FadeIn(head), LaggedStart(*[FadeIn(t, shift=LEFT * GAP.s) for t in changes], lag_ratio=0.1),
                      FadeIn(summary[1]), run_time=beat.span(0.6))
            if self.bundle.synthetic:   # "these weights are random … but the rule is not"
                beat.at("random")
                self.play(Create(column), *self.mark_pointers(), run_time=beat.span(0.5))
                changed = [cell for rr in self.rows if rr in f["changed"] for cell in causal.row_cells(rr)]
                if changed:           # cell by cell: a new group would be drawn over the numbers
                    self.play(*[Swell(cell, color=S.ATTENTION, scale_factor=1.0) for cell in changed],
                              run_time=beat.span(0.7))
                else:                 # one token: no row has anything ahead of it, so none changes
                    self.wait(beat.span(0.7))
            beat.at("biggest")       # "the biggest shift is in the row of …"
            big_row = list(causal.row_cells(r)) if r in self.rows else [VGroup()]
            self.play(*[Swell(cell, color=S.TOKEN, scale_factor=1.0) for cell in big_row],
                      run_time=beat.span(0.6))
            beat.at("weight")        # "its weight on … goes from … to …"
            self.play(FadeIn(summary[0], shift=UP * GAP.xs), Create(box), run_time=beat.span(0.3))
            if (r, c) in causal.values_mobs:   # the cell as it was under the mask, then as it is now
                cell, now = causal.cells[(r, c)], causal.values_mobs[(r, c)]
                was = label(N.fmt_pct(float(f["causal"][r, c])), S.NUMBER_SIZE,
                            S.ink_on(S.sequential(float(f["causal"][r, c]))), mono=True, compact=True)
                was.match_height(now).move_to(now, aligned_edge=RIGHT)
                colour = cell.get_fill_color()
                self.play(cell.animate.set_fill(S.sequential(float(f["causal"][r, c]))), FadeOut(now), FadeIn(was),
                          run_time=beat.span(0.35))
                self.play(cell.animate.set_fill(colour), FadeOut(was), FadeIn(now), run_time=beat.span(0.6))
            beat.at("last")          # "the last row does not move at all"
            self.play(Create(last_box), Swell(changes[-1], color=S.KEY), run_time=beat.span(0.7))
            beat.at("sees")          # "it could already see every token"
            self.play(*[Swell(cell, color=S.KEY, scale_factor=1.0) for cell in causal.row_cells(last)],
                      run_time=beat.span(0.7))
        with self.beat("same_cost") as beat:
            grid_group = VGroup(causal, head, changes, summary, box, last_box, titles["encoder"],
                                *([column] if column in self.mobjects else []))
            bill = self.bill()
            self.play(FadeOut(grid_group), FadeIn(bill.header), *[FadeIn(VGroup(g.name, g.cells), shift=UP * GAP.xs)
                                                                  for g in bill.grids], run_time=beat.span(0.6))
            beat.at("ledger")        # "the ledger charges the full T by T grid of scores, in both"
            self.play(*[FadeIn(g.cost, shift=UP * GAP.xs) for g in bill.grids],
                      *[Swell(g.cells, color=S.FLOPS, scale_factor=1.0) for g in bill.grids], run_time=beat.span(0.5))
            beat.at("after")         # "every score is computed first; the mask only overwrites some afterwards"
            dec, enc = bill.grids
            self.play(*[c.animate.set_fill(S.PANEL, opacity=1).set_stroke(S.WARNING) for c in dec.ahead],
                      FadeIn(dec.mask), FadeIn(enc.mask), run_time=beat.span(0.4))
            beat.at("after", into=0.45)
            self.play(FadeIn(bill.after, shift=UP * GAP.xs), Swell(enc.cells, color=S.ATTENTION, scale_factor=1.0),
                      run_time=beat.span(0.5))
            beat.at("holds")         # "nothing new is computed to look ahead, so the meter holds at …"
            self.play(FadeIn(bill.total, shift=UP * GAP.xs), *[Swell(g.cost, color=S.FLOPS) for g in bill.grids],
                      run_time=beat.span(0.4))
            self.play(Swell(self.meter.counter, color=S.FLOPS, scale_factor=1.1), run_time=beat.span(0.6))

    def bill(self) -> VGroup:
        """Both kinds of model compute every cell of the T x T grid of scores (the ledger's line, the same
        in both); the decoder's mask only overwrites the cells above the diagonal afterwards."""
        e = self.ledger["L0.scores"]
        n = len(self.rows)
        header = fit_lines(self.text("ledger-line"), S.SMALL, S.MUTED, S.TEXT_W).move_to(UP * S.HEADLINE_Y)
        half = S.CONTENT_W / 2 - GAP.xl
        after = fit_lines(self.text("bill-after"), S.SMALL, S.WARNING, S.TEXT_W)
        total = fit_lines(self.text("one-pass", flops=N.fmt_int(self.ledger.total)), S.BODY_SIZE, S.FLOPS, S.TEXT_W)
        parts = []
        for name, colour, mask in ((self.text("decoder-row" if self.bundle.arch == "gpt2" else "decoder-row-any"),
                                     S.WARNING, self.text("decoder-mask")),
                                   (self.text("encoder-row"), S.ATTENTION, self.text("encoder-mask"))):
            cost = VGroup(label(e.formula, S.SMALL, S.INK, mono=True),
                          label(N.fmt_int(e.flops), S.SMALL, S.FLOPS, mono=True)).arrange(DOWN, buff=GAP.xs)
            parts.append((fit_lines(name, S.BODY_SIZE, colour, half), fit_lines(mask, S.SMALL, S.MUTED, half),
                          fit_width(cost, half)))
        room = S.CONTENT.with_(top=header.get_bottom()[1] - GAP.m)
        # the grids take the height the words leave
        words_h = (max(sum(m.height for m in p) for p in parts) + after.height + total.height
                   + 4 * GAP.s + 2 * GAP.m)
        cell = min(GAP.l, max(GAP.xs, (room.height - words_h) / max(1, n)))
        grids = VGroup()
        for name, mask, cost in parts:
            cells = VGroup(*[Square(cell, stroke_color=S.BACKGROUND, stroke_width=1, fill_color=S.ATTENTION,
                                    fill_opacity=0.75) for _ in range(n * n)]).arrange_in_grid(rows=n, cols=n, buff=GAP.none)
            g = VGroup(name, cells, mask, cost).arrange(DOWN, buff=GAP.s)
            g.name, g.cells, g.mask, g.cost = name, cells, mask, cost
            g.ahead = [cells[r * n + c] for r in range(n) for c in range(n) if c > r]
            grids.add(g)
        grids.arrange(S.END, buff=GAP.xl + GAP.l, aligned_edge=UP)
        below(after, grids, buff=GAP.m)
        below(total, after, buff=GAP.m)
        body = VGroup(grids, after, total)
        place_in(fit_to(body, room), room)
        out = VGroup(header, grids, after, total)
        out.header, out.grids, out.after, out.total = header, grids, after, total
        return out


class Towers(EncoderDecoderScene):
    """The 2017 machine: an encoder tower, a decoder tower, and cross-attention between them."""

    def box(self, text: str, colour, width: float = 3.6) -> VGroup:
        t = fit_lines(text, S.SMALL, S.INK, width - 0.3)
        r = RoundedRectangle(corner_radius=0.1, width=width, height=max(0.62, t.height + 0.24), stroke_color=colour, stroke_width=3,
                             fill_color=S.PANEL, fill_opacity=1)
        return VGroup(r, t.move_to(r))

    def build(self):
        title = fit_lines(self.text("original", year=ORIGINAL_YEAR), S.BODY_SIZE, S.INK, 8.5)
        title.move_to(UP * S.TOP_LINE_Y)
        # one tower in each half, on the same floor: its input on the footer line, an arrow up into it
        enc_in = place_in(label(self.text("source-text"), S.SMALL, S.TOKEN), S.LEFT_HALF, y=S.FOOTER_Y)
        dec_in = place_in(label(self.text("output-so-far"), S.SMALL, S.TOKEN), S.RIGHT_HALF, y=S.FOOTER_Y)
        # encoder: reads everything, no mask
        enc_attn = self.box(self.text("box-encoder-attention"), S.ATTENTION)
        enc_mlp = self.box(self.text("box-mlp"), S.MLP).next_to(enc_attn, UP, buff=GAP.m)
        enc_frame = SurroundingRectangle(VGroup(enc_attn, enc_mlp), color=S.MUTED, buff=GAP.m, corner_radius=0.1)
        VGroup(enc_attn, enc_mlp, enc_frame).next_to(enc_in, UP, buff=GAP.xl)
        enc_n = label("× N", S.SMALL, S.MUTED).next_to(enc_frame, LEFT, buff=GAP.s)
        enc_name = label(self.text("encoder"), S.BODY_SIZE, S.RESIDUAL).next_to(enc_frame, UP, buff=GAP.s)
        enc_arrow = Arrow(enc_in.get_top(), enc_frame.get_bottom(), buff=GAP.xxs, color=S.MUTED, stroke_width=3)
        # decoder: writes one token at a time, behind the triangle, and asks the encoder (room for the
        # queries' arrow between its attention and the cross-attention)
        dec_attn = self.box(self.text("box-masked-attention"), S.WARNING)
        dec_cross = self.box(self.text("box-cross-attention"), S.QUERY).next_to(dec_attn, UP, buff=GAP.l)
        dec_mlp = self.box(self.text("box-mlp"), S.MLP).next_to(dec_cross, UP, buff=GAP.m)
        dec_frame = SurroundingRectangle(VGroup(dec_attn, dec_cross, dec_mlp), color=S.MUTED, buff=GAP.m,
                                         corner_radius=0.1)
        VGroup(dec_attn, dec_cross, dec_mlp, dec_frame).next_to(dec_in, UP, buff=GAP.xl)
        dec_n = label("× N", S.SMALL, S.MUTED).next_to(dec_frame, RIGHT, buff=GAP.s)
        dec_name = label(self.text("decoder"), S.BODY_SIZE, S.RESIDUAL).next_to(dec_frame, UP, buff=GAP.s)
        dec_arrow = Arrow(dec_in.get_top(), dec_frame.get_bottom(), buff=GAP.xxs, color=S.MUTED, stroke_width=3)
        dec_out = label(self.text("next-token"), S.SMALL, S.LOGIT).next_to(dec_name, UP, buff=GAP.xs)

        # cross-attention: keys and values from the encoder's output (its top block), queries from the
        # decoder below
        kv = Arrow([enc_frame.get_right()[0], enc_mlp.get_y(), 0], dec_cross.get_left(), buff=GAP.xs,
                   color=S.KEY, stroke_width=5)
        kv_label = VGroup(label(self.text("keys"), S.SMALL, S.KEY),
                          label(self.text("and-values"), S.SMALL, S.VALUE)).arrange(S.END, buff=GAP.xs)
        kv_label.next_to(kv, UP, buff=GAP.xs)
        q = Arrow(dec_attn.get_top(), dec_cross.get_bottom(), buff=GAP.xxs, color=S.QUERY, stroke_width=5,
                  max_tip_length_to_length_ratio=0.45)
        q_label = label(self.text("queries"), S.SMALL, S.QUERY).next_to(q, RIGHT, buff=GAP.s)

        rise = UP * GAP.s             # how far each part rises as it fades in
        with self.beat("towers") as beat:
            # "the machine from 2017 had both kinds"
            self.play(FadeIn(title, shift=-rise), FadeIn(enc_frame), FadeIn(dec_frame), FadeIn(enc_name),
                      FadeIn(dec_name), run_time=beat.span(0.6))
            beat.at("encoder")       # "an encoder tower reads the whole source text at once, with no mask"
            self.play(FadeIn(VGroup(enc_attn, enc_mlp, enc_n), shift=rise), run_time=beat.span(0.4))
            self.play(FadeIn(enc_in, shift=rise), GrowArrow(enc_arrow), run_time=beat.span(0.5))
            beat.at("decoder")       # "a decoder tower writes the output one token at a time, behind the triangle"
            self.play(FadeIn(VGroup(dec_attn, dec_cross, dec_mlp, dec_n), shift=rise), run_time=beat.span(0.4))
            self.play(FadeIn(dec_in, shift=rise), GrowArrow(dec_arrow), FadeIn(dec_out, shift=rise),
                      run_time=beat.span(0.5))
        with self.beat("cross") as beat:
            # "they meet in cross-attention"
            # a block's frame swells, not its words (a Swell colours the whole group: its name vanished)
            self.play(Swell(dec_cross[0], color=S.QUERY, scale_factor=1.1), run_time=beat.span(0.8))
            beat.at("queries")       # "the queries from the decoder, the keys and values from the encoder's output"
            self.play(Create(q), FadeIn(q_label), run_time=beat.span(0.4))
            self.play(GrowArrow(kv), FadeIn(kv_label), run_time=beat.span(0.6))
            beat.at("asks")          # "the writer asks, and the reader's tower answers"
            self.play(Swell(VGroup(dec_attn[0], q), color=S.QUERY, scale_factor=1.05), run_time=beat.span(0.45))
            self.play(Swell(VGroup(enc_attn[0], enc_mlp[0], kv), color=S.KEY, scale_factor=1.05),
                      run_time=beat.span(0.8))
            beat.at("translation")   # "where a translation crosses from one language to the other"
            self.play(Swell(enc_in, color=S.TOKEN), run_time=beat.span(0.35))
            self.play(Swell(kv, color=S.TOKEN), run_time=beat.span(0.4))
            self.play(Swell(dec_out, color=S.LOGIT), run_time=beat.span(0.8))


class Families(EncoderDecoderScene):
    """Encoder-only, decoder-only, encoder-decoder side by side, with example models from the seeds."""
    COLUMN_H = 4.1                    # a column's height, leaving a line for the verdict above the caption band

    def family_words(self, mask: str) -> dict:
        """The words of a family's column, from the catalog; a family is known by its mask (FAMILIES,
        data/facts/ch05.py: "none" encoder-only, "causal" decoder-only, "both" encoder-decoder)."""
        if mask == "none":
            return {"name": self.text("family-encoder"), "note": self.text("sees-every"),
                    "examples": (self.text("example-bert"), self.text("example-search")),
                    "can": (self.text("encoder-can-1"), self.text("encoder-can-2")),
                    "cannot": (self.text("encoder-cannot"),)}
        if mask == "causal":
            return {"name": self.text("family-decoder"), "note": self.text("sees-past"),
                    "examples": ((self.text("example-gpt2"), self.text("example-gpt3"), self.text("example-llama"),
                                  self.text("example-qwen3")) if self.bundle.arch == "gpt2" else
                                 # another model: itself first (the one boxed as "ours"), then GPT-2
                                 (self.text("example-this", model=model_title(self.bundle)),
                                  self.text("example-gpt2-plain"), self.text("example-llama"),
                                  self.text("example-qwen3"))),
                    "can": (self.text("decoder-can"),), "cannot": (self.text("decoder-cannot"),)}
        return {"name": self.text("family-encoder-decoder"), "note": self.text("reads-writes"),
                "examples": (self.text("example-transformer", year=ORIGINAL_YEAR), self.text("example-t5"),
                             self.text("example-bart"), self.text("example-whisper")),
                "can": (self.text("encoder-decoder-can-1"), self.text("encoder-decoder-can-2")),
                "cannot": (self.text("encoder-decoder-cannot"),)}

    def column(self, fam, n: int) -> VGroup:
        words = self.family_words(fam.mask)
        name = fit_lines(words["name"], S.BODY_SIZE, S.INK, 4.2)
        if fam.mask == "both":
            icon = VGroup(mask_icon(n, "none", 0.22), mask_icon(n, "causal", 0.22)).arrange(RIGHT, buff=GAP.l)
        else:
            icon = mask_icon(n, fam.mask, 0.22)
        icon_note = fit_lines(words["note"], S.SMALL, S.MUTED, 4.2)
        examples = VGroup(*[fit_lines(e, S.SMALL, S.TOKEN, 4.2) for e in words["examples"]]).arrange(DOWN, buff=GAP.xs)
        can = VGroup(*[fit_lines(("✓ " if i == 0 else "") + t, S.SMALL, S.KEY, 4.2) for i, t in enumerate(words["can"])])
        cannot = VGroup(*[fit_lines(("✗ " if i == 0 else "") + t, S.SMALL, S.WARNING, 4.2)
                          for i, t in enumerate(words["cannot"])])
        for part in (can, cannot):
            part.arrange(DOWN, buff=GAP.xs)
        for part in (examples, can, cannot, icon_note, name):
            fit_width(part, 4.2)
        col = VGroup(name, icon, icon_note, examples, can, cannot).arrange(DOWN, buff=GAP.s)
        # wrapped words (a longer language) that would scale the columns below legible: the examples,
        # then the icon's cells, give up height first
        most = self.COLUMN_H / LEGIBLE
        if col.height > most and len(examples) > 1:
            flow(examples, 4.2, GAP.m, GAP.xs, along=S.END, edge=None, lines_aligned=None)   # centred lines
            col.arrange(DOWN, buff=GAP.s)
        if col.height > most:
            icon.scale(max(0.6, 1 - (col.height - most) / icon.height))
            col.arrange(DOWN, buff=GAP.s)
        col.name, col.icon, col.examples, col.can, col.cannot = name, icon, examples, can, cannot
        col.body = VGroup(icon, icon_note, examples, can, cannot)
        return col

    def build(self):
        n = max(3, min(self.bundle.T, 5))
        cols = VGroup(*[self.column(f, n) for f in FAMILIES])
        tallest = max(c.height for c in cols)
        if tallest > self.COLUMN_H:       # leave a line for the verdict above the caption band
            for c in cols:
                c.scale(self.COLUMN_H / tallest)
        thirds = columns(S.FULL, len(cols))
        if S.RTL:           # the families in reading order: the first one where the reader starts
            thirds.reverse()
        for c, third in zip(cols, thirds):   # three equal thirds, same top line
            place_in(c, third, UP, y=S.HEADLINE_Y - GAP.s)   # names in the content, not the headline row
        verdict = fit_lines(self.text("verdict"), S.SMALL, S.WARNING, S.TEXT_W)
        keep_inside(verdict.move_to(UP * S.FOOTER_Y), S.CONTENT)
        enc, dec, both = cols
        rise = UP * GAP.s             # how far each part rises as it fades in
        with self.beat("encoder_only") as beat:
            # "three families grew from that design"
            self.play(LaggedStart(*[FadeIn(c.name, shift=-rise) for c in cols], lag_ratio=0.4),
                      run_time=beat.span(0.8))
            beat.at("encoder-only")  # "encoder-only models such as … read in both directions"
            self.play(FadeIn(enc.icon, shift=rise), run_time=beat.span(0.3))
            self.play(FadeIn(VGroup(*enc.body[1:3]), shift=rise), run_time=beat.span(0.5))
            beat.at("encoder-only", into=0.5)   # "… to understand it: to classify it, or to find it in a search"
            self.play(FadeIn(enc.can, shift=rise), run_time=beat.span(0.4))
            beat.at("good")          # "they never write, so nothing is hidden from them, and they cannot write"
            self.play(Swell(enc.icon, color=S.ATTENTION, scale_factor=1.1), run_time=beat.span(0.4))
            self.play(FadeIn(enc.cannot, shift=rise), run_time=beat.span(0.6))
        with self.beat("decoder_only") as beat:
            # "decoder-only models such as … see only the past"
            self.play(FadeIn(VGroup(*dec.body[:3]), shift=rise), run_time=beat.span(0.4))
            self.play(Swell(dec.icon, color=S.WARNING, scale_factor=1.1), run_time=beat.span(0.6))
            beat.at("write")         # "trained to predict every next token, so they must never see ahead"
            self.play(FadeIn(dec.cannot, shift=rise), Swell(dec.icon, color=S.WARNING, scale_factor=1.1),
                      run_time=beat.span(0.4))
            beat.at("write", into=0.55)   # "… and they write one token at a time"
            self.play(FadeIn(dec.can, shift=rise), run_time=beat.span(0.5))
            beat.at("ours")          # "GPT-2, the model in this film, is one of them"
            ours = SurroundingRectangle(dec.examples[0], color=S.TOKEN, buff=GAP.xs)
            self.play(Create(ours), Swell(dec.examples[0], color=S.TOKEN, scale_factor=1.3),
                      run_time=beat.span(0.5))
            self.play(FadeOut(ours), run_time=beat.span(0.5))
        with self.beat("encoder_decoder") as beat:
            # "encoder-decoders such as … keep both towers"
            self.play(FadeIn(VGroup(*both.body[:3]), shift=rise), run_time=beat.span(0.4))
            self.play(Swell(both.icon, color=S.ATTENTION, scale_factor=1.1), run_time=beat.span(0.6))
            beat.at("read-write")    # "they read one text and write another"
            self.play(FadeIn(VGroup(both.can, both.cannot), shift=rise), run_time=beat.span(0.6))
        with self.beat("verdict") as beat:
            # "take the names away and the difference is a single triangle of minus infinity"
            # the frame keeps off the verdict's line: a longer language's column reaches nearly down to it
            # only its bottom gives way: with one buff all round, Spanish's hairline frame touched the ✗ and
            # the last letter of '✗ nunca ve un token posterior' on its sides (and the name at its top)
            room = dec.get_bottom()[1] - verdict.get_top()[1]
            bottom = min(GAP.s, max(GAP.xxs, room - GAP.xs))
            # the frame's height split evenly between its top (GAP.s) and its bottom (`bottom`)
            vertical, lift = (GAP.s + bottom) / 2, (GAP.s - bottom) / 2
            frame = SurroundingRectangle(dec, color=S.WARNING, buff=(GAP.s, vertical), corner_radius=0.1)
            frame.shift(UP * lift)
            self.play(*[c.name.animate.set_opacity(0.25) for c in cols], Create(frame), run_time=beat.span(0.3))
            # "… the difference is a single triangle of minus infinity": the verdict's line comes in as it
            # is said, not at "same" (it came in over the chapter's last 3 s, too late to be read)
            self.play(FadeIn(verdict, shift=UP * GAP.xs), Swell(dec.icon, color=S.WARNING, scale_factor=1.1),
                      run_time=beat.span(0.5))
            beat.at("same")          # "the arithmetic, and its cost, is the same"
            self.play(*[c.name.animate.set_opacity(1) for c in cols], Swell(verdict, color=S.WARNING, scale_factor=1.05),
                      run_time=beat.span(0.8))


SCENES = [MaskOff, Towers, Families]
