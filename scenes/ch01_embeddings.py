"""Chapter 01 — ids become vectors: the embedding lookup, meaning as direction, positions added
(the meter's first move: T x n_embd additions), and the residual stream every layer reads."""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, AnimationGroup, Arc, Arrow, Create, Dot, DoubleArrow, FadeIn, FadeOut,
                   Group, GrowArrow, GrowFromCenter, GrowFromEdge, ImageMobject, LaggedStart, Line, MoveAlongPath,
                   Rectangle, RoundedRectangle, SurroundingRectangle, Transform, TransformFromCopy, VGroup)
from manim.constants import RESAMPLING_ALGORITHMS

from data.facts.ch01 import embed_facts, sinusoidal_table
from scenes import style as S
from scenes.base import ChapterScene
from scenes.ch00_tokens import accent_room
from scenes.follow import Swell, glow, say
from scenes.layout import GAP, below, fit_to, keep_inside, place_in, table
from scenes.text import fit_lines, fit_width, label
from scenes.widgets import DivergingLegend, NumberGrid, TokenChip, layer_window, token_row
from words import numbers as N

MAX_ROWS = 8          # token rows shown in a T x d grid before '⋮'


def colour_array(values: np.ndarray, vmax: float) -> np.ndarray:
    """Signed values -> RGB uint8 on the film's diverging scale (vectorised S.diverging)."""
    zero, pos, neg = (np.array(c.to_rgb()) for c in (S.ZERO, S.POSITIVE, S.NEGATIVE))
    t = np.clip(np.nan_to_num(values) / (vmax if vmax > 0 else 1.0), -1.0, 1.0)[..., None]
    rgb = np.where(t >= 0, zero + t * (pos - zero), zero + (-t) * (neg - zero))
    return (rgb * 255).round().astype(np.uint8)


def heatmap(values: np.ndarray, vmax: float, width: float, height: float) -> ImageMobject:
    """A matrix as an image, one pixel per value, stretched to width x height (no smoothing)."""
    img = ImageMobject(colour_array(values, vmax))
    img.set_resampling_algorithm(RESAMPLING_ALGORITHMS["nearest"])
    img.stretch_to_fit_width(width)
    img.stretch_to_fit_height(height)
    return img


def robust_vmax(values: np.ndarray) -> float:
    """The colour scale's end: the 99th percentile of |value| (a few outliers do not wash it out)."""
    v = float(np.percentile(np.abs(values), 99))
    return v if v > 0 else 1.0


class EmbeddingScene(ChapterScene):
    chapter = "01"

    def setup(self):
        super().setup()
        self.facts = embed_facts(self.bundle)
        self.rows = list(range(min(self.bundle.T, MAX_ROWS)))
        # GPT-2's own strings drawn besides the prompt's tokens (never the catalog's): the lecture's word pairs
        self.gpt2_texts = {S.show_token(" " + p[w]) for p in self.facts["cosine"] for w in ("a", "b")}

    def window_note(self):
        if len(self.rows) == self.bundle.T:
            return None
        return label(self.text("window-note", shown=len(self.rows), T=self.bundle.T), S.SMALL, S.MUTED)


