"""Chapter 06 — the loop, the KV cache and the n² bill.

The meter starts at the one-pass total and adds a full forward pass (no cache) for
every generated step, as the extraction ran them; the cached alternative is shown
beside it, both from data/flops.py.
"""
from __future__ import annotations

from manim import (DOWN, LEFT, RIGHT, UP, Brace, Create, FadeIn, FadeOut, LaggedStart, Line, Rectangle,
                   TransformFromCopy, VGroup)

from data.facts.ch06 import loop_facts
from data.flops import GPT2_SMALL, human
from scenes import style as S
from scenes.base import ChapterScene
from scenes.widgets import TokenChip, below, fit_width, keep_inside, label, place_in, place_row

CACHE_COLUMNS = 12     # at most this many token columns of the KV cache on screen
STRIP_PROMPT = 5       # prompt tokens shown before the generated ones in the context strip


class LoopChapter(ChapterScene):
    chapter = "06"

    def setup(self):
        super().setup()
        self.f = loop_facts(self.bundle)

    def meter_opening(self):
        """After every pass of the loop (the scenes after Loop)."""
        f = loop_facts(self.bundle)
        return f["loop_total"], f"{len(f['steps'])} full passes, no cache"

    def pay_to(self, target: int, step: str, run_time: float):
        self.play(*self.meter.pay(target, step, run_time=run_time), run_time=run_time)


class Loop(LoopChapter):
    """Append the pick, run the whole pass again: generated steps from the bundle."""
    show_title = True

    def meter_opening(self):
        return self.ledger.total, f"one pass over {self.bundle.T} tokens"

    def strip(self) -> tuple[VGroup, list]:
        """The context: the prompt's last tokens, then one slot per generated token."""
        b, steps = self.bundle, self.f["steps"]
        shown = b.tokens[-STRIP_PROMPT:]
        parts = VGroup()
        if b.T > len(shown):
            parts.add(label(f"… {b.T - len(shown)} earlier tokens", S.SMALL, S.MUTED))
        prompt_chips = [TokenChip(t, size=S.BODY_SIZE) for t in shown]
        gen_chips = [TokenChip(s["text"], color=S.LOGIT, size=S.BODY_SIZE) for s in steps]
        parts.add(*prompt_chips, *gen_chips)
        parts.arrange(RIGHT, buff=0.14)
        fit_width(parts, S.FULL_W).move_to(UP * 1.6)
        prompt = VGroup(*[p for p in parts if p not in gen_chips])
        return prompt, gen_chips

    def build(self):
        steps = self.f["steps"]
        prompt, slots = self.strip()
        xs, aligns = [S.TEXT.left, -4.75, -2.35, -1.85, 2.05, S.TEXT.right], ["L", "L", "C", "L", "R", "R"]
        rows = []
        for s in steps:
            paid = (f"+{S.fmt_int(s['full'])}" if s["index"] > 0 else "already on the meter")
            cells = [label(f"pass {s['index'] + 1}", S.SMALL, S.MUTED),
                     label(f"over {s['context']} tokens", S.SMALL, S.INK),
                     label("→", S.SMALL, S.MUTED),
                     TokenChip(s["text"], color=S.LOGIT, size=S.SMALL, max_text_width=3.0),
                     label(S.fmt_prob(s["prob"]), S.SMALL, S.LOGIT, mono=True),
                     label(paid, S.SMALL, S.FLOPS if s["index"] > 0 else S.MUTED, mono=True)]
            rows.append(place_row(cells, xs, aligns, 0.45 - 0.68 * s["index"]))
        table = VGroup(*rows)
        if table.get_bottom()[1] < S.CAPTION_TOP + 0.75:   # many steps: squeeze into the band
            table.stretch_to_fit_height(table.height - (S.CAPTION_TOP + 0.75 - table.get_bottom()[1]))
            table.align_to([0, 0.7, 0], UP)
        note = fit_width(label("the meter adds one full pass per step: every row recomputed, no cache yet",
                               S.SMALL, S.FLOPS), S.TEXT_W)
        note.move_to(UP * S.FOOTER_Y)
        header = label("the context", S.SMALL, S.MUTED).next_to(prompt, UP, buff=0.15).align_to(prompt, LEFT)

        with self.beat("append") as beat:
            self.play(FadeIn(header), FadeIn(prompt, shift=DOWN * 0.1), run_time=beat.share(0.15))
            self.play(FadeIn(rows[0], shift=UP * 0.1), run_time=beat.share(0.2))
            self.play(TransformFromCopy(rows[0][3], slots[0]), run_time=beat.share(0.2))
        with self.beat("loop") as beat:
            total = self.ledger.total
            per = 0.8 / max(1, len(steps) - 1)
            self.play(FadeIn(note), run_time=beat.share(0.05))
            for s, row, slot in zip(steps[1:], rows[1:], slots[1:]):
                total += s["full"]
                self.play(FadeIn(row[:3], shift=UP * 0.1), run_time=beat.share(per * 0.25))
                self.pay_to(total, f"pass over {s['context']} tokens", run_time=beat.share(per * 0.35))
                self.play(FadeIn(row[3:], shift=UP * 0.1), run_time=beat.share(per * 0.15))
                self.play(TransformFromCopy(row[3], slot), run_time=beat.share(per * 0.2))


