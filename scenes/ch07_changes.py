"""Chapter 07 — what changed since GPT-2: two models on one prompt, block beside block.

GPT-2's design stands on the side the reader starts from, the Llama-style model on the other
(data/facts/ch07.py `pair`: the second model's own bundle when the build attached one, else its
shape, tokenizer and ledger). Four changes in turn (the norm, positions, the MLP, key/value heads),
each as the two models' own parts drawn side by side with what it costs; then the two models'
parameters, FLOPs per token and cache per token to one scale; then what did not change. The meter
holds at the rendered model's one-pass total: nothing here adds arithmetic to its pass.
"""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, ORIGIN, RIGHT, UP, Arc, Arrow, Circle, Create, DashedVMobject, FadeIn, FadeOut, GrowFromEdge,
                   LaggedStart, Line, Rectangle, there_and_back, RoundedRectangle, Square, SurroundingRectangle, VGroup)

from onepass.data.facts.ch07 import pair_facts
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Swell, glow
from onepass.scenes.layout import GAP, fit_to, keep_inside
from onepass.scenes.text import fit_lines, fit_width, label
from onepass.scenes.widgets import token_row
from onepass.words import numbers as N

OLD, NEW = S.VALUE, S.LOGIT          # each model's colour, the same in every beat
HALF_W = S.CONTENT_W / 2 - GAP.xl    # one model's column
NAME_Y, SHAPE_Y, WEIGHTS_Y = 2.05, 1.62, 1.25
HEADLINE_Y, CARD_TOP, WHY_Y = 0.82, 0.5, S.FOOTER_Y


class ChangesScene(ChapterScene):
    chapter = "07"

    def setup(self):
        super().setup()
        self.f = pair_facts(self.bundle)
        # GPT-2's design where the reader starts (left, or right in an RTL film), the newer design after it
        self.xs = (-S.CONTENT_W / 4, S.CONTENT_W / 4) if not S.RTL else (S.CONTENT_W / 4, -S.CONTENT_W / 4)

    def meter_opening(self):
        return self.ledger.total, self.text("hold-step")    # one pass of this model; chapter 07 adds nothing

    def light(self, mob, colour, scale: float = 1.1) -> list:
        """The thing named, swollen under a filled glow: a step a viewer (and the still detector) sees."""
        return [Swell(mob, color=colour, scale_factor=scale),
                FadeIn(glow(mob, colour, opacity=0.25), rate_func=there_and_back, remover=True)]

    def model_name(self, side) -> str:
        return self.words.model_name(side.name)

    def header(self, side, colour, x: float) -> VGroup:
        """A model's name, its shape in one line and where its numbers come from."""
        s = side.shape
        name = fit_width(label(self.model_name(side), S.BODY_SIZE, colour), HALF_W).move_to([x, NAME_Y, 0])
        shape = fit_width(label(self.text("shape-line", layers=s.n_layer, d=N.fmt_int(s.n_embd), heads=s.n_head), S.SMALL,
                                S.MUTED), HALF_W).move_to([x, SHAPE_Y, 0])
        weights = fit_width(label(self.text(f"weights-{side.weights}"), S.SMALL,
                                  S.INK if side.weights == "real" else S.WARNING), HALF_W).move_to([x, WEIGHTS_Y, 0])
        out = VGroup(name, shape, weights)
        out.called, out.shape, out.weights = name, shape, weights
        return out

    def card(self, lines: list, colour, x: float) -> VGroup:
        """A panel of lines (text, size, colour, mono) in one model's column, its top at CARD_TOP."""
        texts = VGroup(*[fit_lines(t, size, c, HALF_W - GAP.l, mono=mono) for t, size, c, mono in lines])
        texts.arrange(DOWN, buff=GAP.xs)
        panel = RoundedRectangle(corner_radius=0.12, width=HALF_W, height=texts.height + 2 * GAP.s,
                                 stroke_color=colour, stroke_width=3, fill_color=S.PANEL, fill_opacity=1)
        group = VGroup(panel, texts.move_to(panel))
        group.move_to([x, CARD_TOP - group.height / 2, 0])
        group.panel, group.texts = panel, texts
        return group