class Lookup(EmbeddingScene):
    """Each id picks a row of the token-embedding table."""
    show_title = True

    def build(self):
        b, f = self.bundle, self.facts
        V, d = f["V"], f["d"]
        with self.beat("table") as beat:
            n_cols = label(self.text("numbers-per-row", d=N.fmt_int(d)), S.SMALL, S.TOKEN)
            # the token table: 3 units wide, or as wide as its "numbers per row" (a longer language's words)
            wte = Rectangle(width=max(3.0, n_cols.width), height=3.7, stroke_color=S.MUTED, stroke_width=2,
                            fill_color=S.PANEL, fill_opacity=1)
            name = label(self.text("table-name", V=N.fmt_int(V), d=N.fmt_int(d)), S.BODY_SIZE, S.INK)
            name.next_to(wte, UP, buff=GAP.s)
            params = label(self.text("params", params=N.fmt_int(f["wte_params"]), share=N.fmt_pct(f["wte_share"], 1),
                                     total=N.fmt_int(f["total_params"])), S.SMALL, S.MUTED)
            below(fit_width(params, S.CONTENT_W), wte, buff=GAP.s)
            # the share of the whole model, as a bar under the count
            whole = Rectangle(width=params.width, height=0.14, stroke_color=S.MUTED, stroke_width=1.5)
            part = Rectangle(width=max(0.02, params.width * f["wte_share"]), height=0.14, stroke_width=0,
                             fill_color=S.TOKEN, fill_opacity=1)
            share = VGroup(whole, part)
            below(whole, params, buff=GAP.xs)
            part.move_to(whole, aligned_edge=LEFT)
            # the table's two extents, drawn as they are read: V rows down, d numbers across
            down = DoubleArrow(wte.get_corner(UP + RIGHT) + RIGHT * GAP.m, wte.get_corner(DOWN + RIGHT) + RIGHT * GAP.m,
                               buff=GAP.none, color=S.TOKEN, stroke_width=4, tip_length=0.15)
            top_row = label(self.text("row-n", row=0), S.SMALL, S.MUTED, mono=True).next_to(down, RIGHT, buff=GAP.xs).align_to(down, UP)
            bottom_row = label(self.text("row-n", row=N.fmt_int(V - 1)), S.SMALL, S.MUTED, mono=True)
            bottom_row.next_to(down, RIGHT, buff=GAP.xs).align_to(down, DOWN)
            n_rows = label(self.text("row-count", count=V, n=N.fmt_int(V)), S.SMALL, S.TOKEN).rotate(-np.pi / 2).next_to(down, RIGHT, buff=GAP.xs)
            inset = UP * GAP.l
            across = DoubleArrow(wte.get_corner(DOWN + LEFT) + inset + RIGHT * GAP.xs,
                                 wte.get_corner(DOWN + RIGHT) + inset + LEFT * GAP.xs,
                                 buff=GAP.none, color=S.TOKEN, stroke_width=4, tip_length=0.15)
            n_cols.next_to(across, UP, buff=GAP.xs)
            # the table's column, right, inside the margins
            keep_inside(place_in(VGroup(name, wte, params, share, down, top_row, bottom_row, n_rows, across, n_cols),
                                 S.RIGHT_HALF), S.FULL)
            # one line per token: its chip, then its id (the row it picks), the ids in one right-aligned column
            chips = VGroup(*[VGroup(TokenChip(b.tokens[i], size=S.SMALL), label(str(b.ids[i]), S.SMALL, S.TOKEN, mono=True))
                             for i in self.rows])
            table(chips, "LR", gaps=GAP.s, row_gap=GAP.xxs)   # 8 rows fit at S.SMALL
            left_quarter = S.LEFT_HALF.with_(right=S.LEFT_HALF.x)
            keep_inside(place_in(fit_to(chips, width=4.0, height=4.7), left_quarter), S.CONTENT)
            stripes, arrows = VGroup(), VGroup()
            for chip, i in zip(chips, self.rows):
                y = wte.get_top()[1] - (b.ids[i] + 0.5) / V * wte.height
                stripe = Line(wte.get_left() + [0.04, 0, 0], wte.get_right() - [0.04, 0, 0],
                              color=S.TOKEN, stroke_width=3).set_y(y)
                stripes.add(stripe)
                arrows.add(Arrow(chip[1].get_right(), stripe.get_left(), buff=GAP.xs, color=S.TOKEN,
                                 stroke_width=2, max_tip_length_to_length_ratio=0.06, tip_length=0.15))
            note = self.window_note()
            if note is not None:
                note.next_to(chips, UP, buff=GAP.s).align_to(chips, S.START)
            self.play(LaggedStart(*[FadeIn(c, shift=RIGHT * GAP.s) for c in chips], lag_ratio=0.15),
                      *([FadeIn(note)] if note else []), run_time=beat.span(0.8))
            say(self, beat, "keeps", FadeIn(wte), FadeIn(name))
            say(self, beat, "one-row", LaggedStart(*[GrowArrow(a) for a in arrows], lag_ratio=0.1),
                LaggedStart(*[Create(s) for s in stripes], lag_ratio=0.1))
            say(self, beat, "table", GrowFromCenter(down), FadeIn(top_row), FadeIn(bottom_row), FadeIn(n_rows),
                into=0.55)
            say(self, beat, "table", GrowFromCenter(across), FadeIn(n_cols), into=0.8)
            say(self, beat, "parameters", FadeIn(params), wte.animate.set_fill(S.TOKEN, opacity=0.3))
            say(self, beat, "percent", FadeIn(whole), GrowFromEdge(part, LEFT))
        with self.beat("row") as beat:
            i = f["row_index"]
            vec = b["wte_rows"][i]
            self.play(*[FadeOut(m) for m in (wte, name, top_row, bottom_row, params, chips, stripes, arrows, down,
                                             n_rows, across, n_cols, share)],
                      *([FadeOut(note)] if note else []), run_time=beat.share(0.12))
            chip = TokenChip(b.tokens[i], b.ids[i], size=S.BODY_SIZE)
            pick = label(self.text("id-to-row", id=b.ids[i]), S.BODY_SIZE, S.TOKEN, mono=True)
            head = VGroup(chip, pick).arrange(S.END, buff=GAP.l)
            grid = fit_width(NumberGrid(vec[None, :], max_cols=8, cell_w=1.2, shape_text=f"1 × {N.fmt_int(d)}"),
                             S.CONTENT_W)
            vmax = float(np.abs(vec).max()) or 1.0
            strip = heatmap(vec[None, :], vmax, S.CONTENT_W - 1.0, 0.45)
            strip_title = label(self.text("strip-title", d=N.fmt_int(d)), S.SMALL, S.MUTED)
            strip_title.next_to(strip, UP, buff=GAP.s).align_to(strip, S.START)
            legend = DivergingLegend(vmax, decimals=2).next_to(strip, DOWN, buff=GAP.m)
            # top to bottom: the token and its row, the row's first numbers, all of them as colours
            place_in(Group(head, grid, Group(strip_title, strip, legend)).arrange(DOWN, buff=GAP.xl), S.CONTENT)
            self.play(FadeIn(head, shift=DOWN * GAP.s), run_time=beat.span(0.3))
            say(self, beat, "becomes", FadeIn(strip_title), GrowFromEdge(strip, LEFT), FadeIn(legend))
            say(self, beat, "numbers", FadeIn(grid.cell_group), LaggedStart(*[FadeIn(t) for t in grid.text_group],
                                                                             lag_ratio=0.08),
                FadeIn(grid.ellipses), FadeIn(grid.shape_mob))
            noise = None
            if self.bundle.synthetic:     # random weights: the row is seeded noise, not something learned
                noise = VGroup(glow(strip, color=S.WARNING, opacity=0.15),
                               label(self.text("seeded-noise"), S.SMALL, S.WARNING).next_to(strip, UP, buff=GAP.s)
                               .align_to(strip, S.END))
                say(self, beat, "noise", FadeIn(noise))
        with self.beat("grid") as beat:
            self.play(*[FadeOut(m) for m in (head, grid, strip, strip_title, legend, *([noise] if noise else []))],
                      run_time=beat.share(0.1))
            g = NumberGrid(b["wte_rows"], row_labels=b.tokens, rows=self.rows, max_cols=7,
                           shape_text=f"{b.T} × {N.fmt_int(d)}")
            title = label(self.text("grid-title"), S.BODY_SIZE, S.INK)
            group = VGroup(title, g).arrange(DOWN, buff=GAP.m)
            room = S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.6)    # a line under it for the FLOPs note
            place_in(fit_to(group, width=room.width, height=room.height + accent_room(title)), room)
            copied = label(self.text("copied"), S.BODY_SIZE, S.FLOPS)
            fit_width(copied, S.CONTENT_W).move_to(UP * S.FOOTER_Y)
            self.play(FadeIn(title), FadeIn(g.cell_group), FadeIn(g.row_label_mobs), run_time=beat.span(0.2))
            # "every token gets its row": the numbers arrive row by row
            rows_text = [g.row_values(r) for r in g.rows]
            self.play(LaggedStart(*[FadeIn(t) for t in rows_text], lag_ratio=0.6), FadeIn(g.ellipses),
                      run_time=beat.span(0.6))
            say(self, beat, "grid", FadeIn(g.shape_mob), FadeIn(glow(g.cell_group, opacity=0.12)))
            say(self, beat, "copying", FadeIn(copied, shift=UP * GAP.xs))
            ring = glow(self.meter, color=S.FLOPS, opacity=0.15)
            beat.at("meter")
            run = beat.span(0.4)
            self.pay("embed", FadeIn(ring), run_time=run)