class Cache(LoopChapter):
    """The KV cache: per-token numbers, growing one column per step; cached vs recomputed FLOPs."""

    def columns(self):
        """One column per cached token (keys above values, one cell per layer), last ones windowed."""
        b, f = self.bundle, self.f
        L = f["shape"].n_layer
        texts = list(b.tokens) + [s["text"] for s in f["steps"][:-1]]   # the last pick is not fed back yet
        final = len(texts)
        first = max(0, final - CACHE_COLUMNS)
        cw, gap = 0.8, 0.14
        ch = min(0.16, 1.3 / L)
        n_shown = final - first
        x0 = 0.8 - (n_shown * (cw + gap) - gap) / 2      # the final window centred right of the legend
        cols = {}
        for j in range(first, final):
            x = x0 + (j - first) * (cw + gap)
            generated = j >= b.T
            k = VGroup(*[Rectangle(width=cw, height=ch, stroke_width=1, stroke_color=S.BACKGROUND, fill_color=S.KEY,
                                   fill_opacity=0.85) for _ in range(L)]).arrange(DOWN, buff=0)
            v = VGroup(*[Rectangle(width=cw, height=ch, stroke_width=1, stroke_color=S.BACKGROUND,
                                   fill_color=S.VALUE, fill_opacity=0.85) for _ in range(L)]).arrange(DOWN, buff=0)
            col = VGroup(k, v).arrange(DOWN, buff=0.1)
            col.move_to([x + cw / 2, 1.45, 0], aligned_edge=UP)
            name = fit_width(label(S.show_token(texts[j]), S.SMALL, S.LOGIT if generated else S.TOKEN, mono=True), cw + 0.04)
            name.next_to(col, DOWN, buff=0.12)
            cols[j] = VGroup(col, name)
        return cols, first, final

    def counter(self, tokens: int) -> VGroup:
        f = self.f
        numbers, nbytes = tokens * f["per_token"], tokens * f["per_token_bytes"]
        t = label(f"cache: {tokens} tokens · {S.fmt_int(numbers)} numbers · {S.fmt_int(nbytes)} bytes (fp16)",
                  S.SMALL, S.INK, mono=True)
        return fit_width(t, S.TEXT_W).move_to(DOWN * 2.35)

    def build(self):
        b, f = self.bundle, self.f
        sh = f["shape"]
        cols, first, final = self.columns()
        prompt_cols = VGroup(*[cols[j] for j in range(first, min(b.T, final))])
        any_col = next(iter(cols.values()))[0]
        legend = VGroup()
        for block, word, colour in ((any_col[0], "keys", S.KEY), (any_col[1], "values", S.VALUE)):
            m = VGroup(label(word, S.SMALL, colour), label(f"× {sh.n_layer} layers", S.SMALL, colour))
            m.arrange(DOWN, buff=0.06, aligned_edge=LEFT)
            legend.add(place_in(m, S.FULL, LEFT, y=block.get_y()))    # flush left, beside its block
        earlier = None
        if first > 0:
            earlier = below(label(f"+ {first} earlier", S.SMALL, S.MUTED), legend, buff=0.45, aligned=LEFT)
        with self.beat("redundant") as beat:
            self.play(FadeIn(legend), LaggedStart(*[FadeIn(c, shift=UP * 0.1) for c in prompt_cols], lag_ratio=0.08),
                      *([FadeIn(earlier)] if earlier is not None else []), run_time=beat.share(0.35))
            brace = Brace(VGroup(*[c[0] for c in prompt_cols]), UP, color=S.MUTED)
            same = fit_width(label("the same on every later pass: an earlier token never sees a later one",
                                   S.SMALL, S.INK), S.TEXT_W)
            keep_inside(same.next_to(brace, UP, buff=0.1), S.FULL)
            self.play(Create(brace), FadeIn(same), run_time=beat.share(0.3))
        with self.beat("cache") as beat:
            formula = fit_width(label(
                f"per token: 2 × {sh.n_layer} layers × {sh.n_embd} = {S.fmt_int(f['per_token'])} numbers "
                f"= {S.fmt_int(f['per_token_bytes'])} bytes in fp16", S.SMALL, S.INK, mono=True), S.TEXT_W)
            formula.move_to([0, same.get_y(), 0])
            count = self.counter(b.T)
            self.play(FadeOut(brace), FadeOut(same), FadeIn(formula), FadeIn(count), run_time=beat.share(0.25))
            new = [j for j in range(max(first, b.T), final)]
            per = 0.6 / max(1, len(new))
            for j in new:
                nxt = self.counter(j + 1)
                self.play(FadeIn(cols[j], shift=LEFT * 0.2), FadeOut(count), FadeIn(nxt),
                          run_time=beat.share(per))
                count = nxt
        with self.beat("cached_step") as beat:
            everything = VGroup(legend, formula, count, *cols.values(), *([earlier] if earlier else []))
            self.play(FadeOut(everything), run_time=beat.share(0.1))
            table = self.cost_table()
            self.play(LaggedStart(*[FadeIn(r, shift=UP * 0.1) for r in table], lag_ratio=0.2),
                      run_time=beat.share(0.5))

    def cost_table(self) -> VGroup:
        """FLOPs of each generated step: recomputing everything vs the cached step."""
        xs, aligns = [S.TEXT.left, 1.2, 4.35, S.TEXT.right], ["L", "R", "R", "R"]
        head = place_row([label("one step", S.SMALL, S.MUTED), label("recompute all", S.SMALL, S.MUTED),
                          label("with KV cache", S.SMALL, S.KEY), label("saved", S.SMALL, S.MUTED)],
                         xs, aligns, 1.7)
        rows = [head]
        y = 1.05
        for s in self.f["steps"][1:]:
            rows.append(place_row([label(f"pass over {s['context']} tokens", S.SMALL, S.INK),
                                   label(S.fmt_int(s["full"]), S.SMALL, S.FLOPS, mono=True),
                                   label(S.fmt_int(s["cached"]), S.SMALL, S.KEY, mono=True),
                                   label(f"× {s['full'] / s['cached']:.1f}", S.SMALL, S.INK, mono=True)],
                                  xs, aligns, y))
            y -= 0.6
        rule = Line([xs[0], 1.4, 0], [xs[-1], 1.4, 0], color=S.MUTED, stroke_width=1.5)
        note = fit_width(label("cached step: project only the new row, attend over all cached keys",
                               S.SMALL, S.MUTED), S.TEXT_W)
        note.move_to(UP * (y - 0.2))
        return VGroup(VGroup(head, rule), *rows[1:], note)