class Changes(ChangesScene):
    """The two models, then each of the four changes as their two parts side by side."""
    show_title = True

    def build(self):
        f = self.f
        old, new = f["old"], f["new"]
        oc, nc = f["old_changes"], f["new_changes"]
        xo, xn = self.xs
        # the two models' own token strings, as the chips show them (the models' words, in no catalog)
        self.gpt2_texts = [S.show_token(t) for side in (old, new) for t in side.tokens]
        heads = self.header(old, OLD, xo), self.header(new, NEW, xn)
        rows = []
        for side, colour, x in ((old, OLD, xo), (new, NEW, xn)):
            chips = token_row(list(side.tokens), max_width=HALF_W)
            count = label(self.text("token-count", count=side.T, n=side.T), S.SMALL, colour)
            row = VGroup(chips, count).arrange(DOWN, buff=GAP.s)
            fit_to(row, width=HALF_W, height=1.9)
            row.move_to([x, 0.0, 0])
            rows.append(row)
        four = fit_lines(self.text("four-changes"), S.SMALL, S.INK, S.TEXT_W).move_to(UP * (S.FOOTER_Y + 0.4))
        with self.beat("two") as beat:
            # "two models read the same prompt"
            self.play(FadeIn(heads[0].called, shift=UP * GAP.xs), FadeIn(heads[1].called, shift=UP * GAP.xs),
                      run_time=beat.span(0.5))
            self.play(*self.light(heads[0].called, OLD), *self.light(heads[1].called, NEW), run_time=beat.span(0.5))
            beat.at("old")
            self.play(FadeIn(VGroup(heads[0].shape, heads[0].weights), shift=DOWN * GAP.xs), run_time=beat.span(0.4))
            self.play(*self.light(heads[0].shape, OLD), run_time=beat.span(0.6))
            beat.at("new")
            self.play(FadeIn(VGroup(heads[1].shape, heads[1].weights), shift=DOWN * GAP.xs), run_time=beat.span(0.4))
            self.play(*self.light(heads[1].shape, NEW), run_time=beat.span(0.6))
            beat.at("tokens")
            self.play(FadeIn(rows[0][0]), FadeIn(rows[1][0]), run_time=beat.span(0.4))
            self.play(FadeIn(rows[0][1], shift=UP * GAP.xs), FadeIn(rows[1][1], shift=UP * GAP.xs),
                      run_time=beat.span(0.3))
            self.play(*self.light(rows[0][1], OLD), *self.light(rows[1][1], NEW), run_time=beat.span(0.6))
            beat.at("four")
            self.play(FadeIn(four, shift=UP * GAP.xs), run_time=beat.span(0.4))
            self.play(*self.light(four, S.INK), run_time=beat.span(0.6))
        shown = [rows[0], rows[1], four]

        parts = {"norm": self.norm_parts(oc["norm"], nc["norm"]),
                 "positions": self.position_parts(oc["positions"], nc["positions"], old.shape.n_embd),
                 "mlp": self.mlp_parts(oc["mlp"], nc["mlp"]),
                 "attention": self.attention_parts(oc["attention"], nc["attention"])}
        for number, key in enumerate(("norm", "positions", "mlp", "attention"), start=1):
            title, cards, pictures, arrow, why = self.change(key, number, parts[key])
            costs = [c.texts[-1] for c in cards]
            with self.beat(key) as beat:
                # "first, the norm …"
                self.play(FadeOut(VGroup(*shown)), FadeIn(title, shift=DOWN * GAP.xs), run_time=beat.span(0.4))
                self.play(*self.light(title, S.INK), run_time=beat.span(0.5))
                beat.at("old")       # GPT-2's part
                self.play(FadeIn(cards[0], shift=UP * GAP.xs), FadeIn(pictures[0]), run_time=beat.span(0.4))
                self.play(*self.light(cards[0].texts[0], OLD), run_time=beat.span(0.5))
                beat.at("new")       # the part that replaced it
                self.play(Create(arrow), FadeIn(cards[1], shift=UP * GAP.xs), FadeIn(pictures[1]),
                          run_time=beat.span(0.4))
                self.play(*self.light(cards[1].texts[0], NEW), run_time=beat.span(0.5))
                beat.at("why")       # why it was adopted
                self.play(FadeIn(why, shift=UP * GAP.xs), run_time=beat.span(0.3))
                self.play(*self.light(why, S.KEY), run_time=beat.span(0.6))
                beat.at("because")   # how the change does it: each model's own mechanism lit
                how = ([c.texts[1] for c in cards] if key in ("norm", "mlp") else list(pictures) if key == "positions"
                       else [p.kv for p in pictures])
                self.play(*[a for m, col in zip(how, (OLD, NEW)) for a in self.light(m, col)], run_time=beat.span(0.5))
                self.play(*[a for m, col in zip(how, (OLD, NEW)) for a in self.light(m, col, 1.05)],
                          run_time=beat.span(0.45))
                beat.at("cost")      # its cost, each model's own
                self.play(*[a for c in costs for a in self.light(c, S.FLOPS)],
                          *[c.panel.animate.set_stroke(S.FLOPS) for c in cards], run_time=beat.span(0.4))
                self.play(*[a for p in pictures if len(p) for a in self.light(p, S.FLOPS, 1.05)],
                          *[c.panel.animate.set_stroke(col) for c, col in zip(cards, (OLD, NEW))],
                          run_time=beat.span(0.6))
            shown = [title, *cards, *pictures, arrow, why]

    # -- the four changes, as each side's card --------------------------------------------------------
    def norm_parts(self, o: dict, n: dict):
        return ([(self.text(f"norm-{o['kind']}"), S.BODY_SIZE, OLD, False),
                 (self.text(f"norm-formula-{o['kind']}"), S.SMALL, S.INK, True),
                 (self.text("params", count=o["params"], n=N.fmt_int(o["params"])), S.SMALL, S.INK, False),
                 (self.text("not-in-ledger"), S.SMALL, S.MUTED, False)],
                [(self.text(f"norm-{n['kind']}"), S.BODY_SIZE, NEW, False),
                 (self.text(f"norm-formula-{n['kind']}"), S.SMALL, S.INK, True),
                 (self.text("params", count=n["params"], n=N.fmt_int(n["params"])), S.SMALL, S.INK, False),
                 (self.text("not-in-ledger"), S.SMALL, S.MUTED, False)], None)

    def position_parts(self, o: dict, n: dict, d_old: int):
        def lines(p, colour):
            if p["kind"] == "learned":
                how = self.text("table-size", rows=N.fmt_int(p["rows"]), d=N.fmt_int(d_old))
            else:
                how = self.text("rope-how")
            return [(self.text(f"positions-{p['kind']}"), S.BODY_SIZE, colour, False),
                    (how, S.SMALL, S.INK, False),
                    (self.text("params", count=p["table_params"], n=N.fmt_int(p["table_params"])), S.SMALL, S.INK,
                     False),
                    (self.text("flops-per-token", n=N.fmt_int(p["flops_per_token"])), S.SMALL, S.FLOPS, True)]
        return lines(o, OLD), lines(n, NEW), "positions"

    def mlp_parts(self, o: dict, n: dict):
        def lines(p, colour):
            return [(self.text(f"mlp-{p['kind']}"), S.BODY_SIZE, colour, False),
                    (self.text(f"mlp-formula-{p['kind']}", d=N.fmt_int(p["d"]), dff=N.fmt_int(p["d_ff"])), S.SMALL, S.INK, True),
                    (self.text("mlp-width", count=p["matrices"], n=p["matrices"], ratio=N.fmt_fixed(p["ratio"], 2)),
                     S.SMALL, S.INK, False),
                    (self.text("flops-per-layer", n=N.fmt_int(p["flops_layer_token"])), S.SMALL, S.FLOPS, True)]
        return lines(o, OLD), lines(n, NEW), "matrices"

    def attention_parts(self, o: dict, n: dict):
        def lines(p, colour):
            return [(self.text("heads-line", q=p["heads"], kv=p["kv_heads"]), S.BODY_SIZE, colour, False),
                    (self.text("cache-line", n=N.fmt_int(p["kv_per_token"])), S.SMALL, S.FLOPS, True)]
        return lines(o, OLD), lines(n, NEW), "heads"

    def matrices(self, p: dict, colour, x: float, top: float, unit: float) -> VGroup:
        """The MLP's matrices to one scale (width ∝ its width d_ff, height ∝ d), side by side."""
        w, h = p["d_ff"] * unit, p["d"] * unit
        names = ("gate", "up", "down") if p["matrices"] == 3 else ("up", "down")
        out = VGroup(*[Rectangle(width=w, height=h, stroke_color=colour, stroke_width=2, fill_color=S.MLP,
                                 fill_opacity=0.55 if nm != "gate" else 0.85) for nm in names])
        out.arrange(RIGHT, buff=GAP.s).move_to([x, top - h / 2, 0])
        return out

    def placing(self, side, colour, x: float, top: float) -> VGroup:
        """How a model places its tokens: a position table (a stack of rows, the prompt's first T lit, the
        rest never read) or RoPE (the fastest pair of the last token's q and of the first token's k on a
        circle: that pair turns one radian per position, so they stand T - 1 radians apart)."""
        T = side.T
        if side.shape.has_position_table:
            shown = 16                       # a table's rows drawn as stripes: the prompt's lit, the rest dim
            rows = VGroup(*[Rectangle(width=2.6, height=0.075, stroke_width=0, fill_color=colour if r < T else S.PANEL,
                                      fill_opacity=0.9 if r < T else 1) for r in range(shown)])
            rows.arrange(DOWN, buff=0.015)
            frame = SurroundingRectangle(rows, buff=GAP.xxs, color=colour, stroke_width=2)
            out = VGroup(rows, frame)
        else:
            radius = 0.62
            ring = Circle(radius=radius, stroke_color=S.MUTED, stroke_width=2)
            k = Arrow(ORIGIN, radius * RIGHT, buff=0, color=S.KEY, stroke_width=5, max_tip_length_to_length_ratio=0.25)
            q = Arrow(ORIGIN, radius * (np.cos(T - 1) * RIGHT + np.sin(T - 1) * UP), buff=0, color=S.QUERY,
                      stroke_width=5, max_tip_length_to_length_ratio=0.25)
            angle = Arc(radius=0.25, start_angle=0, angle=float((T - 1) % (2 * np.pi)), color=colour, stroke_width=3)
            out = VGroup(ring, angle, k, q)
        out.move_to([x, top - out.height / 2, 0])
        return out

    def heads(self, p: dict, colour, x: float, top: float) -> VGroup:
        """Query heads in a row, key/value heads under them, each query head joined to the one it reads."""
        q = VGroup(*[Square(0.26, stroke_width=1.5, stroke_color=S.QUERY, fill_color=S.QUERY, fill_opacity=0.6)
                     for _ in range(p["heads"])]).arrange(RIGHT, buff=GAP.xs)
        kv = VGroup(*[Square(0.26, stroke_width=1.5, stroke_color=S.KEY, fill_color=S.KEY, fill_opacity=0.6)
                      for _ in range(p["kv_heads"])]).arrange(RIGHT, buff=GAP.xs)
        kv.next_to(q, DOWN, buff=0.7)
        links = VGroup(*[Line(q[h].get_bottom(), kv[h // p["group"]].get_top(), stroke_width=1.5, color=colour)
                         for h in range(p["heads"])])
        out = VGroup(q, kv, links)
        fit_width(out, HALF_W - GAP.l)
        out.move_to([x, top - out.height / 2, 0])
        out.q, out.kv, out.links = q, kv, links
        return out

    def change(self, key: str, number: int, parts):
        """A change's title, the two models' cards (and pictures), the arrow between them and its why."""
        f = self.f
        xo, xn = self.xs
        old_lines, new_lines, extra = parts
        title = fit_lines(self.text(f"title-{key}", n=number), S.BODY_SIZE, S.INK, S.TEXT_W).move_to(UP * HEADLINE_Y)
        cards = [self.card(old_lines, OLD, xo), self.card(new_lines, NEW, xn)]
        pictures = [VGroup(), VGroup()]
        if extra == "matrices":
            po, pn = f["old_changes"]["mlp"], f["new_changes"]["mlp"]
            unit = min((HALF_W - 3 * GAP.s) / (3 * pn["d_ff"]), (HALF_W - 2 * GAP.s) / (2 * po["d_ff"]),
                       0.55 / max(po["d"], pn["d"]))
            for i, (p, colour, x) in enumerate(((po, OLD, xo), (pn, NEW, xn))):
                top = cards[i].get_bottom()[1] - GAP.s
                pictures[i] = self.matrices(p, colour, x, top, unit)
        elif extra == "positions":
            for i, (side, colour, x) in enumerate(((f["old"], OLD, xo), (f["new"], NEW, xn))):
                pictures[i] = self.placing(side, colour, x, cards[i].get_bottom()[1] - GAP.s)
        elif extra == "heads":
            for i, (p, colour, x) in enumerate(((f["old_changes"]["attention"], OLD, xo),
                                                (f["new_changes"]["attention"], NEW, xn))):
                pictures[i] = self.heads(p, colour, x, cards[i].get_bottom()[1] - GAP.m)
        why = fit_lines(self.text(f"why-{key}"), S.SMALL, S.KEY, S.TEXT_W).move_to(UP * WHY_Y)
        arrow = Arrow(cards[0].get_edge_center(S.END), cards[1].get_edge_center(-S.END), buff=GAP.xs,
                      color=S.MUTED, stroke_width=4, max_tip_length_to_length_ratio=0.5)
        arrow.move_to([0, cards[0].get_y(), 0])
        body = VGroup(*cards, *pictures)
        room_bottom = why.get_top()[1] + GAP.xs
        drawn = [p for p in pictures if len(p)]
        if drawn and VGroup(*drawn).get_bottom()[1] < room_bottom:     # the pictures give up height first
            top = VGroup(*drawn).get_top()[1]
            factor = max(0.4, (top - room_bottom) / (top - VGroup(*drawn).get_bottom()[1]))
            for p in drawn:
                p.scale(factor, about_point=[p.get_x(), top, 0])
        if body.get_bottom()[1] < room_bottom:          # a longer language: the cards give up height
            scale = (CARD_TOP - room_bottom) / (CARD_TOP - body.get_bottom()[1])
            body.scale(scale, about_point=[0, CARD_TOP, 0])
            arrow.move_to([0, cards[0].get_y(), 0])
        why.next_to(body, DOWN, buff=GAP.l)             # the reason right under the two parts
        keep_inside(why, S.CONTENT)
        return title, cards, pictures, arrow, why


class Scale(ChangesScene):
    """Parameters, FLOPs per token and cache per token to one scale; what did not change; what comes next."""

    def bars(self) -> VGroup:
        f = self.f
        old, new = f["old"], f["new"]
        bar_w = S.CONTENT_W * 0.42
        rows = VGroup()
        for r in f["rows"]:
            name = fit_width(label(self.text(f"row-{r['key']}"), S.SMALL, S.INK), S.CONTENT_W * 0.3)
            pair = VGroup()
            for side, colour, frac, value in ((old, OLD, r["old_frac"], r["old"]), (new, NEW, r["new_frac"], r["new"])):
                bar = Rectangle(width=max(0.04, bar_w * frac), height=0.3, stroke_width=0, fill_color=colour,
                                fill_opacity=0.85)
                number = label(N.fmt_int(value), S.SMALL, colour, mono=True)
                line = VGroup(bar, number).arrange(S.END, buff=GAP.s)
                bar.align_to(line, S.START)
                pair.add(line)
            pair.arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
            row = VGroup(name, pair).arrange(S.END, buff=GAP.l)
            row.called, row.pair = name, pair
            rows.add(row)
        names_w = max(r.called.width for r in rows)
        rows.arrange(DOWN, buff=GAP.l)
        for r in rows:          # bars start on one line: the names' column is as wide as the widest
            r.pair.next_to(r.called, S.END, buff=GAP.l + names_w - r.called.width)
            r.pair.align_to(rows[0].pair, S.START) if r is not rows[0] else None
        key = VGroup(*[VGroup(Square(0.22, stroke_width=0, fill_color=c, fill_opacity=0.85),
                              label(self.model_name(s), S.SMALL, c)).arrange(S.END, buff=GAP.xs)
                       for s, c in ((old, OLD), (new, NEW))]).arrange(S.END, buff=GAP.xl)
        key.move_to(UP * HEADLINE_Y)
        fit_to(rows, width=S.CONTENT_W, height=3.4)
        rows.move_to([0, (key.get_bottom()[1] + S.CONTENT.bottom) / 2, 0])   # centred in the room under the key
        out = VGroup(key, rows)
        out.key, out.rows = key, rows
        return out

    def unchanged(self) -> VGroup:
        xo, xn = self.xs
        items = VGroup()
        for i, name in enumerate(("residual", "attention", "predict")):
            text = fit_width(label(self.text(f"same-{name}"), S.BODY_SIZE, S.INK), S.CONTENT_W * 0.5)
            ticks = VGroup(label("✓", S.BODY_SIZE, OLD), label("✓", S.BODY_SIZE, NEW))
            y = 0.9 - i * 0.9
            text.move_to([0, y, 0])
            ticks[0].move_to([xo * 1.45 if abs(xo * 1.45) < 6 else xo, y, 0])
            ticks[1].move_to([xn * 1.45 if abs(xn * 1.45) < 6 else xn, y, 0])
            items.add(VGroup(text, ticks))
        return items

    def predictions(self) -> VGroup:
        f = self.f
        old, new = f["old"], f["new"]
        if f["predictions"]:
            lines = [self.text("next-token", model=self.model_name(s), token=S.show_token(s.top[0]),
                               p=N.fmt_pct(s.top[1])) for s in (old, new)]
            colours = (OLD, NEW)
        else:
            missing = old if old.weights != "real" else new
            if old.weights != "real" and new.weights != "real":
                lines = [self.text("not-compared-both")]
            else:
                lines = [self.text(f"not-compared-{missing.weights}", model=self.model_name(missing))]
            colours = (S.WARNING,)
        out = VGroup(*[fit_lines(t, S.SMALL, c, S.TEXT_W, mono=False) for t, c in zip(lines, colours)])
        out.arrange(DOWN, buff=GAP.xs).move_to(UP * (S.FOOTER_Y + 0.45))
        keep_inside(out, S.CONTENT)
        return out

    def experts(self) -> VGroup:
        router = RoundedRectangle(corner_radius=0.1, width=2.2, height=0.6, stroke_color=S.ATTENTION,
                                  fill_color=S.PANEL, fill_opacity=1)
        router_words = fit_width(label(self.text("router"), S.SMALL, S.INK), 2.0).move_to(router)
        boxes = VGroup(*[RoundedRectangle(corner_radius=0.08, width=1.1, height=0.6, stroke_color=S.MLP,
                                          fill_color=S.MLP, fill_opacity=0.7 if i in (1, 4) else 0.15)
                         for i in range(6)]).arrange(RIGHT, buff=GAP.m)
        boxes.next_to(router, UP, buff=0.8)
        lines = VGroup(*[Line(router.get_top(), b.get_bottom(), stroke_width=3 if i in (1, 4) else 1,
                              color=S.MLP if i in (1, 4) else S.MUTED) for i, b in enumerate(boxes)])
        name = fit_lines(self.text("moe-name"), S.BODY_SIZE, S.MLP, S.TEXT_W)
        picture = VGroup(router, router_words, boxes, lines)
        name.next_to(picture, UP, buff=GAP.m)
        frame = DashedVMobject(SurroundingRectangle(VGroup(name, picture), buff=GAP.m, color=S.MUTED,
                                                    corner_radius=0.12), num_dashes=60)
        stamp = fit_lines(self.text("not-shown"), S.SMALL, S.WARNING, S.TEXT_W)
        group = VGroup(name, picture, frame)
        fit_to(group, width=S.CONTENT_W, height=3.6)
        group.move_to(UP * 0.3)
        stamp.next_to(frame, DOWN, buff=GAP.m)
        out = VGroup(group, stamp)
        out.called, out.router, out.boxes, out.lines, out.frame, out.stamp = name, VGroup(router, router_words), boxes, \
            lines, frame, stamp
        return out

    def build(self):
        bars = self.bars()
        rows = bars.rows
        with self.beat("scale") as beat:
            self.play(FadeIn(bars.key, shift=DOWN * GAP.xs), run_time=beat.span(0.4))
            self.play(*[FadeIn(r.called) for r in rows], run_time=beat.span(0.5))
            for i, mark in enumerate(("params", "flops", "kv")):
                beat.at(mark)
                row = rows[i]
                self.play(*[GrowFromEdge(line[0], S.START) for line in row.pair],
                          *[FadeIn(line[1]) for line in row.pair], *self.light(row.called, S.INK),
                          run_time=beat.span(0.5))
                self.play(*[a for line in row.pair for a in self.light(line[1], line[1].get_color())], run_time=beat.span(0.5))
        same = self.unchanged()
        said = self.predictions()
        with self.beat("same") as beat:
            self.play(FadeOut(bars), run_time=beat.span(0.3))
            self.play(FadeIn(same[0][0]), run_time=beat.span(0.4))
            for i, mark in enumerate(("residual", "attention", "predict")):
                beat.at(mark)
                self.play(FadeIn(same[i][1], shift=DOWN * GAP.xs), *([FadeIn(same[i][0])] if i else []),
                          run_time=beat.span(0.4))
                self.play(*self.light(same[i][0], S.RESIDUAL if i == 0 else S.ATTENTION if i == 1 else S.LOGIT),
                          run_time=beat.span(0.6))
            beat.at("predictions")
            self.play(FadeIn(said, shift=UP * GAP.xs), run_time=beat.span(0.4))
            self.play(*self.light(said, said[0].get_color()), *self.mark_pointers(), run_time=beat.span(0.6))
        moe = self.experts()
        with self.beat("next") as beat:
            self.play(FadeOut(same), FadeOut(said), run_time=beat.span(0.3))
            self.play(FadeIn(moe.called, shift=DOWN * GAP.xs), run_time=beat.span(0.5))
            beat.at("moe")
            self.play(FadeIn(moe.boxes), FadeIn(moe.router), run_time=beat.span(0.4))
            self.play(LaggedStart(*[Create(line) for line in moe.lines], lag_ratio=0.1), run_time=beat.span(0.6))
            beat.at("notshown")
            self.play(Create(moe.frame), FadeIn(moe.stamp, shift=UP * GAP.xs), run_time=beat.span(0.4))
            self.play(*self.light(moe.stamp, S.WARNING), run_time=beat.span(0.6))


SCENES = [Changes, Scale]