class Meaning(EmbeddingScene):
    """Cosine similarity between real embedding rows for the lecture's word pairs."""

    def build(self):
        pairs = self.facts["cosine"]
        with self.beat("cosine") as beat:
            formula = label(self.text("cosine-formula"), S.BODY_SIZE, S.INK).move_to(UP * S.HEADLINE_Y)
            axis_w = 5.0
            rows = VGroup()
            for p in pairs:
                a = TokenChip(" " + p["a"], size=S.SMALL)
                bb = TokenChip(" " + p["b"], size=S.SMALL)
                names = VGroup(a, bb).arrange(RIGHT, buff=GAP.s)
                one = axis_w / 2          # the length of a cosine of 1 on either side of zero
                axis = Line(LEFT * one, RIGHT * one, color=S.MUTED, stroke_width=2)
                zero = Line(UP * GAP.m, DOWN * GAP.m, color=S.MUTED, stroke_width=2)
                c = float(p["cosine"])
                bar = Rectangle(width=max(0.03, abs(c) * one), height=0.32, stroke_width=0,
                                fill_color=S.POSITIVE if c >= 0 else S.NEGATIVE, fill_opacity=1)
                bar.move_to(axis.get_center(), aligned_edge=LEFT if c >= 0 else RIGHT)
                value = label(N.fmt_cos(c), S.NUMBER_SIZE, S.INK, mono=True)
                rows.add(VGroup(names, VGroup(axis, zero, bar), value))
            # columns: the two words | their cosine on an axis from −1 to 1 | its value
            table(rows, "LLL", gaps=GAP.l, row_gap=GAP.s)
            last_axis = rows[-1][1][0]
            ticks = VGroup(*[below(label(t, S.SMALL, S.MUTED, mono=True), last_axis)
                             .set_x(last_axis.get_left()[0] + frac * axis_w)
                             for t, frac in (("−1", 0.0), ("0", 0.5), ("1", 1.0))])
            block = VGroup(rows, ticks)
            fit_width(block, S.CONTENT_W)
            src = label(self.text("cosine-source"), S.SMALL, S.MUTED)
            below(fit_width(src, S.CONTENT_W), block)
            under_formula = S.CONTENT.with_(top=formula.get_bottom()[1])
            place_in(VGroup(block, src), under_formula)
            # the angle between two rows, drawn as two arrows from one point
            origin, a_angle, b_angle = np.zeros(3), 0.35, 1.15
            a_dir, b_dir = (np.array([np.cos(t), np.sin(t), 0]) for t in (a_angle, b_angle))
            va = Arrow(origin, origin + 2.6 * a_dir, buff=GAP.none, color=S.TOKEN, stroke_width=6)
            vb = Arrow(origin, origin + 2.6 * b_dir, buff=GAP.none, color=S.RESIDUAL, stroke_width=6)
            arc = Arc(radius=0.9, start_angle=a_angle, angle=b_angle - a_angle, arc_center=origin, color=S.INK,
                      stroke_width=3)
            between = (a_dir + b_dir) / np.linalg.norm(a_dir + b_dir)     # halfway between the two rows
            theta = label(self.text("angle"), S.BODY_SIZE, S.INK).next_to(origin + arc.radius * between, between, buff=GAP.s)
            names = VGroup(label(self.text("row-a"), S.BODY_SIZE, S.TOKEN).next_to(va.get_end(), RIGHT, buff=GAP.s),
                           label(self.text("row-b"), S.BODY_SIZE, S.RESIDUAL).next_to(vb.get_end(), UP, buff=GAP.s))
            angle = VGroup(va, vb, arc, theta, names)
            place_in(angle, under_formula)
            self.play(FadeIn(formula), run_time=beat.span(0.3))
            say(self, beat, "angle", GrowArrow(va), GrowArrow(vb), Create(arc), FadeIn(theta), FadeIn(names))
            # the pairs, then their scores, one bar after another as they are read
            # (the rest of the pairs' sentence is shared among the rows, from where they are introduced)
            say(self, beat, "pairs", FadeOut(angle),
                LaggedStart(*[FadeIn(r[0], shift=RIGHT * GAP.s) for r in rows], lag_ratio=0.2),
                *[FadeIn(r[1][:2]) for r in rows], FadeIn(ticks))
            reading = glow(rows[0], color=S.INK, opacity=0.1)
            for k, r in enumerate(rows):
                move = FadeIn(reading) if k == 0 else Transform(reading, glow(r, color=S.INK, opacity=0.1))
                say(self, beat, "pairs", grow_cosine(r), move, into=0.1 + 0.85 * k / len(rows),
                    run_time=min(1.0, beat.span(0.2)))
            self.play(FadeOut(reading), run_time=0.3)
            related = [r for r, p in zip(rows, pairs) if p.get("related")]
            others = [r for r, p in zip(rows, pairs) if not p.get("related")]
            if self.bundle.synthetic and related and others:   # random weights: what a trained table shows
                say(self, beat, "related", *[FadeIn(glow(r, color=S.POSITIVE, opacity=0.15))
                                             for r in related])
                say(self, beat, "unrelated", *[FadeIn(glow(r, color=S.MUTED, opacity=0.15)) for r in others])
                say(self, beat, "meaning", FadeIn(src), into=0.9)
            else:
                say(self, beat, "meaning", FadeIn(src),
                    *[FadeIn(glow(r, color=S.POSITIVE, opacity=0.15)) for r in related])