class Square(LoopChapter):
    """The n² bill at three lengths, then prefill vs decode with this prompt."""

    def build(self):
        f, b = self.f, self.bundle
        xs, aligns = [S.TEXT.left, -2.2, 1.3, 4.05, S.TEXT.right], ["L", "R", "R", "R", "R"]
        head = place_row([label("context", S.SMALL, S.MUTED), label("tokens", S.SMALL, S.MUTED),
                          label("pairs: n²", S.SMALL, S.ATTENTION), label("score+mix FLOPs", S.SMALL, S.MUTED),
                          label("of the pass", S.SMALL, S.MUTED)], xs, aligns, 1.2)
        rows, extra = [], []
        y = 0.5
        for r in f["square"]:
            left = place_row([label(r["name"], S.SMALL, S.INK), label(S.fmt_int(r["tokens"]), S.SMALL, S.TOKEN, mono=True),
                              label(S.fmt_int(r["pairs"]), S.SMALL, S.ATTENTION, mono=True)], xs[:3], aligns[:3], y)
            right = place_row([label(human(r["grid_flops"]), S.SMALL, S.FLOPS, mono=True),
                               label(f"{100 * r['share']:.1f}%" if r["share"] >= 0.001 else f"{100 * r['share']:.2g}%",
                                     S.SMALL, S.INK, mono=True)], xs[3:], aligns[3:], y)
            rows.append(left)
            extra.append(right)
            y -= 0.62
        rule = Line([xs[0], 0.88, 0], [xs[-1], 0.88, 0], color=S.MUTED, stroke_width=1.5)
        causal = fit_width(label(
            "the mask allows n(n+1)/2 of them: " + ",  ".join(f"{S.fmt_int(r['causal'])}" for r in f["square"])
            + "  · the ledger pays the full grid", S.SMALL, S.MUTED), S.TEXT_W)
        causal.move_to(UP * (y - 0.1))
        bound = fit_width(label(f"{b.config['n_positions']:,} positions is as far as GPT-2 can read; "
                                "the million is the same formula", S.SMALL, S.MUTED), S.TEXT_W)
        below(bound, causal, buff=0.15)
        with self.beat("square") as beat:
            self.play(FadeIn(head[:3]), Create(rule), run_time=beat.share(0.15))
            self.play(LaggedStart(*[FadeIn(r, shift=UP * 0.1) for r in rows], lag_ratio=0.35),
                      run_time=beat.share(0.45))
            self.play(FadeIn(causal), run_time=beat.share(0.15))
        with self.beat("square_share") as beat:
            self.play(FadeIn(head[3:]), LaggedStart(*[FadeIn(r, shift=LEFT * 0.1) for r in extra], lag_ratio=0.35),
                      run_time=beat.share(0.45))
            self.play(FadeIn(bound), run_time=beat.share(0.15))
        table = VGroup(head, rule, *rows, *extra, causal, bound)
        prefill, decode = self.panels()
        with self.beat("prefill") as beat:
            self.play(FadeOut(table), run_time=beat.share(0.1))
            self.play(FadeIn(prefill[0]), run_time=beat.share(0.15))
            self.play(LaggedStart(*[FadeIn(m, shift=UP * 0.1) for m in prefill[1:]], lag_ratio=0.25),
                      run_time=beat.share(0.4))
        with self.beat("decode") as beat:
            self.play(FadeIn(decode[0]), run_time=beat.share(0.15))
            self.play(LaggedStart(*[FadeIn(m, shift=UP * 0.1) for m in decode[1:]], lag_ratio=0.25),
                      run_time=beat.share(0.4))

    def panels(self) -> tuple[VGroup, VGroup]:
        b, f = self.bundle, self.f
        steps = f["steps"]

        def panel(x, title, colour, chips, lines):
            t = label(title, S.BODY_SIZE, colour).move_to([x, S.HEADLINE_Y, 0])
            chips.move_to([x, 1.05, 0])
            body = VGroup(*lines).arrange(DOWN, buff=0.22, aligned_edge=LEFT)
            fit_width(body, 6.2).next_to(chips, DOWN, buff=0.45)
            body.set_x(x)
            return VGroup(t, chips, *body)

        shown = b.tokens[-STRIP_PROMPT:]
        row = VGroup(*[TokenChip(t, size=S.SMALL) for t in shown]).arrange(RIGHT, buff=0.08)
        if b.T > len(shown):
            row = VGroup(label(f"{b.T - len(shown)} earlier …", S.SMALL, S.MUTED), *row).arrange(RIGHT, buff=0.1)
        fit_width(row, 6.0)
        per_w_pre = f["prefill"] / f["params"]
        prefill = panel(S.LEFT_HALF.x, "prefill: the prompt at once", S.KEY, row, [
            label(f"{b.T} rows through every matrix, in parallel", S.SMALL, S.INK),
            label(f"{S.fmt_int(f['prefill'])} FLOPs", S.SMALL, S.FLOPS, mono=True),
            label(f"{per_w_pre:.1f} FLOPs per weight fetched", S.SMALL, S.INK),
            label("compute-bound: the chip is busy", S.SMALL, S.MUTED)])
        nxt = steps[1] if len(steps) > 1 else steps[0]
        chip = VGroup(TokenChip(nxt["text"], color=S.LOGIT, size=S.SMALL))
        per_w_dec = f["decode"] / f["params"]
        decode = panel(S.RIGHT_HALF.x, "decode: one token per pass", S.LOGIT, chip, [
            label("1 row, plus the cache", S.SMALL, S.INK),
            label(f"{S.fmt_int(f['decode'])} FLOPs", S.SMALL, S.FLOPS, mono=True),
            label(f"{per_w_dec:.1f} FLOPs per weight fetched", S.SMALL, S.INK),
            label(f"+ {S.fmt_int(f['cache_read_bytes'])} cache bytes read", S.SMALL, S.INK),
            label("memory-bound: the chip waits", S.SMALL, S.MUTED)])
        divider = Line([0, 2.2, 0], [0, -2.6, 0], color=S.MUTED, stroke_width=1.5)
        prefill.add(divider)
        return prefill, decode


