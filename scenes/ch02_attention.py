"""Chapter 02 — one attention head of layer 1, with the bundle's real numbers.

Each beat steps with its line's markers (beat.at / beat.span): what a sentence names appears or
lights up while it is said. The head's weights are drawn twice, as a grid of numbers and as
lines between the tokens (widgets.AttentionArcs), from the same matrix.
"""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, FadeIn, FadeOut, FadeTransform, GrowArrow, GrowFromEdge, LaggedStart,
                   Rectangle, ReplacementTransform, Rotate, SurroundingRectangle, Transform, TransformFromCopy, VGroup,
                   Write)

from onepass.data.facts.ch02 import (
    agreement_facts, blend_facts, budget_facts, cost_facts, gqa_facts, head_facts, projection_facts, qknorm_facts,
    rope_facts, root_facts, softmax_row, softmax_row_index,
)
from onepass.scenes import style as S
from onepass.scenes.attention_pictures_ch02 import (
    BLEND_W, BUDGET_W, COST_SIDE, PROJECTION_W, QUERY_GAP, SOFTMAX_W, AgreementFan, BarRow, BlendStrips, BudgetBar,
    CostSquares, HeadGroups, NormColumn, ProjectionFan, RopeDials, SoftmaxRow,
)
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Swell, change, glow
from onepass.scenes.layout import GAP, above, below, columns, fit_to, keep_inside, place_in
from onepass.scenes.text import fit_lines, fit_width, label, line_height
from onepass.scenes.widgets import AttentionArcs, NumberGrid, TokenChip, token_window
from onepass.words import numbers as N


# a title above the grid: in the furniture row, clear of the meter, and low enough to pass under a long
# prompt's window note (heading, mark, note stack down the left); wide enough for a sentence at full size
TITLE_W = S.TEXT_W
TITLE_Y = S.CONTENT_TOP + 0.05
AFTER_NORM = S.PANEL        # the q/k norm's table: the cells after the norm, every token at one scale


