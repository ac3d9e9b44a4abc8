"""Chapter 01 — ids become vectors: the embedding lookup, meaning as direction, positions added
(the meter's first move: T x n_embd additions), and the residual stream every layer reads."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, AnimationGroup, Arc, Arrow, Circle, Create, CurvedArrow, DashedLine, Dot, DoubleArrow,
                   FadeIn, FadeOut, FadeTransform,
                   Group, GrowArrow, GrowFromCenter, GrowFromEdge, ImageMobject, LaggedStart, Line, MoveAlongPath,
                   Rectangle, ReplacementTransform, Rotate, RoundedRectangle, SurroundingRectangle, Transform,
                   Succession, TransformFromCopy, VGroup)
from manim.constants import RESAMPLING_ALGORITHMS

from onepass.data.facts.ch01 import SHOWN_TOKENS, dial_angles, embed_facts, order_strips, rope_speeds, sinusoidal_table
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.ch00_tokens import accent_room
from onepass.scenes.follow import Swell, change, glow, glow_cells, say
from onepass.scenes.layout import GAP, above, below, fit_to, keep_inside, place_in, table
from onepass.scenes.text import fit_lines, fit_width, label
from onepass.scenes.widgets import DivergingLegend, NumberGrid, TokenChip, layer_window
from onepass.words import numbers as N

ORIGIN_ = np.zeros(3)
MAX_ROWS = SHOWN_TOKENS    # token rows shown in a T x d grid before '⋮'
ICON_W, ICON_H = 1.6, 2.8  # the token table drawn small (training, the copied rows)
TRAIN_W = 7.0              # the training text's line of tokens at most this wide
NUDGE_GAP = 1.4            # between the training text and the table: room for the nudge's arrow
ARC_ANGLE = np.pi / 2      # each token's arrow to the next bows under the line
ANGLE_R, ARC_R = 2.4, 0.8  # the two rows' arrows and the arc of the angle between them
READOUT_W = 2.6            # room right of the arrows for the angle and its cosine
READOUT_GAP = 1.6          # between the arrows' half disc and the readout: the scale's "1.00" beside row a's tip
STRIP_W, STRIP_H = 0.5, 0.8    # a vector's first numbers as a column of colours under its token
SIGMA_GAP = 0.9            # between a row of tokens and the strip of their sum
SUM_ROOM = 2.0             # what the sum's strip and its name take at the end of a row of tokens


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


def dial(degrees: float, radius: float = 0.32, color=S.QUERY) -> VGroup:
    """A pair of numbers as an arrow on a circle, turned `degrees` from the start (RoPE's turn)."""
    ring = Circle(radius=radius, color=S.MUTED, stroke_width=2)
    t = np.radians(degrees)
    hand = Arrow(ring.get_center(), ring.get_center() + radius * np.array([np.cos(t), np.sin(t), 0]), buff=0,
                 color=color, stroke_width=4, tip_length=0.12, max_tip_length_to_length_ratio=0.4)
    start = Line(ring.get_center(), ring.get_center() + RIGHT * radius, color=S.MUTED, stroke_width=1.5)
    return VGroup(ring, start, hand)


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
    """Why an id is not enough, the lookup in the token table, how the table was learned, and the
    prompt as a T x d grid copied out of it (no arithmetic: the meter stays at 0)."""
    show_title = True

    def question(self):
        """An id is a label, a place in a list: its size and its neighbours mean nothing."""
        b, f = self.bundle, self.facts
        V, idf = f["V"], f["ids"]
        with self.beat("question") as beat:
            head = fit_width(label(self.text("question"), S.BODY_SIZE, S.INK), S.CONTENT_W)
            head.move_to(UP * S.HEADLINE_Y)
            chips = VGroup(*[TokenChip(b.tokens[i], b.ids[i], size=S.BODY_SIZE) for i in self.rows])
            chips.arrange(RIGHT, buff=GAP.l, aligned_edge=UP)
            # the same chips in the order of their ids: where each sits in the vocabulary's list
            order = sorted(range(len(chips)), key=lambda k: (b.ids[self.rows[k]], k))
            slots = VGroup(*[chips[k].copy() for k in order]).arrange(RIGHT, buff=GAP.l, aligned_edge=UP)
            compare = label(self.text("bigger", high=idf["high_id"], low=idf["low_id"]), S.BODY_SIZE, S.INK, mono=True)
            strike = Line(compare.get_corner(DOWN + LEFT), compare.get_corner(UP + RIGHT), color=S.WARNING,
                          stroke_width=5)
            no_meaning = below(label(self.text("no-meaning"), S.SMALL, S.WARNING), compare, buff=GAP.xs)
            compare_lit = glow(compare, color=S.INK, opacity=0.1)
            comparison = VGroup(compare, strike, no_meaning, compare_lit)
            axis = Line(LEFT * S.CONTENT_W / 2, RIGHT * S.CONTENT_W / 2, color=S.MUTED, stroke_width=3)
            axis_name = below(label(self.text("id-axis", V=N.fmt_int(V)), S.SMALL, S.MUTED), axis, buff=GAP.l)
            ends = VGroup(below(label(N.fmt_int(0), S.SMALL, S.MUTED, mono=True), axis, buff=GAP.xs, aligned=LEFT),
                          below(label(N.fmt_int(V - 1), S.SMALL, S.MUTED, mono=True), axis, buff=GAP.xs, aligned=RIGHT))
            line = VGroup(axis, axis_name, ends)
            block = VGroup(comparison, VGroup(chips, slots), line).arrange(DOWN, buff=GAP.xl)
            slots.move_to(chips)
            room = S.CONTENT.with_(top=head.get_bottom()[1] - GAP.s)
            place_in(fit_to(block, room), room)
            ticks, leaders = VGroup(), VGroup()
            for k, chip in enumerate(slots):
                x = axis.get_left()[0] + b.ids[self.rows[order[k]]] / max(1, V - 1) * axis.width
                tick = Line([x, axis.get_y() + GAP.s, 0], [x, axis.get_y() - GAP.s, 0], color=S.TOKEN, stroke_width=3)
                ticks.add(tick)
                leaders.add(Line(chip.get_bottom(), tick.get_top(), color=S.TOKEN, stroke_width=1.5, stroke_opacity=0.7))
            note = self.window_note()
            if note is not None:
                above(note, chips, buff=GAP.s, aligned=LEFT)
            self.play(LaggedStart(*[FadeIn(c, shift=DOWN * GAP.s) for c in chips], lag_ratio=0.15),
                      *([FadeIn(note)] if note else []), run_time=beat.span(0.7))
            # "a place in a list": the chips take their places in id order, each over its spot on the line
            say(self, beat, "line", *[chips[k].animate.move_to(slots[j]) for j, k in enumerate(order)],
                Create(axis), FadeIn(ends), FadeIn(axis_name))
            sorted_chips = [chips[k] for k in order]
            say(self, beat, "line", LaggedStart(*[Create(ln) for ln in leaders], lag_ratio=0.1),
                LaggedStart(*[GrowFromCenter(t) for t in ticks], lag_ratio=0.1), into=0.5)
            head_lit = glow(head, color=S.INK, opacity=0.12)
            say(self, beat, "ask", FadeIn(head, shift=DOWN * GAP.xs))
            say(self, beat, "compute", FadeIn(head_lit), Swell(head, color=S.INK, scale_factor=1.05))
            lit = VGroup(*[glow(chips[i], color=S.WARNING, opacity=0.15) for i in (idf["high"], idf["low"])])
            say(self, beat, "more", FadeIn(compare, shift=DOWN * GAP.xs), FadeIn(compare_lit))
            say(self, beat, "number", FadeIn(lit[0]))            # the larger id's token
            say(self, beat, "bigger", Create(strike), FadeIn(no_meaning), FadeIn(lit[1]))
            if idf["near"] is not None:
                i, j = idf["near"]
                pair = VGroup(chips[i], chips[j])
                near = above(label(self.text("near-ids", gap=N.fmt_int(idf["near_gap"])), S.SMALL, S.TOKEN), pair,
                             buff=GAP.s)
                keep_inside(near, S.CONTENT)
                say(self, beat, "near", FadeOut(comparison), Transform(lit, glow(pair, color=S.TOKEN, opacity=0.15)),
                    FadeIn(near))
                comparison = near
            else:
                say(self, beat, "near", Transform(lit, glow(VGroup(*sorted_chips), color=S.TOKEN, opacity=0.15)))
        self.question_mobs = [head, head_lit, chips, comparison, line, ticks, leaders, lit, *([note] if note else [])]

    def build(self):
        self.question()
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
            self.play(*[FadeOut(m) for m in self.question_mobs], run_time=beat.span(0.2))
            self.play(LaggedStart(*[FadeIn(c, shift=RIGHT * GAP.s) for c in chips], lag_ratio=0.15),
                      *([FadeIn(note)] if note else []), run_time=beat.span(0.7))
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
        with self.beat("learned") as beat:
            icon = self.table_icon()
            chips = VGroup()                    # the training text: the prompt's tokens, as many as fit on a line
            for i in self.rows:
                chip = TokenChip(b.tokens[i], size=S.SMALL)
                if len(chips) > 1 and chips.width + chip.width + GAP.xl > TRAIN_W:
                    break
                chips.add(chip)
                chips.arrange(RIGHT, buff=GAP.xl)
            # each token points at the one after it: what the model had to guess there
            arcs = VGroup(*[CurvedArrow(chips[k].get_bottom() + DOWN * GAP.xs, chips[k + 1].get_bottom() + DOWN * GAP.xs,
                                        angle=ARC_ANGLE, color=S.TOKEN, stroke_width=3, tip_length=0.15)
                            for k in range(len(chips) - 1)])
            guess = below(label(self.text("guess"), S.SMALL, S.TOKEN), VGroup(chips, arcs), buff=GAP.s)
            inside = VGroup(chips, arcs, guess)
            panel = SurroundingRectangle(inside, buff=GAP.m, color=S.MUTED, stroke_width=2, corner_radius=0.1)
            corpus = above(label(self.text("corpus"), S.SMALL, S.MUTED), panel, buff=GAP.xs, aligned=LEFT)
            text_side = VGroup(corpus, panel, inside)
            row = VGroup(text_side, icon).arrange(RIGHT, buff=NUDGE_GAP)
            nudge = Arrow(panel.get_right(), icon[0].get_left(), buff=GAP.s, color=S.TOKEN, stroke_width=4)
            nudge_words = fit_width(label(self.text("nudge"), S.SMALL, S.TOKEN), S.CONTENT_W)
            learned_all = label(self.text("learned-all"), S.SMALL, S.INK)
            # the picture fits under the line that says every weight was learned; that line keeps its size
            room = S.CONTENT.with_(top=S.CONTENT.top - learned_all.height - GAP.l)
            block = VGroup(row, nudge, below(nudge_words, row, buff=GAP.l))
            place_in(fit_to(block, room), room)
            above(learned_all, row, buff=GAP.l).align_to(icon, S.END)
            keep_inside(learned_all, S.CONTENT)
            self.play(*[FadeOut(m) for m in (head, grid, strip, strip_title, legend, *([noise] if noise else []))],
                      FadeIn(icon, shift=LEFT * GAP.s), run_time=beat.span(0.6))
            say(self, beat, "training", Swell(icon[0], color=S.TOKEN, scale_factor=1.1))
            say(self, beat, "corpus", Create(panel), FadeIn(corpus),
                LaggedStart(*[FadeIn(c, shift=RIGHT * GAP.xs) for c in chips], lag_ratio=0.15))
            # a one-token prompt has no next token to point at: the words alone say it
            say(self, beat, "guess", *([LaggedStart(*[Create(a) for a in arcs], lag_ratio=0.3)] if len(arcs) else []),
                FadeIn(guess))
            say(self, beat, "nudge", GrowArrow(nudge), FadeIn(nudge_words, shift=UP * GAP.xs))
            say(self, beat, "little", Swell(VGroup(icon[0], icon[1]), color=S.TOKEN, scale_factor=1.08))
            # hugging the table: the default buff took the outline into its name just above
            lit = glow(icon[0], color=S.TOKEN, buff=GAP.xxs, opacity=0.2)
            say(self, beat, "every", FadeIn(lit), Swell(icon[1], color=S.TOKEN, scale_factor=1.1))
            all_lit = glow(learned_all, color=S.INK, opacity=0.1)
            say(self, beat, "all", FadeIn(learned_all, shift=DOWN * GAP.xs), FadeIn(all_lit))
            training = [panel, corpus, inside, nudge, nudge_words, learned_all, lit, all_lit]
            if self.bundle.synthetic:     # random weights: nothing here was trained
                never = label(self.text("never-trained"), S.SMALL, S.WARNING).move_to(learned_all).align_to(learned_all, S.END)
                keep_inside(never, S.CONTENT)
                say(self, beat, "random", Transform(lit, glow(icon[0], color=S.WARNING, buff=GAP.xxs, opacity=0.3)))
                # replaced by a fade, not morphed: the words on screen are then the warning's own (its size its own)
                say(self, beat, "never", FadeTransform(learned_all, never),
                    Transform(all_lit, glow(never, color=S.WARNING, opacity=0.15)))
                training[training.index(learned_all)] = never
        with self.beat("grid") as beat:
            icon2 = self.table_icon()
            g = NumberGrid(b["wte_rows"], row_labels=b.tokens, rows=self.rows, max_cols=7,
                           shape_text=f"{b.T} × {N.fmt_int(d)}")
            title = label(self.text("grid-title"), S.BODY_SIZE, S.INK)
            right = VGroup(title, g).arrange(DOWN, buff=GAP.m)
            group = VGroup(icon2, right).arrange(RIGHT, buff=NUDGE_GAP)
            room = S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.6)    # a line under it for the FLOPs note
            place_in(fit_to(group, width=room.width, height=room.height + accent_room(title)), room)
            copied = label(self.text("copied"), S.BODY_SIZE, S.FLOPS)
            fit_width(copied, S.CONTENT_W).move_to(UP * S.FOOTER_Y)
            self.play(*[FadeOut(m) for m in training], ReplacementTransform(icon, icon2), FadeIn(title),
                      FadeIn(g.row_label_mobs), run_time=beat.span(0.25))
            # "every token gets its row": each row copied out of the table into the grid
            stripes = icon2[1]
            self.play(LaggedStart(*[AnimationGroup(TransformFromCopy(stripes[k], g.row_cells(r)), FadeIn(g.row_values(r)))
                                    for k, r in enumerate(g.rows)], lag_ratio=0.5),
                      FadeIn(g.ellipses), run_time=beat.span(0.7))
            # the frame on the cells' own edges: grown outward it ran into the row labels beside them
            say(self, beat, "grid", FadeIn(g.shape_mob), FadeIn(glow_cells(g, list(g.cells))))
            # outlines only: a tint over the grid takes its numbers under 4.5:1
            say(self, beat, "copying", *[TransformFromCopy(stripes[k], glow(g.row_cells(r), color=S.TOKEN, buff=GAP.xxs,
                                                                             opacity=0))
                                         for k, r in enumerate(g.rows)])
            say(self, beat, "none", FadeIn(copied, shift=UP * GAP.xs), FadeIn(glow(copied, color=S.FLOPS, opacity=0.1)))
            # the title and the count only: the step line this pay brings sits under them, and a ring
            # sized to the meter before it would cut through its words
            ring = glow(VGroup(self.meter.title, self.meter.counter), color=S.FLOPS, buff=GAP.xxs, opacity=0.15)
            beat.at("meter")
            run = beat.span(0.4)
            self.pay("embed", FadeIn(ring), run_time=run)

    def table_icon(self) -> VGroup:
        """The token table, small: its frame, a stripe at each shown token's row, its name above."""
        b, f = self.bundle, self.facts
        rect = Rectangle(width=ICON_W, height=ICON_H, stroke_color=S.MUTED, stroke_width=2, fill_color=S.PANEL,
                         fill_opacity=1)
        stripes = VGroup()
        for i in self.rows:
            y = rect.get_top()[1] - (b.ids[i] + 0.5) / f["V"] * rect.height
            stripes.add(Line(rect.get_left() + RIGHT * GAP.xs, rect.get_right() + LEFT * GAP.xs, color=S.TOKEN,
                             stroke_width=3).set_y(y))
        name = above(fit_lines(self.text("table-name", V=N.fmt_int(f["V"]), d=N.fmt_int(f["d"])), S.SMALL, S.INK,
                               ICON_W + ICON_W), rect, buff=GAP.s)
        return VGroup(rect, stripes, name)