class Scale(LoopChapter):
    """The same ledger for GPT-3's shape; a 100-token reply for this model."""

    def build(self):
        f, b = self.f, self.bundle
        g2, g3 = f["shape"], f["gpt3_shape"]
        name2 = "GPT-2 small" if g2 == GPT2_SMALL else "this model"
        xs, aligns = [S.TEXT.left, 2.2, S.TEXT.right], ["L", "R", "R"]
        rows = [place_row([label("", S.SMALL), label(name2, S.BODY_SIZE, S.TOKEN), label("GPT-3", S.BODY_SIZE, S.LOGIT)],
                          xs, aligns, 1.85)]
        data = [("layers", g2.n_layer, g3.n_layer), ("heads", g2.n_head, g3.n_head), ("width", g2.n_embd, g3.n_embd),
                ("parameters", f["params"], f["gpt3_params"]),
                (f"FLOPs for token {b.T + 1} (KV cache)", f["gpt2_token"], f["gpt3_token"])]
        y = 1.2
        for name, a, c in data:
            rows.append(place_row([label(name, S.SMALL, S.INK), label(S.fmt_int(a), S.SMALL, S.INK, mono=True),
                                   label(S.fmt_int(c), S.SMALL, S.INK, mono=True)], xs, aligns, y))
            y -= 0.52
        for m in rows[-1][1:]:
            m.set_color(S.FLOPS)
        ratio = fit_width(label(f"same blueprint, × {f['gpt3_token'] / f['gpt2_token']:,.0f} the bill per token",
                                S.BODY_SIZE, S.FLOPS), S.TEXT_W)
        ratio.move_to(UP * (y - 0.15))
        with self.beat("gpt3") as beat:
            self.play(FadeIn(rows[0]), run_time=beat.share(0.1))
            self.play(LaggedStart(*[FadeIn(r, shift=UP * 0.1) for r in rows[1:]], lag_ratio=0.3),
                      run_time=beat.share(0.5))
            self.play(FadeIn(ratio), run_time=beat.share(0.15))
        with self.beat("reply") as beat:
            table = VGroup(*rows, ratio)
            self.play(FadeOut(table), run_time=beat.share(0.1))
            title = fit_width(label(f"a {f['reply_tokens']}-token reply to this prompt, {name2}", S.BODY_SIZE, S.INK),
                              S.TEXT_W).move_to(UP * 1.7)
            full, cached = f["reply_full"], f["reply_cached"]
            bars = VGroup()
            for text, value, colour in (("without a cache", full, S.MUTED), ("with the KV cache", cached, S.KEY)):
                bar = Rectangle(width=max(0.05, 7.0 * value / full), height=0.42, stroke_width=0, fill_color=colour,
                                fill_opacity=0.9)
                name = label(text, S.SMALL, S.INK)
                num = label(f"{S.fmt_int(value)} FLOPs", S.SMALL, S.FLOPS, mono=True)
                bars.add(VGroup(name, bar, num))
            for i, (name, bar, num) in enumerate(bars):
                y = 0.7 - i * 1.2
                place_in(name, S.TEXT, LEFT, y=y + 0.4)
                place_in(bar, S.TEXT, LEFT, y=y - 0.1)
                num.next_to(bar, RIGHT, buff=0.2)
            loop = fit_width(label("one pass, looped: the whole machine", S.BODY_SIZE, S.LOGIT), S.TEXT_W)
            loop.move_to(DOWN * 2.3)
            self.play(FadeIn(title), run_time=beat.share(0.15))
            self.play(LaggedStart(*[FadeIn(b_, shift=RIGHT * 0.2) for b_ in bars], lag_ratio=0.4),
                      run_time=beat.share(0.4))
            self.play(FadeIn(loop), run_time=beat.share(0.15))


SCENES = [Loop, Cache, Square, Scale]