class AttentionScene(ChapterScene):
    chapter = "02"

    def setup(self):
        super().setup()
        b = self.bundle
        f = head_facts(b)
        self.h = f["head_index"]
        self.rows = token_window(b.T)
        self.d, self.H = b.shape.n_embd, b.shape.n_head
        self.dh = b.shape.d_head

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
            # the question, over the tokens; then their looks at one another, from this head's own weights
            arcs = AttentionArcs(probs, labels=b.tokens, width=9.0, height=1.0)
            tag = label(self.text("head-tag", head=h + 1, n_head=self.H), S.BODY_SIZE, S.ATTENTION)
            strip = self.head_strip(S.TEXT_W - tag.width - GAP.l)
            rule = fit_lines(self.text("head-rule"), S.SMALL, S.MUTED, 11)
            top = VGroup(tag, strip).arrange(S.END, buff=GAP.l)
            group = VGroup(arcs, top, rule).arrange(DOWN, buff=GAP.l)
            place_in(group, S.CONTENT)
            self.play(LaggedStart(*[FadeIn(m, shift=UP * GAP.xs) for m in arcs.marks], lag_ratio=0.2),
                      run_time=beat.span(0.6))
            beat.at("look")          # "each token looks back at the tokens before it"
            self.play(LaggedStart(*[Create(p) for p in arcs.lines], lag_ratio=0.05), run_time=beat.span(0.7))
            beat.at("head")          # "one head of the first layer: head h of H"
            self.play(FadeIn(tag, shift=UP * GAP.s), LaggedStart(*[FadeIn(bx, shift=DOWN * GAP.s) for bx in strip],
                                                               lag_ratio=0.25), run_time=beat.span(0.6))
            self.play(Swell(strip[h], color=S.ATTENTION, scale_factor=1.5), run_time=beat.span(0.8))
            beat.at("chosen")        # "chosen because its last row is the least uniform"
            self.play(FadeIn(rule), *arcs.focus(b.T - 1), run_time=beat.span(0.4))
            self.play(Swell(arcs.marks[-1], color=S.TOKEN), run_time=beat.span(0.5))
        with self.beat("inputs") as beat:
            x = NumberGrid(b["ln1"][0], row_labels=b.tokens, max_cols=6, rows=rows,
                           shape_text=self.text("x-shape" if b.shape.norm == "layernorm" else "x-shape-rms", T=b.T, d=self.d))
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
            # one row, the last token's, through the three projections into its q, k and v of this head
            last = b.T - 1
            roles = [self.text("role-query"), self.text("role-key"), self.text("role-value")]
            pf = projection_facts(b)
            fan = ProjectionFan(pf, S.show_token(b.tokens[last]), roles, width=PROJECTION_W)
            x_note = label(self.text("row-of", token=S.show_token(b.tokens[last]), d=self.d), S.SMALL, S.MUTED,
                           mono=True)
            fit_width(x_note, fan.x.width + GAP.xl)
            below(x_note, fan.x, buff=GAP.s)
            w_text = fit_lines(self.text("qkv-note", dh=self.dh), S.SMALL, S.MUTED, TITLE_W).move_to(UP * TITLE_Y)
            picture = VGroup(fan, x_note)
            place_in(picture, S.CONTENT.with_(top=w_text.get_bottom()[1] - GAP.s))
            box = SurroundingRectangle(x.row_cells(last), color=S.TOKEN, buff=GAP.xxs)
            self.play(Create(box), Swell(x.row_label_mobs[rows.index(last)], color=S.TOKEN), run_time=beat.span(0.2))
            self.play(FadeOut(VGroup(x, box, *([note] if note else []))),
                      ReplacementTransform(x.row_cells(last).copy(), fan.x), FadeIn(fan.x_tag), FadeIn(x_note),
                      run_time=beat.span(0.3))
            self.play(LaggedStart(*[GrowArrow(a) for a in fan.arrows], lag_ratio=0.25),
                      LaggedStart(*[FadeIn(m) for m in fan.mats], lag_ratio=0.25), run_time=beat.span(0.3))
            self.play(LaggedStart(*[FadeIn(VGroup(o, l), shift=RIGHT * GAP.s) for o, l in zip(fan.outs, fan.letters)],
                                  lag_ratio=0.3), run_time=beat.span(0.4))
            for i, (mark, colour) in enumerate(zip(("query", "key", "value"), fan.COLOURS)):
                beat.at(mark)        # "the query says what this token is looking for", the key, the value
                # the strip's outline swells (its cells keep their numbers' colours)
                self.play(FadeIn(fan.roles[i], shift=UP * GAP.xs),
                          Swell(fan.outs[i][1], color=colour, scale_factor=1.06), Swell(fan.letters[i], color=colour),
                          run_time=beat.span(0.5))
            if b.shape.kv_heads < b.shape.n_head:      # grouped-query attention: the heads in their groups
                self.groups(beat, VGroup(fan, x_note))
                return
            beat.at("cost")          # "each is dh numbers long; for all heads it costs …"
            self.play(FadeIn(w_text), *[Swell(o[1], color=S.INK, scale_factor=1.04) for o in fan.outs],
                      run_time=beat.span(0.3))
            self.pay("L0.qkv", run_time=beat.span(0.6))

    def groups(self, beat, fan):
        """GQA, in the qkv beat: the query heads in groups over the key and value heads they share;
        what sharing saves (the k and v projections, the cache) and what it does not (the score grid)."""
        b = self.bundle
        g = gqa_facts(b, self.ledger)
        title = fit_lines(self.text("gqa-title", H=g["H"], KV=g["KV"]), S.BODY_SIZE, S.INK, TITLE_W)
        title.move_to(UP * TITLE_Y)
        picture = HeadGroups(g["kv_head"], self.h, (self.text("gqa-queries"), self.text("gqa-keys"),
                                                     self.text("gqa-values")), width=S.TEXT_W * 0.6)
        rows = VGroup(*[VGroup(label(self.text(name), S.SMALL, S.INK),
                               label(N.fmt_int(now), S.SMALL, S.FLOPS, mono=True),
                               label(self.text("gqa-without", n=N.fmt_int(full)), S.SMALL, S.MUTED))
                        .arrange(S.END, buff=GAP.m)
                        for name, now, full in (("gqa-qkv", g["qkv"], g["qkv_full"]),
                                                ("gqa-cache", g["cache"], g["cache_full"]),
                                                ("gqa-scores", g["scores"], g["scores"]))])
        rows.arrange(DOWN, buff=GAP.s, aligned_edge=S.START)
        group = VGroup(picture, rows).arrange(DOWN, buff=GAP.l)
        place_in(fit_to(group, S.CONTENT.with_(top=title.get_bottom()[1] - GAP.s)),
                 S.CONTENT.with_(top=title.get_bottom()[1] - GAP.s))
        beat.at("group")     # "this model has H query heads and only KV key and value heads"
        self.play(FadeOut(fan), FadeIn(title), LaggedStart(*[FadeIn(q, shift=DOWN * GAP.xs) for q in picture.queries],
                                                          lag_ratio=0.08), FadeIn(picture.names[0]),
                  run_time=beat.span(0.3))
        self.play(FadeIn(picture.keys), FadeIn(picture.values), FadeIn(picture.names[1:]),
                  LaggedStart(*[Create(ln) for ln in picture.links], lag_ratio=0.05), run_time=beat.span(0.4))
        mine = b.shape.kv_head_of(self.h)
        # "each group of … query heads shares one key and one value": the groups lit one after another
        kv = g["kv_head"]
        self.play(LaggedStart(*[Swell(VGroup(*[picture.queries[h] for h in range(len(kv)) if kv[h] == k],
                                             picture.keys[k], picture.values[k]), color=S.INK, scale_factor=1.06)
                                for k in range(max(kv) + 1)], lag_ratio=0.6), run_time=beat.span(0.6))
        self.play(Swell(picture.queries[self.h], color=S.QUERY, scale_factor=1.2),
                  Swell(picture.keys[mine], color=S.KEY, scale_factor=1.1), run_time=beat.span(0.6))
        beat.at("cost")      # "making them costs … FLOPs, not the … of a key and value per head"
        self.play(FadeIn(rows[0], shift=UP * GAP.xs), run_time=beat.span(0.3))
        self.pay("L0.qkv", run_time=beat.span(0.5))
        beat.at("saves")     # "the memory chapter six keeps for every token shrinks just as much"
        self.play(FadeIn(rows[1], shift=UP * GAP.xs), Swell(picture.keys, color=S.KEY, scale_factor=1.05),
                  Swell(picture.values, color=S.VALUE, scale_factor=1.05), run_time=beat.span(0.5))
        beat.at("grid")      # "the grid of scores does not shrink: every query head still scores its own"
        self.play(FadeIn(rows[2], shift=UP * GAP.xs), run_time=beat.span(0.3))
        # "every query head still scores its own": the query heads lit one after another
        self.play(LaggedStart(*[Swell(q, color=S.QUERY, scale_factor=1.15) for q in picture.queries], lag_ratio=0.4),
                  run_time=beat.span(0.8))


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

    def agreement(self, note):
        """The agree beat: the last token's query and every key as arrows, each key at its true angle
        to the query and its dot product beside it; the rules of agreement beside the picture."""
        b = self.bundle
        f = agreement_facts(b)
        with self.beat("agree") as beat:
            qk = qknorm_facts(b)
            if qk is not None:          # the q/k norm (Qwen3) acts first, before the turn
                self.qknorm(beat, qk, note)
                note = None             # on screen already
            rope = rope_facts(b)
            if rope is not None:        # RoPE: q and k turned by position before they meet
                self.rope(beat, rope, note)
            title = fit_lines(self.text("agree-title"), S.BODY_SIZE, S.INK, TITLE_W).move_to(UP * TITLE_Y)
            sub = fit_lines(self.text("fan-note"), S.SMALL, S.MUTED, TITLE_W)
            below(sub, title, buff=GAP.xs)
            left, right = columns(S.CONTENT.with_(top=sub.get_bottom()[1] - GAP.s), 2)
            fan = AgreementFan(f, b.tokens, self.rows, b.T - 1,
                               radius=min(2.0, (left.height - GAP.xl) / 2, (left.width - GAP.xl) / 1.9),
                               height=left.height)
            place_in(fan, left)
            rules = VGroup(*[fit_lines(self.text(name), S.SMALL, colour, right.width - GAP.l)
                             for name, colour in (("agree-same", S.KEY), ("agree-right", S.MUTED),
                                                  ("agree-apart", S.QUERY))]).arrange(DOWN, buff=GAP.s,
                                                                                      aligned_edge=S.START)
            formula = label(self.text("dot-formula"), S.BODY_SIZE, S.INK)
            fit_width(formula, right.width - GAP.l)
            panel = VGroup(formula, rules).arrange(DOWN, buff=GAP.l, aligned_edge=S.START)
            place_in(panel, right)
            keep_inside(fan, S.CONTENT.with_(top=sub.get_bottom()[1] - GAP.xs))
            self.play(FadeIn(title), FadeIn(sub), FadeIn(fan.axis), FadeIn(fan.origin),
                      *([FadeIn(note)] if note else []), run_time=beat.span(0.3))
            self.play(GrowArrow(fan.query), FadeIn(fan.query_tag), run_time=beat.span(0.5))
            beat.at("arrows")        # "the last token's query, with every key at its true angle to it"
            self.play(LaggedStart(*[GrowArrow(k) for k in fan.keys], lag_ratio=0.15),
                      LaggedStart(*[FadeIn(t[0]) for t in fan.tags], lag_ratio=0.15), run_time=beat.span(0.6))
            beat.at("dot")           # "their dot product … large, zero at a right angle, negative"
            self.play(FadeIn(formula, shift=S.START * GAP.s), LaggedStart(*[Create(d) for d in fan.drops],
                                                                         lag_ratio=0.1), run_time=beat.span(0.3))
            self.play(LaggedStart(*[FadeIn(t[1]) for t in fan.tags], lag_ratio=0.1), run_time=beat.span(0.25))
            for into, r in zip((0.3, 0.55, 0.8), rules):   # large, zero, negative: one rule at a time
                beat.at("dot", into=into)
                self.play(FadeIn(r, shift=UP * GAP.xs), run_time=beat.span(0.5))
            beat.at("best")          # "the key of … agrees best, with a score of …"
            self.play(Create(fan.angle[0]), FadeIn(fan.angle[1]),
                      Swell(fan.keys[fan.top], color=S.TOKEN, scale_factor=1.05),
                      Swell(fan.tags[fan.top], color=S.TOKEN), run_time=beat.span(0.6))
        return VGroup(fan, title, sub, panel)

    def qknorm(self, beat, f: dict, note):
        """The q/k norm, where it acts (before RoPE's turn): the last token's query in the featured head
        and its key, each as bars before and after (÷ its rms, × the gain), then why: every shown
        token's rms before the norm and after it, at one scale."""
        b = self.bundle
        title = fit_lines(self.text("qknorm-title"), S.BODY_SIZE, S.INK, TITLE_W).move_to(UP * TITLE_Y)
        gains = np.concatenate([f["q"]["gain"], f["k"]["gain"]])
        # synthetic weights' gains are all 1, never trained: "from 1.00 to 1.00" says so where it is shown
        gain_key = "qknorm-gain-synthetic" if b.synthetic else "qknorm-gain"
        gain = fit_lines(self.text(gain_key, low=N.fmt_fixed(float(gains.min()), 2),
                                   high=N.fmt_fixed(float(gains.max()), 2)), S.SMALL, S.MUTED, TITLE_W)
        room = S.CONTENT.with_(top=title.get_bottom()[1] - GAP.s)
        rms_text = lambda v: self.text("qknorm-rms", rms=N.fmt_fixed(float(v), 2))
        token = S.show_token(b.tokens[-1])
        tags = (self.text("qknorm-query", token=token, head=self.h + 1),
                self.text("qknorm-key", token=token, kv=f["kv_head"] + 1))
        cols = [NormColumn(f[x], tag, rms_text, self.text("qknorm-divide", rms=N.fmt_fixed(float(f[x]["rms"][-1]), 2)),
                           colour, width=r.width - GAP.xl)
                for x, tag, colour, r in zip("qk", tags, (S.QUERY, S.KEY), columns(room, 2))]
        pair = VGroup(*cols).arrange(S.END, buff=GAP.xl, aligned_edge=UP)     # the query where reading starts
        query_row, key_row = (c.before[0] for c in cols)
        cols[-1].shift(UP * (query_row.get_y() - key_row.get_y()))   # one baseline (a tag on two lines)
        body = VGroup(pair, gain).arrange(DOWN, buff=GAP.m)
        place_in(fit_to(body, room), room)
        q, k = cols
        # "each head's query and key are normed on their own": the two rows' places, named, still empty
        self.play(FadeIn(title), *([FadeIn(note)] if note else []), run_time=beat.span(0.3))
        self.play(LaggedStart(*[FadeIn(VGroup(c.tag, c.before[0]), shift=DOWN * GAP.xs) for c in cols],
                              lag_ratio=0.5), run_time=beat.span(0.5))
        beat.at("qk-row")        # "here is the last token's query in head …, before the norm"
        self.play(LaggedStart(*grow_from_base(q.before), lag_ratio=0.01), run_time=beat.span(0.5))
        self.play(FadeIn(q.rms, shift=UP * GAP.xs), run_time=beat.span(0.5))
        beat.at("qk-divide")     # "divided by that, its rms is 1; then the gain scales it"
        self.play(GrowArrow(q.arrow), FadeIn(q.step), FadeIn(q.after[0]), run_time=beat.span(0.25))
        self.play(TransformFromCopy(q.before[1], q.after[1]), run_time=beat.span(0.35))
        self.play(FadeIn(q.rms_after, shift=UP * GAP.xs), FadeIn(gain), run_time=beat.span(0.3))
        beat.at("qk-key")        # "the key it reads goes the same way"
        self.play(LaggedStart(*grow_from_base(k.before), lag_ratio=0.01), FadeIn(k.rms), run_time=beat.span(0.3))
        self.play(GrowArrow(k.arrow), FadeIn(k.step), FadeIn(k.after[0]),
                  TransformFromCopy(k.before[1], k.after[1]), run_time=beat.span(0.4))
        self.play(FadeIn(k.rms_after, shift=UP * GAP.xs), run_time=beat.span(0.3))
        # why: every shown token's query and key at one scale after the norm, whatever their size before
        why = fit_lines(self.text("qknorm-why"), S.SMALL, S.INK, TITLE_W)
        below(why, title, buff=GAP.xs)
        values = np.stack([f["q"]["rms"], f["q"]["rms_after"], f["k"]["rms"], f["k"]["rms_after"]])   # [4, T]
        names = [self.text(name, x=x) for x in "qk" for name in ("qknorm-before", "qknorm-after")]
        table = NumberGrid(values, row_labels=names, col_labels=[S.show_token(t) for t in b.tokens],
                           cols=self.rows, cell_w=1.1, cell_h=0.5, labels_are_tokens=False, label_color=S.INK,
                           label_w=3.5)     # words, not tokens: each at full size ("q: rms después")
        for r, colour in zip(range(4), (S.QUERY, S.QUERY, S.KEY, S.KEY)):
            table.row_label_mobs[r].set_color(colour)
        for r in (1, 3):         # after the norm: one quiet fill, no size to read from it (not the signed scale's top)
            table.row_cells(r).set_fill(AFTER_NORM, opacity=1)
            table.row_values(r).set_color(S.ink_on(AFTER_NORM))
        table.col_label_mobs.set_color(S.TOKEN)
        # the gain again, under the table, for "only the gain can change it"
        gain_again = gain.copy().next_to(table, DOWN, buff=GAP.m)
        space = S.CONTENT.with_(top=why.get_bottom()[1] - GAP.m)
        place_in(fit_to(VGroup(table, gain_again), space), space)
        beat.at("qk-why")        # "why?"
        self.play(FadeOut(VGroup(q, k, gain)), FadeIn(why), FadeIn(table.cell_group), FadeIn(table.row_label_mobs),
                  FadeIn(table.col_label_mobs), FadeIn(table.ellipses), run_time=beat.span(0.7))
        beat.at("qk-grow")       # "in training, queries and keys can grow": before the norm, each token its own size
        before = [VGroup(*[table.values_mobs[(r, c)] for r in (0, 2)]) for c in table.cols]
        self.play(LaggedStart(*[FadeIn(v, shift=UP * GAP.xs) for v in before], lag_ratio=0.6), run_time=beat.span(0.75))
        beat.at("qk-scale")      # "every token's query and key keep one scale, … only the gain can change it"
        after = [VGroup(*[table.values_mobs[(r, c)] for r in (1, 3)]) for c in table.cols]
        self.play(LaggedStart(*[FadeIn(v) for v in after], lag_ratio=0.6), run_time=beat.span(0.35))
        self.play(*[Swell(table.row_values(r), color=colour, scale_factor=1.08) for r, colour in ((1, S.QUERY), (3, S.KEY))],
                  run_time=beat.span(0.3))
        self.play(FadeIn(gain_again, shift=UP * GAP.xs), run_time=beat.span(0.4))
        beat.at("qk-rope")       # "before a query meets the keys, both are turned"
        self.play(FadeOut(VGroup(title, why, table, gain_again)), run_time=beat.span(0.1))

    def rope(self, beat, r: dict, note):
        """RoPE: the last token's query pairs before and after their turn (fast, middle, slow), the
        meter's rotation step, then why the score sees only distance: one pair of the query and its
        best key turned on together, the angle between them kept, and the head's score at positions
        moved on, the same number."""
        b = self.bundle
        half = self.dh // 2
        title = fit_lines(self.text("rope-title"), S.BODY_SIZE, S.INK, TITLE_W).move_to(UP * TITLE_Y)
        rule = fit_lines(self.text("rope-rule", half=half), S.SMALL, S.MUTED, TITLE_W)
        below(rule, title, buff=GAP.xs)
        if b.shape.qk_norm:      # a norm on each head's q and k (Qwen3), where it acts: before the turn
            qk = fit_lines(self.text("rope-qknorm"), S.SMALL, S.QUERY, TITLE_W)
            below(qk, rule, buff=GAP.xs)
            rule = VGroup(rule, qk)
        dials = RopeDials(r, lambda p: self.text("rope-speed", i=p["i"], j=p["i"] + half,
                                                 degrees=N.fmt_general(p["per_token"], 3)),
                          lambda p: self.text("rope-turn", pos=r["last"], degrees=N.fmt_int(int(round(p["turn"])))))
        legend = label(self.text("rope-legend"), S.SMALL, S.MUTED)
        m, n, shift = r["last"], r["key"], r["shift"]
        check = VGroup(*[label(self.text("rope-score", m=a, n=c, score=N.fmt_fixed(v, 2)), S.SMALL, colour, mono=True)
                         for a, c, v, colour in ((m, n, r["score"], S.INK), (m + shift, n + shift, r["score_moved"], S.INK))])
        check.add(label(self.text("rope-same", distance=m - n), S.SMALL, S.KEY))
        check.arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
        body = VGroup(dials, legend, check).arrange(DOWN, buff=GAP.m)
        room = S.CONTENT.with_(top=rule.get_bottom()[1] - GAP.s)
        place_in(fit_to(body, room), room)
        # the key pair of the best key, beside the fast pair's query after the turn (same dial)
        fast = r["pairs"][0]
        kpair = b["k"][0, r["kv_head"], n, [fast["dims"][0], fast["dims"][1]]].astype(np.float64)
        ring, _, after, _ = dials.dials[0]
        centre, radius = ring.get_center(), ring.width / 2
        kdir = kpair / max(float(np.linalg.norm(kpair)), 1e-9)
        key = Arrow(centre, centre + radius * 0.8 * np.array([kdir[0], kdir[1], 0.0]), buff=0, color=S.KEY,
                    stroke_width=6, tip_length=0.18, max_tip_length_to_length_ratio=0.3)
        self.play(FadeIn(title), FadeIn(rule), *([FadeIn(note)] if note else []), run_time=beat.span(0.3))
        # the empty dials while the first sentence names RoPE (a title alone was a still)
        self.play(LaggedStart(*[Create(d[0]) for d in dials.dials], lag_ratio=0.3), run_time=beat.span(0.7))
        beat.at("turn")          # "each head's numbers are taken in pairs, i with i + dh/2"
        self.play(LaggedStart(*[FadeIn(d[1]) for d in dials.dials], lag_ratio=0.2), FadeIn(legend),
                  run_time=beat.span(0.4))
        beat.at("pairs")         # "each pair is turned like a hand on a dial"
        self.play(*[TransformFromCopy(d[1], d[2]) for d in dials.dials], *[Create(d[3]) for d in dials.dials],
                  run_time=beat.span(0.5))
        beat.at("speeds")        # "each at its own speed: the fastest …, the slowest almost not at all"
        self.play(LaggedStart(*[FadeIn(t, shift=DOWN * GAP.xs) for t in dials.speeds], lag_ratio=0.3),
                  run_time=beat.span(0.5))
        beat.at("position")      # "the angle is the speed times the token's position"
        self.play(LaggedStart(*[FadeIn(t, shift=UP * GAP.xs) for t in dials.turns], lag_ratio=0.3),
                  run_time=beat.span(0.4))
        self.pay("L0.rope", run_time=beat.span(0.5))
        beat.at("relative")      # "why turn them? … their dot product depends only on how far apart they are"
        # "Why turn them?" is a sentence of its own: the turn-on plays out over the time up to the fan's
        # "arrows" (spans of that short sentence left the fan's query alone on screen for 15 s)
        rest = max(1.0, beat.mark("arrows")[1] - beat.elapsed)
        self.play(GrowArrow(key), FadeIn(check[0]), run_time=0.2 * rest)
        turn = np.radians(fast["per_token"] * shift) % (2 * np.pi)
        self.play(Rotate(VGroup(after, key), turn, about_point=centre), FadeIn(check[1]), run_time=0.35 * rest)
        self.play(FadeIn(check[2]), Swell(check[1], color=S.KEY), run_time=0.2 * rest)
        self.play(Swell(check[0], color=S.KEY), run_time=0.15 * rest)
        self.play(FadeOut(VGroup(title, rule, dials, legend, check, key)), run_time=0.06 * rest)

    def build(self):
        b, h = self.bundle, self.h
        scaled = b["scores_scaled"][0, h]     # [T, T]
        masked = b["scores_masked"][0, h]     # [T, T], −inf above the diagonal
        probs = b["probs"][0, h]              # [T, T]
        last = b.T - 1
        note = self.window_note()
        # the dot products before the scaling, from the bundle's own q and k (same colour scale as after)
        dots = b["q"][0, h].astype(np.float64) @ b["k"][0, b.shape.kv_head_of(h)].astype(np.float64).T
        vmax = float(np.abs(scaled).max())
        fan = self.agreement(note)
        with self.beat("scores") as beat:
            self.play(FadeOut(fan), run_time=beat.span(0.1))
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
                      FadeIn(grid.col_label_mobs), FadeIn(grid.ellipses), run_time=beat.span(0.4))
            self.play(LaggedStart(*[FadeIn(t) for t in grid.text_group], lag_ratio=0.03), run_time=beat.span(0.4))
            # read as every query (a row) against every key (a column): the last row is the fan's own scores
            self.play(Swell(grid.row_label_mobs, color=S.QUERY), Swell(grid.col_label_mobs, color=S.KEY),
                      run_time=beat.span(0.3))
            fan_row = SurroundingRectangle(grid.row_cells(last), color=S.QUERY, buff=GAP.xxs, stroke_width=4)
            self.play(Create(fan_row), Swell(grid.row_values(last), color=S.QUERY), run_time=beat.span(0.4))
            beat.at("scale")         # "each product is divided by the square root of dh, which is …"
            self.play(FadeTransform(dot_formula, formula), FadeIn(root, shift=S.START * GAP.s),
                      FadeOut(fan_row), run_time=beat.span(0.3))
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
            self.play(FadeTransform(VGroup(formula, root), mask_title), FadeOut(shape),
                      run_time=beat.span(0.3))
            if future:                # "no token may look ahead": the cells where a token would
                self.play(*[Swell(grid.cells[rc], color=S.WARNING, scale_factor=1.0) for rc in future],
                          run_time=beat.span(0.7))
            else:
                self.play(Swell(grid.cell_group, color=S.WARNING, scale_factor=1.0), run_time=beat.span(0.7))
            # training: each row learned to predict the token after it (the last row's is not known yet)
            answers = VGroup(*[
                label(S.clip_token(b.tokens[r + 1], 7) if r + 1 < b.T else self.text("next-unknown"), S.SMALL,
                      S.TOKEN, mono=True).next_to(grid.row_cells(r), RIGHT, buff=GAP.l) for r in self.rows])
            for a in answers:
                a.align_to(answers, LEFT)
            header = fit_lines(self.text("next-header"), S.SMALL, S.MUTED, 2.2).next_to(answers, UP, buff=GAP.m)
            header.align_to(answers, LEFT)
            side = VGroup(answers, header)
            keep_inside(side, S.FULL)
            beat.at("training")      # "training asks every position for its next token at once"
            self.play(FadeIn(header), LaggedStart(*[FadeIn(a, shift=LEFT * GAP.s) for a in answers], lag_ratio=0.15),
                      run_time=beat.span(0.4))
            beat.at("training", into=0.5)    # "… at once, in a single pass": every row with its answer together
            self.play(Swell(grid.row_label_mobs, color=S.TOKEN), Swell(answers, color=S.TOKEN),
                      run_time=beat.span(0.6))
            # the cell where a row would look at its own answer: one step right of the diagonal
            peeks = [(r, r + 1) for r in self.rows if (r, r + 1) in grid.cells]
            lights = VGroup(*[glow(grid.cells[rc], color=S.WARNING, buff=GAP.xxs) for rc in peeks])
            # each answer, in the very cell its row would look at (its score hidden under it)
            peek_tokens = VGroup(*[
                fit_width(label(S.clip_token(b.tokens[c], 5), S.SMALL, S.TOKEN, mono=True, compact=True),
                          grid.cells[(r, c)].width - GAP.xs).move_to(grid.cells[(r, c)]) for r, c in peeks])
            beat.at("answer")        # "a position that could see the token after it would read its answer"
            if peeks:
                self.play(LaggedStart(*[FadeIn(g) for g in lights], lag_ratio=0.15),
                          *[Swell(answers[self.rows.index(r)], color=S.WARNING) for r, _ in peeks],
                          run_time=beat.span(0.3))
                # the cell gives up its score's colour with its number (it is masked next): the token
                # reads on a dark cell under the red glow (on a bright cell it read at 3.9-4.4:1)
                self.play(*[grid.values_mobs[rc].animate.set_opacity(0) for rc in peeks],
                          *[grid.cells[rc].animate.set_fill(S.PANEL) for rc in peeks],
                          *[ReplacementTransform(answers[self.rows.index(r)].copy(), t)
                            for (r, _), t in zip(peeks, peek_tokens)], run_time=beat.span(0.5))
            else:
                self.play(Swell(answers, color=S.WARNING), run_time=beat.span(0.6))
            beat.at("minus")         # "every score above the diagonal becomes minus infinity"
            if future:
                self.play(*[Transform(grid.cells[rc], masked_grid.cells[rc]) for rc in future],
                          *self.swap_numbers(grid, masked_grid, future), FadeOut(lights), FadeOut(side),
                          FadeOut(peek_tokens), run_time=beat.span(0.7))
            else:   # one token: nothing lies above the diagonal, the grid stays as it is
                self.play(Swell(grid.cell_group, color=S.WARNING), FadeOut(side), run_time=beat.span(0.7))
        with self.beat("softmax") as beat:
            pgrid = self.grid(probs, percent=True)
            sm_title = label(self.text("softmax-title"), S.BODY_SIZE, S.ATTENTION)
            sm_formula = label(self.text("softmax-formula"), S.BODY_SIZE, S.INK)
            sm_head = VGroup(sm_title, sm_formula).arrange(S.END, buff=GAP.xl).move_to(UP * TITLE_Y)
            if sm_head.width > S.TEXT_W:      # a longer language: the formula under the title
                sm_head.arrange(DOWN, buff=GAP.xs).move_to(UP * TITLE_Y)
                keep_inside(sm_head, S.FULL.with_(top=S.CONTENT_TOP + 0.3))
            # one row through the softmax, step by step: its scores, eˢ (0 where masked), each share of the total
            r = softmax_row_index(self.rows)
            sf = softmax_row(b, r)
            row_name = fit_lines(self.text("softmax-row", token=S.show_token(b.tokens[r])), S.SMALL, S.MUTED,
                                 TITLE_W)
            below(row_name, sm_head, buff=GAP.s)
            steps = SoftmaxRow(sf, b.tokens, self.rows, width=SOFTMAX_W, height=1.9,
                               total_text=self.text("exp-total", total=N.fmt_general(sf["total"], 3)))
            steps.total.next_to(steps.bars, S.END, buff=GAP.xl).set_y(steps.bars.get_y())
            whole = VGroup(steps, steps.total)
            place_in(whole, S.CONTENT.with_(top=row_name.get_bottom()[1] - GAP.l))
            row_box = SurroundingRectangle(grid.row_cells(r), color=S.ATTENTION, buff=GAP.xxs)
            self.play(FadeTransform(mask_title, sm_title), Create(row_box), run_time=beat.span(0.25))
            old = VGroup(grid.cell_group, grid.row_label_mobs, grid.col_label_mobs, grid.ellipses,
                         *grid.values_mobs.values(), row_box)
            row_values = VGroup(*[grid.values_mobs[(r, c)].copy() for c in self.rows])
            self.play(FadeOut(old), FadeIn(row_name), ReplacementTransform(row_values, steps.scores),
                      FadeIn(steps.tokens), FadeIn(steps.baseline), run_time=beat.span(0.5))
            beat.at("exp")           # "raise e to the power of each score …": eˢ, and e^−∞ is 0
            self.play(FadeIn(sm_formula, shift=S.START * GAP.s),
                      LaggedStart(*[GrowFromEdge(bar, DOWN) for bar in steps.bars], lag_ratio=0.1),
                      LaggedStart(*[FadeIn(e, shift=UP * GAP.xs) for e in steps.exps], lag_ratio=0.1),
                      run_time=beat.span(0.4))
            if steps.masked:         # the masked cells: minus infinity in, exactly zero out
                self.play(*[Swell(VGroup(steps.scores[i], steps.exps[i]), color=S.WARNING) for i in steps.masked],
                          run_time=beat.span(0.4))
            beat.at("exp", into=0.55)        # "… and divides by the row's total"
            self.play(FadeIn(steps.total, shift=S.START * GAP.s), Swell(sm_formula, color=S.ATTENTION),
                      run_time=beat.span(0.3))
            self.play(*[FadeOut(e) for e in steps.exps], *[FadeIn(p) for p in steps.pcts],
                      change(steps.total, label("Σ = " + N.fmt_pct(1.0, 0), S.SMALL, S.ATTENTION,
                                                   mono=True).move_to(steps.total)),
                      run_time=beat.span(0.5))
            steps.remove(steps.exps)          # gone from the frame: a later fade of the picture leaves them out
            # each row's sum over all T columns (a window may hide some of them)
            sums = VGroup(*[
                label(f"Σ = {N.fmt_fixed(probs[r_].astype(np.float64).sum(), 2)}", S.SMALL, S.ATTENTION, mono=True)
                .next_to(pgrid.row_cells(r_), RIGHT, buff=GAP.m) for r_ in self.rows])
            sums_header = VGroup()
            if len(self.rows) < b.T:
                header = label(self.text("sums-header", T=b.T), S.SMALL, S.MUTED)
                sums_header.add(above(header, sums[0], buff=GAP.l))   # over the column labels
            side = VGroup(sums, sums_header)
            # the grid and its sums, centred together
            shift = S.CONTENT.x - VGroup(pgrid.cell_group, pgrid.row_label_mobs, side).get_center()[0]
            for m in (pgrid, side):
                m.shift(RIGHT * shift)
            beat.at("sums")          # "so each row sums to exactly one": this row's shares, all of its unit
            self.play(Swell(steps.pcts, color=S.ATTENTION, scale_factor=1.0), Swell(steps.total, color=S.ATTENTION),
                      run_time=beat.span(0.35))
            beat.at("sums", into=0.4)        # "… and every masked cell gets exactly zero"
            if steps.masked:
                self.play(*[Swell(VGroup(steps.scores[i], steps.pcts[i]), color=S.WARNING) for i in steps.masked],
                          run_time=beat.span(0.3))
            beat.at("sums", into=0.7)        # every row, now weights: the following beats draw on this grid
            grid = pgrid
            self.play(FadeOut(VGroup(steps, steps.total, row_name)),
                      FadeIn(VGroup(grid.cell_group, grid.row_label_mobs, grid.col_label_mobs, grid.ellipses,
                                    *grid.values_mobs.values())), run_time=beat.span(0.3))
            self.play(LaggedStart(*[FadeIn(s_, shift=LEFT * GAP.s) for s_ in sums], lag_ratio=0.15),
                      FadeIn(sums_header), run_time=beat.span(0.5))
            zeros = [grid.values_mobs[(r_, c)] for (r_, c) in grid.values_mobs if c > r_]
            if zeros:
                self.play(*[Swell(z, color=S.WARNING) for z in zeros], run_time=beat.span(0.9))
        with self.beat("arcs") as beat:
            # the lines leave each row of the grid (its queries) for a column of the keys beside it
            cells = grid.cell_group
            # the lane as wide as two cells: T*(T+1)/2 lines (15 for 5 tokens) were squeezed into 1.4 (70 px at 480p)
            arcs = AttentionArcs(probs, labels=b.tokens, layout="columns", width=2 * self.cell_w + GAP.s, clip=7,
                                 anchors=[VGroup(*[grid.cells[(r, c)] for c in self.rows]) for r in self.rows])
            whole = VGroup(grid.row_label_mobs, cells, arcs)
            shift = S.CONTENT.x - whole.get_center()[0]
            arcs.shift(RIGHT * shift)
            # the grid as it now stands (its numbers are the softmax grid's, swapped in)
            shown = VGroup(cells, grid.row_label_mobs, grid.col_label_mobs, grid.ellipses, *grid.values_mobs.values())
            arcs_title = fit_lines(self.text("arcs-title"), S.BODY_SIZE, S.ATTENTION, TITLE_W).move_to(UP * TITLE_Y)
            self.play(FadeOut(side), shown.animate.shift(RIGHT * shift), FadeTransform(sm_head, arcs_title),
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
            self.play(FadeTransform(arcs_title, back), run_time=beat.span(0.3))
            # the cells no line comes from: every one above the diagonal
            ahead = [grid.cells[(r, c)] for (r, c) in grid.cells if c > r]
            if ahead:
                self.play(*[Swell(c, color=S.WARNING, scale_factor=1.0) for c in ahead], run_time=beat.span(0.5))
            selfs = [arcs.arcs[(r, r)] for r in self.rows if (r, r) in arcs.arcs]
            self.play(*[Swell(p, color=S.TOKEN, scale_factor=1.0) for p in selfs],
                      *[Swell(m, color=S.TOKEN) for m in arcs.key_marks], run_time=beat.span(0.8))
        with self.beat("last_row") as beat:
            # the last row becomes a budget: one unit of attention, cut into the row's weights
            box = SurroundingRectangle(grid.row_cells(last), color=S.TOKEN, buff=GAP.xxs)
            self.play(Create(box), *arcs.focus(last), run_time=beat.span(0.3))
            budget = BudgetBar(budget_facts(b), b.tokens, width=BUDGET_W)
            budget_title = fit_lines(self.text("budget-title", token=S.show_token(b.tokens[last])), S.BODY_SIZE,
                                     S.ATTENTION, TITLE_W).move_to(UP * TITLE_Y)
            place_in(budget, S.CONTENT)
            row_copy = VGroup(*[grid.cells[(last, c)].copy() for c in self.rows])
            others = [budget.pieces[j] for j in range(b.T) if j not in self.rows]
            picture = VGroup(shown, arcs, back, box)
            self.play(FadeOut(picture), FadeTransform(back.copy(), budget_title),
                      ReplacementTransform(row_copy, VGroup(*[budget.pieces[j] for j in self.rows])),
                      *[FadeIn(p) for p in others], FadeIn(budget.frame), run_time=beat.span(0.6))
            beat.at("spend")         # "the last row spends it like this: … gives … to …"
            top = budget_facts(b)["top_index"]
            self.play(LaggedStart(*[FadeIn(t, shift=UP * GAP.xs) for t in budget.tag_group], lag_ratio=0.15),
                      run_time=beat.span(0.4))
            self.play(Swell(budget.pieces[top], color=S.TOKEN, scale_factor=1.08),
                      *([Swell(budget.tags[top], color=S.TOKEN)] if top in budget.tags else []),
                      run_time=beat.span(0.6))
            self.point_at_mark(beat, "chance", 0.6)   # random weights: "this one is chance"
        with self.beat("root") as beat:
            self.root_bars(beat, VGroup(budget, budget_title))

    def root_bars(self, beat, before):
        """The root beat: the last row's softmax with the division by √d_head (the head's real weights)
        beside the same row's softmax without it, from the same scores."""
        b = self.bundle
        f = root_facts(b)
        title = fit_lines(self.text("root-title", dh=f["dh"]), S.BODY_SIZE, S.INK, TITLE_W).move_to(UP * TITLE_Y)
        room = S.CONTENT.with_(top=title.get_bottom()[1] - GAP.s)
        if len(self.rows) <= 6:      # side by side, tall bars
            halves = columns(room, 2)[::-1 if S.RTL else 1]     # the real weights where the reader starts
            tall = halves[0].height * 0.45
        else:                        # a long prompt's window: one row above the other, each as wide as a line
            middle = room.y
            halves = [room.with_(bottom=middle), room.with_(top=middle)]
            tall = max(halves[0].height - 4 * line_height(S.SMALL) - 3 * GAP.m, GAP.l)
        panels = []
        for half, weights, scores, name, colour in (
                (halves[0], f["divided"], f["scaled"], self.text("with-root", dh=f["dh"]), S.ATTENTION),
                (halves[1], f["undivided"], f["raw"], self.text("without-root"), S.WARNING)):
            bars = BarRow(weights, b.tokens, self.rows, width=half.width - GAP.xl, height=tall,
                          color=colour, numbers=scores)
            head = fit_lines(name, S.SMALL, colour, half.width - GAP.l)
            panel = VGroup(head, bars).arrange(DOWN, buff=GAP.m)
            place_in(panel, half)
            panels.append((panel, head, bars))
        (left, l_head, l_bars), (right, r_head, r_bars) = panels
        if len(self.rows) <= 6:      # side by side: one baseline, one line of titles
            l_bars.shift(UP * (r_bars.baseline.get_y() - l_bars.baseline.get_y()))
            l_head.set_y(r_head.get_y())
        self.play(FadeOut(before), FadeIn(title), FadeIn(l_head), FadeIn(l_bars.baseline), FadeIn(l_bars.tokens),
                  run_time=beat.span(0.3))
        self.play(LaggedStart(*[GrowFromEdge(bar, DOWN) for bar in l_bars.bars], lag_ratio=0.1),
                  FadeIn(l_bars.pcts), run_time=beat.span(0.5))
        beat.at("grow")              # "a dot product adds one product per number: wider, bigger scores"
        self.play(FadeIn(r_head), FadeIn(r_bars.baseline), FadeIn(r_bars.tokens),
                  LaggedStart(*[FadeIn(n, shift=UP * GAP.xs) for n in r_bars.numbers], lag_ratio=0.1),
                  LaggedStart(*[FadeIn(n, shift=UP * GAP.xs) for n in l_bars.numbers], lag_ratio=0.1),
                  run_time=beat.span(0.3))
        beat.at("grow", into=0.4)    # "… the wider the vectors, the bigger the scores": the undivided ones
        self.play(Swell(r_bars.numbers, color=S.WARNING, scale_factor=1.1), run_time=beat.span(0.3))
        beat.at("grow", into=0.7)    # "… the closer the softmax comes to handing one token everything"
        self.play(Swell(l_bars.numbers, color=S.ATTENTION, scale_factor=1.1), run_time=beat.span(0.5))
        beat.at("without")           # "without the division, this row would give … to …"
        top = f["undivided_top"]
        i = self.rows.index(top) if top in self.rows else len(self.rows) - 1
        self.play(LaggedStart(*[GrowFromEdge(bar, DOWN) for bar in r_bars.bars], lag_ratio=0.1),
                  FadeIn(r_bars.pcts), run_time=beat.span(0.5))
        self.play(Swell(r_bars.bars[i], color=S.WARNING, scale_factor=1.1), Swell(r_bars.pcts[i], color=S.WARNING),
                  run_time=beat.span(0.5))
        beat.at("with")              # "with it, the most any token gets is …"
        j = self.rows.index(f["divided_top"]) if f["divided_top"] in self.rows else len(self.rows) - 1
        self.play(FadeIn(glow(left, color=S.ATTENTION, buff=GAP.s, opacity=0.12)),
                  Swell(l_bars.pcts[j], color=S.ATTENTION), run_time=beat.span(0.6))


def grow_from_base(bars) -> list:
    """Each bar of signed_bars' `bars` growing out of its baseline: up for a positive number, down for
    a negative one (grown from its own bottom edge, a negative bar came down from its far end)."""
    base_y = bars[0].get_center()[1]
    return [GrowFromEdge(bar, DOWN if bar.get_center()[1] >= base_y else UP) for bar in bars[1]]


class Mixing(AttentionScene):
    """Weighted sum of values, the output projection, the residual add, the receipt."""
    meter_start = "L0.mix"

    def build(self):
        b, h, d, dh = self.bundle, self.h, self.d, self.dh
        last = b.T - 1
        weights = b["probs"][0, h, last]                     # [T]
        with self.beat("mix") as beat:
            f = blend_facts(b)
            title = fit_lines(self.text("blend-title"), S.BODY_SIZE, S.INK, TITLE_W).move_to(UP * TITLE_Y)
            pitch = 0.46 if len(self.rows) <= 6 else 0.4
            blend = BlendStrips(f, b.tokens, self.rows, width=BLEND_W, pitch=pitch)
            # the last token, its lines to every token whose value it mixes (the names stand for the keys)
            query = TokenChip(S.clip_token(b.tokens[last], 7), size=S.SMALL, max_text_width=1.6)
            query.next_to(blend.names, LEFT, buff=QUERY_GAP).set_y(blend.values.get_y())
            arcs = AttentionArcs(b["probs"][0, h], layout="columns", positions=self.rows,
                                 anchors=[query if r == last else None for r in self.rows],
                                 key_anchors=list(blend.names))
            blend.add(query, arcs)
            out_title = label(self.text("output-of", token=S.clip_token(b.tokens[last], 7)), S.SMALL, S.VALUE)
            out_title.next_to(blend.output, LEFT, buff=GAP.m)
            blend.sigma.next_to(out_title, LEFT, buff=GAP.s)
            strip_note = fit_lines(self.text("blend-note", dh=dh), S.SMALL, S.MUTED, S.TEXT_W)
            whole = VGroup(blend, out_title)
            below(strip_note, whole, buff=GAP.m)
            picture = VGroup(whole, strip_note)
            place_in(picture, S.CONTENT.with_(top=title.get_bottom()[1] - GAP.m))
            note = self.window_note()
            self.play(FadeIn(title), FadeIn(query), LaggedStart(*[FadeIn(n, shift=RIGHT * GAP.s) for n in blend.names],
                                                                lag_ratio=0.15), *([FadeIn(note)] if note else []),
                      run_time=beat.span(0.3))
            self.play(LaggedStart(*[Create(p) for p in arcs.lines], lag_ratio=0.15), run_time=beat.span(0.5))
            beat.at("values")        # "every token it can see offers its value vector"
            self.play(LaggedStart(*[FadeIn(v, shift=LEFT * GAP.s) for v in blend.values], lag_ratio=0.15),
                      FadeIn(strip_note), run_time=beat.span(0.6))
            beat.at("scale")         # "each value is scaled by that token's weight"
            self.play(*[Transform(v, sv) for v, sv in zip(blend.values, blend.scaled)], run_time=beat.span(0.6))
            beat.at("sum")           # "and the scaled values are added up into the head's output"
            falling = VGroup(*[v.copy() for v in blend.values])
            self.play(Create(blend.rule), FadeIn(blend.sigma), FadeIn(out_title),
                      ReplacementTransform(falling, blend.output), run_time=beat.span(0.5))
            self.pay("L0.mix", run_time=beat.span(0.5))
            beat.at("carries")       # "so … now holds a piece of every token it attended to"
            top = f["top_index"]
            i = self.rows.index(top) if top in self.rows else len(self.rows) - 1
            self.play(FadeIn(glow(VGroup(blend.names[i], blend.values[i]), color=S.TOKEN, buff=GAP.xs,
                                  opacity=0.12)),
                      Swell(blend.output, color=S.VALUE, scale_factor=1.05), run_time=beat.span(0.4))
            beat.at("carries", into=0.5)     # "… the largest from …"
            self.play(Swell(blend.names[i], color=S.TOKEN), run_time=beat.span(0.6))
            row = VGroup(*(self._picture() or []))
        with self.beat("out") as beat:
            self.play(FadeOut(row), run_time=beat.span(0.1))
            # the heads side by side: H boxes of dh numbers, the one we followed lit
            total = label(f"= {self.H * dh}", S.BODY_SIZE, S.ATTENTION)   # d, where heads × d_head is d
            # as wide as a line allows: GPT-2 XL's 25 heads still read "64" in every box
            box_w = min(0.62, (S.TEXT_W - total.width - GAP.m) / self.H)
            heads = VGroup(*[Rectangle(width=box_w, height=0.5, stroke_width=2, stroke_color=S.MUTED,
                                       fill_color=S.ATTENTION if i == h else S.PANEL, fill_opacity=1)
                             for i in range(self.H)]).arrange(RIGHT, buff=GAP.none)
            nums = VGroup(*[label(str(dh), S.SMALL, S.ink_on(box.get_fill_color()), mono=True).move_to(box)
                            for box in heads])
            for n in nums:
                fit_width(n, box_w - 0.06)
            total.next_to(heads, RIGHT, buff=GAP.m)
            strip = VGroup(heads, nums, total)
            proj = label(f"× W_O ({self.H * dh} × {d})", S.BODY_SIZE, S.ATTENTION)
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
            beat.at("residual")      # "the result is added to the residual stream rather than written over it"
            self.play(FadeIn(lines[0], shift=DOWN * GAP.s), run_time=beat.span(0.3))
            beat.at("residual", into=0.45)   # "… so the token keeps everything it had and gains what it gathered"
            self.play(FadeIn(lines[2], shift=UP * GAP.s), FadeIn(shape), run_time=beat.span(0.4))
            self.play(Swell(lines[2], color=S.RESIDUAL, scale_factor=1.05), run_time=beat.span(0.5))
        with self.beat("receipt") as beat:
            self.play(FadeOut(group), run_time=beat.span(0.1))
            receipt, squares = self.receipt()
            total, note = receipt[0], receipt[2]
            self.play(FadeIn(total, shift=UP * GAP.xs), run_time=beat.span(0.3))
            self.play(LaggedStart(*[GrowFromEdge(sq, DOWN) for sq in squares.squares], lag_ratio=0.2),
                      LaggedStart(*[FadeIn(VGroup(n, f)) for n, f in zip(squares.names, squares.flops)],
                                  lag_ratio=0.2), FadeIn(note), run_time=beat.span(0.6))
            beat.at("cheap")         # "nearly all of it went into the projections"
            self.play(Swell(squares.squares[0], color=S.FLOPS, scale_factor=1.03),
                      Swell(squares.squares[3], color=S.FLOPS, scale_factor=1.03),
                      Swell(squares.flops[0], color=S.FLOPS), Swell(squares.flops[3], color=S.FLOPS),
                      run_time=beat.span(0.4))
            beat.at("cheap", into=0.55)      # "… at T tokens, the grid of scores is cheap"
            cheap = VGroup(squares.squares[1], squares.names[1], squares.flops[1])
            self.play(FadeIn(glow(cheap, color=S.KEY, buff=GAP.s, opacity=0.12)),
                      Swell(squares.squares[1], color=S.KEY, scale_factor=3.0), run_time=beat.span(0.6))

    def receipt(self) -> tuple[VGroup, CostSquares]:
        """One attention layer's bill from the ledger, as squares whose areas are the FLOPs of its steps,
        under the layer's total."""
        f = cost_facts(self.ledger)
        names = (self.text("receipt-qkv"), self.text("receipt-scores"), self.text("receipt-mix"),
                 self.text("receipt-out"))
        pitch = S.TEXT_W / 4
        squares = CostSquares(f, names, side=COST_SIDE, pitch=pitch, colours=(S.ATTENTION, S.KEY, S.VALUE, S.ATTENTION))
        total = VGroup(label(self.text("receipt-total"), S.BODY_SIZE, S.INK, weight="BOLD"),
                       label(N.fmt_int(f["total"]), S.BODY_SIZE, S.FLOPS, mono=True, weight="BOLD")
                       ).arrange(S.END, buff=GAP.l)
        note = fit_lines(self.text("receipt-note" if self.bundle.shape.norm == "layernorm" else "receipt-note-rms"),
                         S.SMALL, S.MUTED, S.TEXT_W)
        receipt = VGroup(total, squares, note).arrange(DOWN, buff=GAP.l)
        place_in(receipt, S.CONTENT)
        return receipt, squares


SCENES = [Projections, Scores, Mixing]