class Meaning(EmbeddingScene):
    """Meaning as direction: the cosine of the angle between two rows (an angle drawn from the bundle's
    pair), then the cosines of the lecture's word pairs."""

    def angle_state(self, origin, deg: float, cos: float, spot) -> VGroup:
        """The arc from row a to row b at `deg` degrees, b's name at its tip and the readout (degrees,
        cosine) at `spot`."""
        t = np.radians(deg)
        tip = origin + ANGLE_R * np.array([np.cos(t), np.sin(t), 0])
        arc = Arc(radius=ARC_R, start_angle=0, angle=max(t, 1e-3), arc_center=origin, color=S.INK, stroke_width=3)
        readout = VGroup(label(self.text("degrees", degrees=N.fmt_int(int(round(deg)))), S.BODY_SIZE, S.INK, mono=True),
                         label(self.text("cos-readout", value=N.fmt_cos(cos)), S.BODY_SIZE, S.INK))
        readout.arrange(DOWN, buff=GAP.s, aligned_edge=LEFT).move_to(spot, aligned_edge=LEFT)
        name = label(self.text("row-b"), S.BODY_SIZE, S.RESIDUAL).next_to(tip, UP, buff=GAP.s)
        return VGroup(arc, readout, name)

    def build(self):
        f = self.facts
        pairs = f["cosine"]
        featured, angle0 = f["featured"], f["featured_angle"]
        formula = label(self.text("cosine-formula"), S.BODY_SIZE, S.INK).move_to(UP * S.HEADLINE_Y)
        under_formula = S.CONTENT.with_(top=formula.get_bottom()[1])
        with self.beat("angle") as beat:
            # a half disc of room (b turns from 0 to 180 degrees) and the readout to its right
            room = Rectangle(width=ANGLE_R + ANGLE_R, height=ANGLE_R + GAP.xl, stroke_width=0)
            spot = Rectangle(width=READOUT_W, height=ANGLE_R, stroke_width=0).next_to(room, RIGHT, buff=READOUT_GAP)
            place_in(VGroup(room, spot), under_formula)
            origin = room.get_bottom() + UP * GAP.l
            spot = spot.get_left()
            va = Arrow(origin, origin + RIGHT * ANGLE_R, buff=GAP.none, color=S.TOKEN, stroke_width=6)
            t0 = np.radians(angle0)
            vb = Arrow(origin, origin + ANGLE_R * np.array([np.cos(t0), np.sin(t0), 0]), buff=GAP.none,
                       color=S.RESIDUAL, stroke_width=6)
            name_a = label(self.text("row-a"), S.BODY_SIZE, S.TOKEN).next_to(va.get_end(), DOWN, buff=GAP.s)
            state = self.angle_state(origin, angle0, featured["cosine"], spot)
            self.play(FadeIn(formula, shift=DOWN * GAP.xs), FadeIn(glow(formula, color=S.INK, opacity=0.08)),
                      run_time=beat.span(0.5))
            say(self, beat, "space", GrowArrow(va), FadeIn(name_a))
            say(self, beat, "both", GrowArrow(vb), FadeIn(state[2]))
            say(self, beat, "measure", Create(state[0]), FadeIn(state[1][0], shift=LEFT * GAP.xs))
            say(self, beat, "agree", FadeIn(state[1][1], shift=LEFT * GAP.xs))
            # the scale's ends and middle: the same way, a right angle, opposite ways
            # each stop leaves a faint ray with its cosine: a scale around the half circle
            at, scale = angle0, VGroup()
            for mark, (deg, cos) in zip(("same", "square", "opposite"), f["tour"]):
                t = np.radians(deg)
                ray = np.array([np.cos(t), np.sin(t), 0])
                side = RIGHT if ray[0] > 0.5 else LEFT           # beside the tip, clear of b's name above it
                # an upright ray's value hangs below its tip: b's name sits above the tip when the pair is
                # near a right angle
                hang = {"aligned_edge": UP} if abs(ray[0]) <= 0.5 else {}
                stop = VGroup(DashedLine(origin, origin + ANGLE_R * ray, color=S.MUTED, stroke_width=2),
                              label(N.fmt_cos(cos), S.SMALL, S.MUTED, mono=True)
                              # clear of b's arrowhead too, which stops on these rays (at 90° and 180°)
                              .next_to(origin + ANGLE_R * ray, side, buff=GAP.s + vb.tip.width, **hang))
                scale.add(stop)
                say(self, beat, mark, Rotate(vb, np.radians(deg - at), about_point=origin),
                    change(state, self.angle_state(origin, deg, cos, spot)), FadeIn(stop))
                at = deg
            # back to the pair's own angle, the arrows named by its two words
            chip_a = TokenChip(" " + featured["a"], size=S.SMALL).next_to(va.get_end(), DOWN, buff=GAP.s)
            final = self.angle_state(origin, angle0, featured["cosine"], spot)
            arc, readout, name_b = final
            final = VGroup(arc, readout, TokenChip(" " + featured["b"], color=S.RESIDUAL, size=S.SMALL).move_to(name_b))
            lit = glow(final[1], color=S.INK, opacity=0.1)
            say(self, beat, "pair", Rotate(vb, np.radians(angle0 - at), about_point=origin), change(state, final),
                FadeTransform(name_a, chip_a))
            say(self, beat, "value", FadeIn(lit), Swell(state[1][1], color=S.INK, scale_factor=1.1))
            if self.bundle.synthetic:      # random weights: the angle is chance
                say(self, beat, "chance", Transform(lit, glow(final[1], color=S.WARNING, opacity=0.2)))
            figure = [va, vb, state, chip_a, lit, scale]
        with self.beat("cosine") as beat:
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
            # under the whole last row, not its axis: the glow around that row stays clear of them
            ticks = VGroup(*[below(label(t, S.SMALL, S.MUTED, mono=True), rows[-1])
                             .set_x(last_axis.get_left()[0] + frac * axis_w)
                             for t, frac in (("−1", 0.0), ("0", 0.5), ("1", 1.0))])
            block = VGroup(rows, ticks)
            fit_width(block, S.CONTENT_W)
            src = label(self.text("cosine-source"), S.SMALL, S.MUTED)
            below(fit_width(src, S.CONTENT_W), block)
            under_formula = S.CONTENT.with_(top=formula.get_bottom()[1])
            place_in(VGroup(block, src), under_formula)
            # the pairs, then their scores, one bar after another as they are read
            # (the rest of the pairs' sentence is shared among the rows, from where they are introduced)
            say(self, beat, "pairs", *[FadeOut(m) for m in figure],
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
            src_lit = glow(src, color=S.INK, opacity=0.1)
            if self.bundle.synthetic:      # random weights: the scores are chance; what a trained table shows
                say(self, beat, "scores", FadeIn(glow(VGroup(*[r[2] for r in rows]), color=S.WARNING, opacity=0.15)))
                if related and others:
                    say(self, beat, "meaning", FadeIn(src), FadeIn(src_lit))
                    say(self, beat, "related", *[FadeIn(glow(r, color=S.POSITIVE, opacity=0.15)) for r in related])
                    say(self, beat, "unrelated", *[FadeIn(glow(r, color=S.MUTED, opacity=0.15)) for r in others])
                else:
                    say(self, beat, "meaning", FadeIn(src), FadeIn(src_lit))
            else:
                say(self, beat, "meaning", FadeIn(src), FadeIn(src_lit))
                say(self, beat, "pulled", *[FadeIn(glow(r, color=S.POSITIVE, opacity=0.15)) for r in (related or rows)])
                # "...toward similar rows": the cosines that training raised, each bar in turn
                say(self, beat, "pulled", LaggedStart(*[Swell(r[1][2], color=S.POSITIVE, scale_factor=1.15)
                                                        for r in (related or rows)], lag_ratio=0.2), into=0.5)


def grow_cosine(row):
    """The bar of one cosine row growing from zero, with its value."""
    bar = row[1][2]
    edge = LEFT if bar.get_center()[0] >= row[1][1].get_center()[0] else RIGHT
    return AnimationGroup(GrowFromEdge(bar, edge), FadeIn(row[2]))


class Positions(EmbeddingScene):
    """Order is not free: position vectors are added (the meter's first FLOPs), learned vs sinusoidal.
    A model without a position table (RoPE) adds nothing here: the beats say where positions went
    (a turn of q and k inside attention) and what its rotation speeds reach."""
    meter_start = "positions"

    def meter_opening(self) -> tuple[int, str]:
        if not self.bundle.shape.has_position_table:      # no 'positions' entry: the meter stays after the lookup
            return self.ledger.before("L0.qkv"), ""
        return super().meter_opening()

    def build(self):
        b, f = self.bundle, self.facts
        table = b.shape.has_position_table
        d, T = f["d"], b.T
        with self.beat("order") as beat:
            # as many of the prompt's tokens as fit on one line, with room for the sum's strip
            tag_f = label(self.text("as-written"), S.SMALL, S.MUTED)
            tag_b = label(self.text("reversed"), S.SMALL, S.MUTED)
            tag_w = max(tag_f.width, tag_b.width) + GAP.m         # the tags stand at the start of their rows
            n = 0
            width = 0.0
            for i in self.rows:
                chip_w = TokenChip(b.tokens[i], size=S.BODY_SIZE).width + GAP.xl
                if n > 1 and width + chip_w > S.CONTENT_W - SUM_ROOM - tag_w:
                    break
                n, width = n + 1, width + chip_w
            shown = self.rows[:n]
            strips = order_strips(b, n)
            vmax = robust_vmax(np.concatenate([strips["plain"], strips["placed"]]))

            def chips_of(order):
                return VGroup(*[TokenChip(b.tokens[i], size=S.BODY_SIZE) for i in order]).arrange(RIGHT, buff=GAP.xl)

            def strip(values, scale=vmax):
                """A vector's first numbers as a column of colours, under its token."""
                return heatmap(np.asarray(values)[:, None], scale, STRIP_W, STRIP_H)

            forward, backward = chips_of(shown), chips_of(list(reversed(shown)))
            same = fit_width(label(self.text("same-set"), S.BODY_SIZE, S.INK), S.CONTENT_W)   # shrinks only longer words
            differ = fit_width(label(self.text("now-differ" if table else "not-added"), S.BODY_SIZE, S.RESIDUAL),
                               S.CONTENT_W)
            rows = []
            for chips, plain, placed in ((forward, strips["plain"], strips["placed"]),
                                          (backward, strips["plain_reversed"], strips["placed_reversed"])):
                cols = Group(*[strip(v) for v in plain])
                moved = Group(*[strip(v) for v in placed])
                for chip, c, m in zip(chips, cols, moved):
                    below(c, chip, buff=GAP.xs)
                    m.move_to(c)
                slots = VGroup(*[below(label(N.fmt_int(k), S.SMALL, S.RESIDUAL, mono=True), c, buff=GAP.xs)
                                 for k, c in enumerate(cols)])
                total = plain.sum(axis=0)
                sigma = strip(total, robust_vmax(total)).next_to(cols, S.END, buff=SIGMA_GAP)
                sigma_name = above(label("Σ " + self.text("sum-of"), S.SMALL, S.INK), sigma, buff=GAP.xs)
                rows.append(SimpleNamespace(chips=chips, cols=cols, moved=moved, slots=slots, sigma=sigma,
                                            sigma_name=sigma_name, all=Group(chips, cols, slots, sigma, sigma_name)))
            top, bottom = rows

            def into_sum(r):
                """Each vector of a row flies into the row's sum strip, which appears."""
                return [FadeOut(c.copy(), target_position=r.sigma, scale=0.5) for c in r.cols] + [FadeIn(r.sigma)]
            for tag, r in ((tag_f, top), (tag_b, bottom)):
                tag.next_to(r.chips, S.START, buff=GAP.m)
                r.all.add(tag)
            block = Group(top.all, bottom.all, Group(same, differ)).arrange(DOWN, buff=GAP.m)
            bottom.all.shift(RIGHT * (top.chips.get_x() - bottom.chips.get_x()))   # the rows' tokens one above the other
            differ.move_to(same)
            note = self.window_note()
            # the content box, less a line for the window note where there is one
            room = S.CONTENT if note is None else S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.4)
            place_in(fit_to(block, room), room)
            for r in rows:
                for c, m in zip(r.cols, r.moved):
                    m.move_to(c)
            if note is not None:
                below(note, block, buff=GAP.s)
            self.play(FadeIn(tag_f), FadeIn(top.chips), *([FadeIn(note)] if note else []), run_time=beat.span(0.6))
            # "attention mixes the tokens' vectors": each token's vector under it
            say(self, beat, "attn", LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in top.cols], lag_ratio=0.15))
            # "by adding them up": the sum, which does not care about order
            say(self, beat, "sum", *into_sum(top), FadeIn(top.sigma_name))
            # "shuffle the words": the same chips and vectors, in the other order
            k_last = len(shown) - 1
            say(self, beat, "shuffle", FadeIn(tag_b),
                *[TransformFromCopy(top.chips[k], bottom.chips[k_last - k]) for k in range(len(shown))],
                *[TransformFromCopy(top.cols[k], bottom.cols[k_last - k]) for k in range(len(shown))])
            same_lit = glow(same, color=S.INK, opacity=0.1)
            say(self, beat, "same", *into_sum(bottom), FadeIn(bottom.sigma_name))
            # "dog bites man and man bites dog would look alike": the two sums, one and the same
            sums_lit = glow(Group(top.sigma, bottom.sigma), color=S.INK, opacity=0.15)
            say(self, beat, "alike", FadeIn(sums_lit), FadeIn(same), FadeIn(same_lit))
            # "in GPT, each token sees only the tokens before it": what each token sees, growing along the row
            seen = [glow(VGroup(*top.chips[:k + 1]), color=S.ATTENTION, opacity=0.08) for k in range(len(shown))]
            say(self, beat, "position", FadeOut(same_lit), FadeOut(same), FadeOut(sums_lit), FadeIn(seen[0]))
            if len(seen) > 1:
                say(self, beat, "position", Succession(*[Transform(seen[0], s) for s in seen[1:]]), into=0.3)
            # "but among those it is lost again": the sums, still one and the same
            say(self, beat, "lost", FadeOut(seen[0]), Swell(Group(top.sigma, bottom.sigma), color=S.INK))
            # "each token's position has to be written into its vector": the slot's row added, row by row
            say(self, beat, "written", *[FadeOut(m) for r in rows for m in (r.sigma, r.sigma_name)],
                *[Transform(c, m) for c, m in zip(top.cols, top.moved)],
                LaggedStart(*[FadeIn(s, shift=DOWN * GAP.xs) for s in top.slots], lag_ratio=0.2))
            differ_lit = glow(differ, color=S.RESIDUAL, opacity=0.12)
            say(self, beat, "vector", *[Transform(c, m) for c, m in zip(bottom.cols, bottom.moved)],
                LaggedStart(*[FadeIn(s, shift=DOWN * GAP.xs) for s in bottom.slots], lag_ratio=0.2),
                FadeIn(differ), FadeIn(differ_lit))
            block = Group(tag_f, tag_b, *[m for r in rows for m in (r.chips, r.cols, r.slots)], differ, differ_lit)
        if not table:
            self.untabled(block, note)
            return
        with self.beat("add") as beat:
            self.play(FadeOut(block), *([FadeOut(note)] if note else []), run_time=beat.share(0.1))
            shape = f"{T} × {N.fmt_int(d)}"
            tok = NumberGrid(b["wte_rows"], row_labels=b.tokens, rows=self.rows, max_cols=3, shape_text=shape)
            pos = NumberGrid(b["wpe_rows"], row_labels=[self.text("pos-label", pos=i) for i in range(T)], rows=self.rows,
                             labels_are_tokens=False,
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
            lit.add(glow(VGroup(self.meter.title, self.meter.counter), color=S.FLOPS, buff=GAP.xxs, opacity=0.15))
            self.pay("positions", FadeIn(lit[1]), run_time=run)
            # "adding keeps every vector just as wide": the sum has the token vectors' shape
            widths = VGroup(*[glow(g.shape_mob, color=S.RESIDUAL, buff=GAP.xs, opacity=0.2) for g in (tok, pos, out)])
            lit.add(widths)
            say(self, beat, "width", LaggedStart(*[FadeIn(w) for w in widths], lag_ratio=0.3),
                Swell(out.shape_mob, color=S.RESIDUAL, scale_factor=1.2))
            wide = glow(out.cell_group, color=S.RESIDUAL, buff=GAP.xs, opacity=0)   # outline: its numbers stay readable
            lit.add(wide)
            say(self, beat, "grow", FadeIn(wide))
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
                    # room above the frame for the outlines drawn around it and its first rows
                    dims = label(self.text("dims", last=Dn - 1), S.SMALL, S.MUTED).next_to(frame, UP, buff=GAP.s)
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
            # "it has 1,024 rows and no more": the picture stops at row Pn - 1, the table at row P - 1. So the
            # last row's tag stands outside the picture, in the gap beside its foot: the frame's right edge goes
            # on, dotted, past the picture's last row (the rows not drawn), to a hard stop (the table's last
            # row), and the tag beside that stop; over the map's foot it named row Pn - 1 as row P - 1
            foot = ours.get_corner(DOWN + RIGHT) + RIGHT * GAP.xs
            legend_foot = panels[0][4].get_bottom()[1]
            stop_y = min(foot[1] - 0.5, legend_foot + GAP.xs)
            dots = DashedLine(foot, [foot[0], stop_y, 0], color=S.WARNING, stroke_width=5, dash_length=0.06,
                              dashed_ratio=0.5)
            stop = Line([foot[0] - GAP.xs, stop_y, 0], [foot[0] + GAP.xs, stop_y, 0], color=S.WARNING, stroke_width=6)
            beyond = VGroup(dots, stop)
            ceiling = fit_lines(self.text("ceiling", last=N.fmt_int(f["P"] - 1)), S.SMALL, S.ink_on(S.WARNING, 0.85),
                                panels[1][3].get_left()[0] - foot[0] - GAP.s - 0.25)
            ceiling.next_to(stop, RIGHT, buff=GAP.s)               # level with the stop; none of it beside a drawn row
            highest = ours.get_y(DOWN) - GAP.s
            if ceiling.get_y(UP) > highest:
                ceiling.shift(DOWN * (ceiling.get_y(UP) - highest))
            shown_note = label(shown_text, S.SMALL, S.MUTED)
            below(fit_width(shown_note, S.CONTENT_W), VGroup(panels, beyond, ceiling))
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
            # each lit on its own: one box around both lay across the table's picture
            say(self, beat, "left", FadeIn(shown_note), FadeIn(glow(panels[0][3], color=S.INK, opacity=0.1)),
                FadeIn(glow(shown_note, color=S.INK, opacity=0.1)), into=0.45)
            if self.bundle.synthetic:    # random weights: the learned table is noise here
                warn = glow(ours, color=S.WARNING, buff=GAP.xxs, opacity=0.2)
                say(self, beat, "noise", FadeIn(warn))
                # on the warning plate (WARNING at 85%): near-black, as INK read at 2.7:1 there (WCAG 1.4.3)
                # as wide as the picture less the plate's margin: at the panel's width the plate ran past the
                # picture over the position axis's outline (en, one line)
                trained = fit_lines(self.text("trained-note"), S.SMALL, S.ink_on(S.WARNING, 0.85), ours.width - GAP.xl)
                trained.move_to(ours)
                say(self, beat, "structured", FadeIn(trained),
                    Transform(warn, glow(trained, color=S.WARNING, buff=GAP.s, opacity=0.85)))
            # "it has 1,024 rows and no more": the table goes on past its picture to its last row (the tag laid
            # out above, beside the picture's foot)
            tag_plate = glow(ceiling, color=S.WARNING, buff=GAP.xs, opacity=0.85)
            say(self, beat, "ceiling", Create(beyond), FadeIn(tag_plate), FadeIn(ceiling))
            say(self, beat, "past", FadeIn(glow(shown_note, color=S.WARNING, opacity=0.15)),
                FadeIn(glow(panels[0][3], color=S.WARNING, opacity=0.15)))
            # the tag and its plate swell together, its words in their own ink: coloured WARNING on the WARNING
            # plate they could not be read for the length of the swell
            say(self, beat, "limit", Swell(VGroup(tag_plate, ceiling), color=S.ink_on(S.WARNING, 0.85), scale_factor=1.1))
            say(self, beat, "right", FadeIn(images[1]), FadeIn(panels[1]))
            say(self, beat, "waves", FadeIn(glow(panels[1][0], color=S.INK, buff=GAP.xxs, opacity=0.0, stroke=5)))
            say(self, beat, "formula", FadeIn(formula), FadeIn(glow(formula, color=S.INK, opacity=0.1)))
            say(self, beat, "longer", FadeIn(glow(panels[1][0], color=S.INK, buff=GAP.xxs, opacity=0.12)))
            band = bands(min(T, Pn) - 1)
            say(self, beat, "own-pattern", Create(band))
            # three quarters down: halfway, the band struck through the random-weights plate's words
            say(self, beat, "every", Transform(band, bands(Pn * 3 // 4)), into=0.95)
            # "most open models today use neither, but RoPE": both tables step back for what replaced them
            # the tables' pictures stay, dimmed; their labels and notes go, so the note reads alone
            instead = fit_lines(self.text("rope-instead"), S.BODY_SIZE, S.INK, S.CONTENT_W - 2 * GAP.xl)
            instead.move_to(VGroup(*panels))
            plate = glow(instead, color=S.PANEL, buff=GAP.m, opacity=0.92)
            say(self, beat, "rope", *[m.animate.set_opacity(0.3) for m in (*images, band)], self.clear_content(*images, band),
                FadeIn(plate), FadeIn(instead, shift=UP * GAP.xs))

    def untabled(self, block, note):
        """The add and tables beats of a model with no position table (RoPE): nothing is added, the
        meter holds; the position returns as a turn of each pair of q and k inside attention (dials,
        the model's own speeds); then every pair's speed against the trained length, and what a
        rescaling of the speeds (Llama 3.2's rule) does to the slow ones."""
        b, f = self.bundle, self.facts
        d, T = f["d"], b.T
        r = rope_speeds(b)
        with self.beat("add") as beat:
            self.play(FadeOut(block), *([FadeOut(note)] if note else []), run_time=beat.share(0.1))
            shape = f"{T} × {N.fmt_int(d)}"
            tok = NumberGrid(b["wte_rows"], row_labels=b.tokens, rows=self.rows, max_cols=3, shape_text=shape)
            tok_title = label(self.text("token-vectors"), S.SMALL, S.TOKEN)
            left = VGroup(tok_title, tok).arrange(DOWN, buff=GAP.s)
            plus = label("+", S.TITLE_SIZE, S.MUTED)
            slot = Rectangle(width=2.6, height=tok.cell_group.height, stroke_color=S.MUTED, stroke_width=2)
            slot.set_stroke(opacity=0.8)
            no_table = below(fit_lines(self.text("no-table"), S.SMALL, S.WARNING, slot.width + GAP.l), slot, buff=GAP.xs)
            strike = Line(slot.get_corner(DOWN + LEFT), slot.get_corner(UP + RIGHT), color=S.WARNING, stroke_width=4)
            right = VGroup(slot, strike, no_table)
            row = VGroup(left, plus, right).arrange(RIGHT, buff=GAP.m)
            plus.set_y(tok.cell_group.get_center()[1])
            right.set_y(tok.cell_group.get_center()[1])
            bill = label(self.text("no-additions"), S.BODY_SIZE, S.FLOPS)
            # the turn to come: one dial per token (fastest pair), then a slower pair's, the position under each
            n = min(len(self.rows), 6)
            speeds = [(0, dial_angles(b, n))]
            slow_i = int(np.argmin(np.abs(np.degrees(np.asarray(b["rope_inv_freq"], dtype=np.float64)) - 15.0)))
            speeds.append((slow_i, np.degrees(np.arange(n) * float(b["rope_inv_freq"][slow_i]))))
            dial_rows = VGroup()
            for k, (i, angles) in enumerate(speeds):
                dials = VGroup(*[dial(a, color=S.QUERY if k == 0 else S.KEY) for a in angles]).arrange(RIGHT, buff=GAP.l)
                per = label(self.text("per-token", degrees=N.fmt_int(int(round(float(angles[1] if n > 1 else 0.0))))),
                            S.SMALL, S.QUERY if k == 0 else S.KEY)
                dial_rows.add(VGroup(dials, per).arrange(S.END, buff=GAP.m))
            chips = VGroup(*[TokenChip(b.tokens[i], size=S.SMALL) for i in self.rows[:n]])
            for chip, dl in zip(chips, dial_rows[0][0]):
                chip.next_to(dl, UP, buff=GAP.s)
            slots = VGroup(*[below(label(self.text("pos-label", pos=i), S.SMALL, S.MUTED, mono=True), dl, buff=GAP.xs)
                             for i, dl in enumerate(dial_rows[0][0])])
            dial_rows.arrange(DOWN, buff=GAP.xl, aligned_edge=S.START)
            for chip, dl in zip(chips, dial_rows[0][0]):
                chip.next_to(dl, UP, buff=GAP.s)
            for sl, dl in zip(slots, dial_rows[0][0]):
                below(sl, dl, buff=GAP.xxs)
            turn_note = fit_lines(self.text("turn-note"), S.SMALL, S.INK, 6.0)
            turn = VGroup(chips, dial_rows, slots, turn_note)
            below(turn_note, dial_rows, buff=GAP.m)
            top = VGroup(row, bill).arrange(DOWN, buff=GAP.m)
            whole = VGroup(top, turn).arrange(RIGHT, buff=GAP.xl, aligned_edge=UP)   # side by side: both read large
            place_in(fit_to(whole, S.CONTENT), S.CONTENT)
            self.play(FadeIn(left), run_time=beat.span(0.4))
            say(self, beat, "none", FadeIn(plus), Create(slot), FadeIn(no_table), Create(strike))
            lit = glow(VGroup(self.meter.title, self.meter.counter), color=S.FLOPS, buff=GAP.xxs, opacity=0.15)
            say(self, beat, "meter", FadeIn(bill, shift=UP * GAP.xs), FadeIn(lit))
            say(self, beat, "rotate", LaggedStart(*[FadeIn(c, shift=DOWN * GAP.xs) for c in chips], lag_ratio=0.1),
                LaggedStart(*[Create(dl) for dl in dial_rows[0][0]], lag_ratio=0.15), FadeIn(slots),
                FadeIn(dial_rows[0][1]))
            # "...turned by an angle set by its token's position": each dial with its position, in turn
            say(self, beat, "rotate", LaggedStart(*[AnimationGroup(Swell(dl, color=S.QUERY, scale_factor=1.15),
                                                                   Swell(sl, color=S.QUERY, scale_factor=1.15))
                                                    for dl, sl in zip(dial_rows[0][0], slots)], lag_ratio=0.25),
                into=0.4)
            say(self, beat, "pairs", LaggedStart(*[Create(dl) for dl in dial_rows[1][0]], lag_ratio=0.15),
                FadeIn(dial_rows[1][1]))
            say(self, beat, "next", FadeIn(turn_note, shift=UP * GAP.xs), FadeIn(glow(turn_note, color=S.INK, opacity=0.1)))
            shown = Group(*(self._picture() or []))     # a Group: a play of Swells leaves one on screen
        with self.beat("tables") as beat:
            self.play(FadeOut(shown), run_time=beat.share(0.1))
            chart = self.speed_chart(r)
            place_in(fit_to(chart.all, S.CONTENT), S.CONTENT)
            self.play(Create(chart.axis), FadeIn(chart.ticks), FadeIn(chart.name), run_time=beat.span(0.4))
            say(self, beat, "speeds", LaggedStart(*[GrowFromEdge(bar, DOWN) for bar in chart.bars], lag_ratio=0.03),
                FadeIn(chart.pair_axis))
            # "...each by how many tokens it takes to turn once": the axis that counts them
            say(self, beat, "speeds", FadeIn(chart.tick_frame), into=0.3)
            say(self, beat, "fast", FadeIn(chart.fast), FadeIn(glow(chart.bars[0], color=S.QUERY, opacity=0.2)))
            say(self, beat, "slow", FadeIn(chart.slow), FadeIn(glow(chart.bars[-1], color=S.KEY, opacity=0.2)))
            say(self, beat, "trained", Create(chart.line), FadeIn(chart.line_name))
            say(self, beat, "unfinished", *[bar.animate.set_fill(S.WARNING, opacity=0.85) for bar in chart.over],
                FadeIn(chart.over_note))
            say(self, beat, "cap", Swell(chart.line_name, color=S.FLOPS, scale_factor=1.1))
            # "...nothing stops it at token P": the trained length is a mark on the chart, not a wall
            say(self, beat, "cap", chart.line.animate.set_stroke(opacity=0.35), into=0.5)
            say(self, beat, "past", FadeIn(chart.beyond), FadeIn(chart.beyond_glow))
            # "...the pairs reach angles it never met in training": the slow pairs past the line, lit
            say(self, beat, "past", FadeIn(glow(chart.over, color=S.WARNING, buff=GAP.xxs, opacity=0.12)), into=0.45)
            say(self, beat, "stretch", LaggedStart(*[Create(g) for g in chart.ghosts], lag_ratio=0.05))
            # "...Llama 3.2 slows its slow pairs N times": how many times, beside the outlines
            say(self, beat, "stretch", FadeIn(chart.ghost_note), FadeIn(chart.ghost_glow), into=0.5)

    def speed_chart(self, r: dict) -> SimpleNamespace:
        """Each pair's tokens per full turn as a bar on a log scale (pair 0 the fastest, on the left), a
        line at the trained length, the pairs past it marked, and Llama 3.2's rescaled speeds outlined."""
        W, H = 8.0, 4.2
        top = float(np.ceil(np.log10(max(r["stretched"].max(), r["slow"]))))
        bottom = 0.0
        y_of = lambda v: (np.log10(v) - bottom) / (top - bottom) * H
        n = r["pairs"]
        pitch = W / n
        axis = VGroup(Line(ORIGIN_, RIGHT * W, color=S.MUTED, stroke_width=2),
                      Line(ORIGIN_, UP * H, color=S.MUTED, stroke_width=2))
        ticks = VGroup()
        for e in range(int(bottom), int(top) + 1, 2):
            y = e / (top - bottom) * H
            ticks.add(Line([-0.08, y, 0], [0, y, 0], color=S.MUTED, stroke_width=2),
                      label(N.fmt_int(10 ** e), S.SMALL, S.MUTED, mono=True).next_to([-0.08, y, 0], LEFT, buff=GAP.xs))
        # the glow the axis's counting lights: its labels inside with room; the title above it, the labels right of it
        tick_frame = glow(ticks, color=S.INK, buff=GAP.m, opacity=0.08)
        name = label(self.text("turn-axis"), S.SMALL, S.INK).next_to(VGroup(axis, tick_frame), UP, buff=GAP.s)
        name.align_to(axis, LEFT)
        x0 = tick_frame.get_right()[0] + GAP.m          # where the labels inside the chart start
        bars = VGroup(*[Rectangle(width=pitch * 0.7, height=max(0.02, y_of(t)), stroke_width=0, fill_color=S.QUERY,
                                  fill_opacity=0.85).move_to([pitch * (i + 0.5), 0, 0], aligned_edge=DOWN)
                        for i, t in enumerate(r["turn"])])
        pair_axis = label(self.text("pair-axis", last=n - 1), S.SMALL, S.MUTED).next_to(axis[0], DOWN, buff=GAP.s)
        slow = label(self.text("turn-slow", tokens=N.fmt_int(int(round(r["slow"])))), S.SMALL, S.KEY)
        y_line = y_of(r["P"])
        line = DashedLine([0, y_line, 0], [W, y_line, 0], color=S.FLOPS, stroke_width=3)
        over = VGroup(*[bar for bar, t in zip(bars, r["turn"]) if t > r["P"]])
        over_note = fit_lines(self.text("unfinished", count=r["unfinished"], P=N.fmt_int(r["P"])), S.SMALL, S.WARNING,
                              3.4)
        beyond = fit_lines(self.text("beyond"), S.SMALL, S.WARNING, 3.4)
        ghosts = VGroup(*[Rectangle(width=pitch * 0.7, height=y_of(g), stroke_color=S.INK, stroke_width=2,
                                    fill_opacity=0).move_to([pitch * (i + 0.5), 0, 0], aligned_edge=DOWN)
                          for i, (g, t) in enumerate(zip(r["stretched"], r["turn"])) if g > t * 1.0001])
        # the line's name and the fast pair's words over the line, left of the first column that rises past it
        # (the bars' or the outlines'): in Spanish the name ran over the slowed pairs' outlines and the red frame
        tall = [i for i, (g, t) in enumerate(zip(r["stretched"], r["turn"])) if max(g, t) > r["P"]]
        room = (bars[tall[0]].get_left()[0] if tall else W) - GAP.m - x0
        line_name = fit_lines(self.text("trained-length", P=N.fmt_int(r["P"])), S.SMALL, S.FLOPS, room)
        line_name.next_to(line, UP, buff=GAP.xs)
        line_name.shift(RIGHT * (x0 - line_name.get_left()[0]))
        fast = fit_lines(self.text("turn-fast", tokens=N.fmt_int(int(round(r["fast"])))), S.SMALL, S.QUERY, room)
        fast.next_to(line_name, UP, buff=GAP.l).align_to(line_name, LEFT)        # clear of the short bars
        # above the last bar and the outlines that rise over it later (under them, their edges crossed its words)
        slow.next_to(VGroup(bars[-1], *ghosts), UP, buff=GAP.s).align_to(bars[-1], RIGHT)
        ghost_note = fit_lines(self.text("stretched", factor=N.fmt_int(int(round(r["stretch_factor"])))), S.SMALL, S.INK,
                               3.4)
        chart = VGroup(axis, ticks, bars, line, ghosts)
        # the notes' boxes made here, so the column keeps its gap between the boxes, not just their words
        beyond_glow = glow(beyond, color=S.WARNING, opacity=0.12)
        ghost_glow = glow(ghost_note, color=S.INK, opacity=0.1)
        side = VGroup(over_note, VGroup(beyond, beyond_glow), VGroup(ghost_note, ghost_glow))
        side.arrange(DOWN, buff=GAP.m, aligned_edge=S.START)
        side.next_to(chart, S.END, buff=GAP.l)
        extras = VGroup(tick_frame, name, pair_axis, fast, slow, line_name, side)
        return SimpleNamespace(axis=axis, ticks=ticks, name=name, bars=bars, pair_axis=pair_axis, fast=fast, slow=slow,
                               line=line, line_name=line_name, over=over, over_note=over_note, beyond=beyond,
                               ghosts=ghosts, ghost_note=ghost_note, tick_frame=tick_frame, beyond_glow=beyond_glow,
                               ghost_glow=ghost_glow, all=VGroup(chart, extras))


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
            start = label(self.text("stream-start" if b.shape.has_position_table else "stream-start-token"), S.SMALL,
                          S.INK).move_to(lane).align_to(lane, LEFT).shift(RIGHT * GAP.s)
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
            kept = above(label(self.text("kept"), S.SMALL, S.RESIDUAL), lane, buff=GAP.s).align_to(start, LEFT)
            # training's way back down: one straight arrow along the lane, from the last layer to the first
            back = Arrow([x1, lane.get_bottom()[1] + GAP.xs, 0], [x0, lane.get_bottom()[1] + GAP.xs, 0], buff=GAP.none,
                         color=S.TOKEN, stroke_width=4, tip_length=0.2)
            short = below(label(self.text("short-path"), S.SMALL, S.TOKEN), formula, buff=GAP.s, aligned=S.END)
            place_in(VGroup(lane, name, start, blocks, arrows, plus, layers, formula, dot, path, kept, back, short),
                     S.CONTENT)
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
                FadeIn(glow(formula, color=S.RESIDUAL)))
            # "the word and its position ride all the way up": the start of the lane is still there
            say(self, beat, "erase", LaggedStart(*[Swell(p, color=S.RESIDUAL, scale_factor=1.6) for p in plus], lag_ratio=0.1),
                FadeIn(glow(lane, color=S.RESIDUAL, buff=GAP.xxs, opacity=0.1)))
            say(self, beat, "keep", FadeIn(glow(start, color=S.RESIDUAL)), FadeIn(kept, shift=DOWN * GAP.xs))
            say(self, beat, "path", GrowArrow(back))
            say(self, beat, "short", FadeIn(short, shift=UP * GAP.xs), FadeIn(glow(short, color=S.TOKEN, opacity=0.1)))
        with self.beat("handoff") as beat:
            first = blocks[0]
            ring = SurroundingRectangle(first, color=S.ATTENTION, buff=GAP.xs, stroke_width=4)
            nxt = label(self.text("next-attention"), S.BODY_SIZE, S.ATTENTION).next_to(ring, UP, buff=GAP.m)
            nxt.align_to(ring, LEFT)
            self.play(FadeOut(dot), FadeOut(layers), Create(ring), run_time=beat.span(0.3))
            say(self, beat, "layer-one", FadeIn(nxt, shift=DOWN * GAP.xs), first[0].animate.set_fill(S.ATTENTION, opacity=0.35))
            say(self, beat, "next", Swell(VGroup(ring, nxt), color=S.ATTENTION, scale_factor=1.08))


SCENES = [Lookup, Meaning, Positions, Residual]