def grow_cosine(row):
    """The bar of one cosine row growing from zero, with its value."""
    bar = row[1][2]
    edge = LEFT if bar.get_center()[0] >= row[1][1].get_center()[0] else RIGHT
    return AnimationGroup(GrowFromEdge(bar, edge), FadeIn(row[2]))


class Positions(EmbeddingScene):
    """Order is not free: position vectors are added (the meter's first FLOPs), learned vs sinusoidal."""
    meter_start = "positions"

    def build(self):
        b, f = self.bundle, self.facts
        d, T = f["d"], b.T
        with self.beat("order") as beat:
            shown = self.rows
            forward = token_row([b.tokens[i] for i in shown], max_width=S.CONTENT_W)
            backward = token_row([b.tokens[i] for i in reversed(shown)], max_width=S.CONTENT_W)
            tag_f = label(self.text("as-written"), S.SMALL, S.MUTED)
            tag_b = label(self.text("reversed"), S.SMALL, S.MUTED)
            same = fit_width(label(self.text("same-set"), S.BODY_SIZE, S.INK), S.CONTENT_W)   # shrinks only longer words
            # the position each token would carry, under each chip
            pos_f = VGroup(*[below(label(str(k), S.BODY_SIZE, S.RESIDUAL, mono=True), c, buff=GAP.xs)
                             for k, c in enumerate(forward)])
            pos_b = VGroup(*[below(label(str(k), S.BODY_SIZE, S.RESIDUAL, mono=True), c, buff=GAP.xs)
                             for k, c in enumerate(backward)])
            block = VGroup(VGroup(tag_f, VGroup(forward, pos_f)).arrange(DOWN, buff=GAP.s),
                           VGroup(tag_b, VGroup(backward, pos_b)).arrange(DOWN, buff=GAP.s), same).arrange(DOWN, buff=GAP.l)
            room = S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.4)    # the content box less a line for the window note
            place_in(fit_to(block, room), room)
            note = self.window_note()
            if note is not None:
                below(note, block, buff=GAP.s)
            self.play(FadeIn(tag_f), FadeIn(forward), *([FadeIn(note)] if note else []), run_time=beat.span(0.25))
            # "shuffle the tokens": the same chips, in the other order
            say(self, beat, "shuffle", FadeIn(tag_b),
                *[TransformFromCopy(forward[k], backward[len(backward) - 1 - k]) for k in range(len(forward))])
            same_lit = glow(same, color=S.INK, opacity=0.1)
            block.add(same_lit)
            say(self, beat, "same", FadeIn(same), FadeIn(same_lit))
            # "each token's position has to be written into its vector": the positions under each row
            lit = glow(VGroup(forward, pos_f), color=S.RESIDUAL, opacity=0.15)
            block.add(lit)
            say(self, beat, "position", FadeOut(same_lit), FadeIn(lit),
                LaggedStart(*[FadeIn(m, shift=DOWN * GAP.xs) for m in pos_f], lag_ratio=0.2))
            say(self, beat, "vector", Transform(lit, glow(VGroup(backward, pos_b), color=S.RESIDUAL, opacity=0.15)),
                LaggedStart(*[FadeIn(m, shift=DOWN * GAP.xs) for m in pos_b], lag_ratio=0.2))
        with self.beat("add") as beat:
            self.play(FadeOut(block), *([FadeOut(note)] if note else []), run_time=beat.share(0.1))
            shape = f"{T} × {N.fmt_int(d)}"
            tok = NumberGrid(b["wte_rows"], row_labels=b.tokens, rows=self.rows, max_cols=3, shape_text=shape)
            pos = NumberGrid(b["wpe_rows"], row_labels=[self.text("pos-label", pos=i) for i in range(T)], rows=self.rows,
                             max_cols=3, shape_text=shape, label_color=S.MUTED)
            out = NumberGrid(b["resid_pre"][0], rows=self.rows, max_cols=3, shape_text=shape)
            titles = [label(t, S.SMALL, c) for t, c in ((self.text("token-vectors"), S.TOKEN),
                                                       (self.text("position-vectors"), S.MUTED),
                                                       (self.text("sum"), S.RESIDUAL))]
            cols = VGroup(*[VGroup(t, g).arrange(DOWN, buff=GAP.s) for t, g in zip(titles, (tok, pos, out))])
            plus, eq = label("+", S.TITLE_SIZE, S.MUTED), label("=", S.TITLE_SIZE, S.MUTED)
            row = VGroup(cols[0], plus, cols[1], eq, cols[2]).arrange(RIGHT, buff=GAP.m)
            e = self.ledger["positions"]
            bill = label(self.text("bill", formula=e.formula, flops=N.fmt_int(e.flops)), S.BODY_SIZE, S.FLOPS, mono=True)
            group = VGroup(row, bill).arrange(DOWN, buff=GAP.l)
            if group.height - accent_room(*titles) - accent_room(bill) > S.CONTENT.height:
                # too tall (a long prompt's rows): the bill takes the footer line, the grids the room above it
                bill.move_to(UP * S.FOOTER_Y)
                room = S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.6)
                place_in(fit_to(row, width=room.width, height=room.height + accent_room(*titles)), room)
            else:
                place_in(fit_to(group, width=S.CONTENT.width, height=S.CONTENT.height + accent_room(*titles)),
                         S.CONTENT)
            plus.set_y(tok.cell_group.get_center()[1])
            eq.set_y(tok.cell_group.get_center()[1])
            self.play(FadeIn(cols[0]), run_time=beat.span(0.25))
            say(self, beat, "second", FadeIn(plus), FadeIn(cols[1], shift=LEFT * GAP.s))
            # "row zero is added to the first token, row one to the second"
            def pair(r):
                return VGroup(glow(VGroup(tok.row_label_mobs[r], tok.row_cells(tok.rows[r])), buff=GAP.xxs),
                              glow(VGroup(pos.row_label_mobs[r], pos.row_cells(pos.rows[r])), color=S.RESIDUAL,
                                   buff=GAP.xxs))
            hl = pair(0)
            say(self, beat, "row-zero", FadeIn(hl))
            if len(tok.rows) > 1:
                say(self, beat, "row-one", Transform(hl, pair(1)))
            say(self, beat, "so-on", FadeOut(hl), FadeIn(eq), FadeIn(cols[2], shift=LEFT * GAP.s))
            lit = VGroup(glow(bill, color=S.FLOPS, opacity=0.12))
            say(self, beat, "additions", FadeIn(bill), FadeIn(lit[0]))
            beat.at("additions", into=0.45)
            run = beat.span(0.4)
            lit.add(glow(self.meter, color=S.FLOPS, opacity=0.15))
            self.pay("positions", FadeIn(lit[1]), run_time=run)
        with self.beat("tables") as beat:
            self.play(FadeOut(group), FadeOut(lit), run_time=beat.share(0.1))
            Pn, Dn = f["P_shown"], f["d_shown"]
            learned = b["wpe_table"][:Pn, :Dn].astype(np.float64)
            sines = sinusoidal_table(f["P"], d)[:Pn, :Dn]
            w = 4.6
            ours_txt = VGroup(label(self.text("ours-rows", last=min(T, Pn) - 1), S.SMALL, S.TOKEN),
                              label(self.text("ours-tokens", T=T), S.SMALL, S.TOKEN)).arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)

            def make_panels(h):
                panels, images = VGroup(), []
                for name, colour, values in ((self.text("learned-title"), S.RESIDUAL, learned),
                                             (self.text("sinusoidal-title"), S.INK, sines)):
                    vmax = robust_vmax(values)
                    img = heatmap(values, vmax, w, h)
                    frame = Rectangle(width=w, height=h, stroke_color=S.MUTED, stroke_width=1).move_to(img)
                    title = label(name, S.SMALL, colour)
                    dims = label(self.text("dims", last=Dn - 1), S.SMALL, S.MUTED).next_to(frame, UP, buff=GAP.xxs)
                    title.next_to(dims, UP, buff=GAP.xs)
                    positions = label(self.text("positions-axis", last=Pn - 1), S.SMALL, S.MUTED).rotate(np.pi / 2)
                    positions.next_to(frame, LEFT, buff=GAP.xs)
                    legend = DivergingLegend(vmax, decimals=2).next_to(frame, DOWN, buff=GAP.s)
                    panels.add(VGroup(frame, title, dims, positions, legend))
                    images.append(img)
                panels.arrange(RIGHT, buff=ours_txt.width + GAP.xl)   # the gap holds the note on our tokens' rows
                return panels, images
            panels, images = make_panels(3.3)
            # the notes under the panels, wrapped to a panel's width; the tables lose the height they need
            shown_text = self.text("shown-note", P_shown=Pn, P=N.fmt_int(f["P"]), D_shown=Dn, d=N.fmt_int(d))
            formula = fit_lines(self.text("sine-formula"), S.SMALL, S.INK, panels[1].width)
            shown_under = fit_lines(shown_text, S.SMALL, S.MUTED, panels[0].width)
            under = max(0.5, max(formula.height, shown_under.height) + GAP.m)
            room = S.CONTENT.with_(bottom=S.CONTENT.bottom + under)  # less the lines under it for the notes
            if panels.height > room.height:
                panels, images = make_panels(3.3 - (panels.height - room.height))
            place_in(fit_to(panels, room), room)
            for img, panel in zip(images, panels):
                frame = panel[0]
                img.stretch_to_fit_width(frame.width).stretch_to_fit_height(frame.height).move_to(frame)
            ours = panels[0][0]
            band_h = max(0.04, ours.height * min(T, Pn) / Pn)
            bracket = Line(ours.get_corner(UP + RIGHT) + RIGHT * GAP.xs,
                           ours.get_corner(UP + RIGHT) + RIGHT * GAP.xs + DOWN * band_h, color=S.TOKEN,
                           stroke_width=6)
            ours_txt.next_to(bracket, RIGHT, buff=GAP.xs).align_to(bracket, UP)
            fit_width(ours_txt, panels[1][3].get_left()[0] - bracket.get_right()[0] - 0.25)
            shown_note = label(shown_text, S.SMALL, S.MUTED)
            below(fit_width(shown_note, S.CONTENT_W), panels)
            below(fit_width(formula, panels[1].width), panels[1])
            if shown_note.get_right()[0] > formula.get_left()[0] - 0.3:     # each under its panel, side by side
                shown_note = below(fit_width(shown_under, panels[0].width), panels[0])
            keep_inside(formula, S.CONTENT)

            def bands(p):
                """One position's row outlined in both tables: its pattern in each."""
                out = VGroup()
                for panel in panels:
                    fr = panel[0]
                    y = fr.get_top()[1] - (p + 0.5) / Pn * fr.height
                    out.add(Rectangle(width=fr.width + GAP.s, height=max(0.12, fr.height / Pn), stroke_color=S.TOKEN,
                                      stroke_width=4).move_to(fr).set_y(y))
                return out
            say(self, beat, "left", FadeIn(images[0]), FadeIn(panels[0]), Create(bracket), FadeIn(ours_txt))
            # "the first 256 rows": the position axis and what is shown
            say(self, beat, "left", FadeIn(shown_note),
                FadeIn(glow(VGroup(panels[0][3], shown_note), color=S.INK, opacity=0.1)), into=0.45)
            if self.bundle.synthetic:    # random weights: the learned table is noise here
                warn = glow(ours, color=S.WARNING, buff=GAP.xxs, opacity=0.2)
                say(self, beat, "noise", FadeIn(warn))
                trained = fit_lines(self.text("trained-note"), S.SMALL, S.INK, panels[0].width - 0.4)
                trained.move_to(ours)
                say(self, beat, "structured", FadeIn(trained),
                    Transform(warn, glow(trained, color=S.WARNING, buff=GAP.s, opacity=0.85)))
            say(self, beat, "right", FadeIn(images[1]), FadeIn(panels[1]))
            say(self, beat, "waves", FadeIn(glow(panels[1][0], color=S.INK, buff=GAP.xxs, opacity=0.0, stroke=5)))
            say(self, beat, "formula", FadeIn(formula), FadeIn(glow(formula, color=S.INK, opacity=0.1)))
            band = bands(min(T, Pn) - 1)
            say(self, beat, "own-pattern", Create(band))
            say(self, beat, "every", Transform(band, bands(Pn // 2)), into=0.95)


class Residual(EmbeddingScene):
    """The residual stream: the lane every layer reads from and adds to."""
    meter_start = "L0.qkv"

    def build(self):
        b, f = self.bundle, self.facts
        L = f["n_layer"]
        with self.beat("stream") as beat:
            lane = Rectangle(width=S.CONTENT_W, height=0.9, stroke_color=S.RESIDUAL, stroke_width=2,
                             fill_color=S.RESIDUAL, fill_opacity=0.18)
            name = label(self.text("stream-name", T=b.T, d=N.fmt_int(f["d"])), S.BODY_SIZE, S.RESIDUAL)
            below(name, lane, buff=GAP.s, aligned=S.START)
            start = label(self.text("stream-start"), S.SMALL, S.INK).move_to(lane).align_to(lane, LEFT).shift(RIGHT * GAP.s)
            blocks, arrows, plus = VGroup(), VGroup(), VGroup()
            x0 = start.get_right()[0] + 0.5
            x1 = lane.get_right()[0] - 0.3
            shown = layer_window(L)      # every layer, or the first and last few with a '⋯' between
            step = (x1 - x0) / len(shown)
            bw = min(0.95, step * 0.8)
            for k, l in enumerate(shown):
                cx = x0 + step * (k + 0.5)
                box = RoundedRectangle(corner_radius=0.08, width=bw, height=0.9, stroke_color=S.MUTED,
                                       stroke_width=2, fill_color=S.PANEL, fill_opacity=1)
                box.next_to(lane, UP, buff=1.1).set_x(cx)      # room for the arrows between
                num = label("⋯" if isinstance(l, tuple) else str(l + 1), S.SMALL, S.INK).move_to(box)
                blocks.add(VGroup(box, num))
                read = Arrow([cx - bw * 0.25, lane.get_top()[1], 0], [cx - bw * 0.25, box.get_bottom()[1], 0],
                             buff=GAP.xxs, color=S.MUTED, stroke_width=2, tip_length=0.12)
                write = Arrow([cx + bw * 0.25, box.get_bottom()[1], 0], [cx + bw * 0.25, lane.get_center()[1], 0],
                              buff=GAP.xxs, color=S.RESIDUAL, stroke_width=2, tip_length=0.12)
                arrows.add(VGroup(read, write))
                plus.add(label("+", S.SMALL, S.RESIDUAL).next_to(write.get_end(), DOWN, buff=GAP.s))
            layers = label(self.text("layer-count", count=L), S.SMALL, S.MUTED).next_to(blocks, UP, buff=GAP.s)
            formula = label("x  →  x + f(x)", S.BODY_SIZE, S.INK, mono=True)
            below(formula, name, buff=GAP.m).align_to(lane, S.END)
            dot = Dot(color=S.RESIDUAL, radius=0.12).next_to(start, RIGHT, buff=GAP.xxs)
            path = Line(dot.get_center(), [x1 + 0.2, dot.get_center()[1], 0])
            place_in(VGroup(lane, name, start, blocks, arrows, plus, layers, formula, dot, path), S.CONTENT)
            self.play(GrowFromEdge(lane, LEFT), FadeIn(start), FadeIn(name), run_time=beat.span(0.3))
            say(self, beat, "rows", Swell(name, color=S.RESIDUAL, scale_factor=1.1))
            # "that flow through all 12 layers": the layers appear and a row travels under them
            say(self, beat, "flow", LaggedStart(*[FadeIn(bk, shift=DOWN * GAP.s) for bk in blocks], lag_ratio=0.06),
                FadeIn(layers), FadeIn(dot))
            beat.at("flow", into=0.1)
            self.play(MoveAlongPath(dot, path), run_time=beat.span(0.9))
            # "each layer reads the stream, computes an edit and adds it back"
            say(self, beat, "reads", LaggedStart(*[GrowArrow(a[0]) for a in arrows], lag_ratio=0.05))
            say(self, beat, "computes", *[bk[0].animate.set_fill(S.RESIDUAL, opacity=0.45) for bk in blocks])
            say(self, beat, "adds", LaggedStart(*[GrowArrow(a[1]) for a in arrows], lag_ratio=0.05),
                LaggedStart(*[FadeIn(p) for p in plus], lag_ratio=0.05),
                *[bk[0].animate.set_fill(S.PANEL, opacity=1) for bk in blocks])
            say(self, beat, "layers-add", FadeIn(formula, shift=UP * GAP.xs),
                FadeIn(glow(formula, color=S.RESIDUAL, opacity=0.15)))
        with self.beat("handoff") as beat:
            first = blocks[0]
            ring = SurroundingRectangle(first, color=S.ATTENTION, buff=GAP.xs, stroke_width=4)
            nxt = label(self.text("next-attention"), S.BODY_SIZE, S.ATTENTION).next_to(ring, UP, buff=GAP.m)
            nxt.align_to(ring, LEFT)
            self.play(FadeOut(dot), FadeOut(layers), Create(ring), FadeIn(nxt, shift=DOWN * GAP.xs),
                      first[0].animate.set_fill(S.ATTENTION, opacity=0.35), run_time=beat.span(0.4))
            say(self, beat, "next", Swell(VGroup(ring, nxt), color=S.ATTENTION, scale_factor=1.08))


SCENES = [Lookup, Meaning, Positions, Residual]
