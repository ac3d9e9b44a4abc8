"""Chapter 06 — the loop, the KV cache and the n² bill.

The meter starts at the one-pass total and adds a full forward pass (no cache) for
every generated step, as the extraction ran them; the cached alternative is shown
beside it, both from data/flops.py.
"""
from __future__ import annotations

from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Brace, Create, FadeIn, FadeOut, Group, GrowArrow, GrowFromEdge,
                   LaggedStart,
                   Line, Rectangle, Transform, TransformFromCopy, VGroup)

from data import models
from data.facts.ch06 import family_facts, loop_facts
from scenes import style as S
from scenes.base import ChapterScene
from scenes.follow import Pointer, glow, say
from scenes.layout import GAP, below, even_gaps, keep_inside, place_in, table
from scenes.text import LEGIBLE, fit_lines, fit_width, label
from scenes.widgets import TokenChip
from words import numbers as N

CACHE_COLUMNS = 12     # at most this many token columns of the KV cache on screen
STRIP_PROMPT = 5       # prompt tokens shown before the generated ones in the context strip


def rule_under(head: VGroup, first: VGroup | None = None) -> Line:
    """A thin rule across the text width, midway between a table's header row and its first row (a GAP.m
    under the header when there is no row)."""
    y = (head.get_bottom()[1] + first.get_top()[1]) / 2 if first is not None else head.get_bottom()[1] - GAP.m
    return Line([S.TEXT.left, y, 0], [S.TEXT.right, y, 0], color=S.MUTED, stroke_width=1.5)


class LoopChapter(ChapterScene):
    chapter = "06"

    def setup(self):
        super().setup()
        self.f = loop_facts(self.bundle)

    def meter_opening(self):
        """After every pass of the loop (the scenes after Loop)."""
        f = loop_facts(self.bundle)
        n = len(f["steps"])
        return f["loop_total"], self.text("meter-loop", count=n)

    def clear_content(self):
        """Fade out everything on screen but the furniture (title line, mark, meter)."""
        keep = {id(m) for m in (self.meter, self.heading, getattr(self, "random_mark", None))}
        return FadeOut(Group(*[m for m in self.mobjects if id(m) not in keep]))


class Loop(LoopChapter):
    """Append the pick, run the whole pass again: generated steps from the bundle."""
    show_title = True

    def meter_opening(self):
        return self.ledger.total, self.text("meter-one-pass", count=self.bundle.T)

    def strip(self) -> tuple[VGroup, list]:
        """The context: the prompt's last tokens, then one slot per generated token."""
        b, steps = self.bundle, self.f["steps"]
        shown = b.tokens[-STRIP_PROMPT:]
        parts = VGroup()
        if b.T > len(shown):
            parts.add(label(self.text("earlier-tokens", count=b.T - len(shown)), S.SMALL, S.MUTED))
        prompt_chips = [TokenChip(t, size=S.BODY_SIZE) for t in shown]
        gen_chips = [TokenChip(s["text"], color=S.LOGIT, size=S.BODY_SIZE) for s in steps]
        parts.add(*prompt_chips, *gen_chips)
        fit_width(parts.arrange(RIGHT, buff=GAP.s), S.FULL_W)
        prompt = VGroup(*[p for p in parts if p not in gen_chips])
        return prompt, gen_chips

    def build(self):
        steps = self.f["steps"]
        prompt, slots = self.strip()
        # the context hangs from the top of the content box, under its header
        header = label(self.text("context-header"), S.SMALL, S.MUTED).next_to(prompt, UP, buff=GAP.s).align_to(prompt, S.START)
        place_in(VGroup(header, prompt, *slots), S.CONTENT, UP)
        cells = []
        for s in steps:
            paid = (f"+{N.fmt_int(s['full'])}" if s["index"] > 0 else self.text("paid-already"))
            cells.append([label(self.text("pass-number", n=s["index"] + 1), S.SMALL, S.MUTED),
                          label(self.text("pass-tokens", count=s["context"]), S.SMALL, S.INK),
                          label("←" if S.RTL else "→", S.SMALL, S.MUTED),     # towards the pick, as the row reads
                          TokenChip(s["text"], color=S.LOGIT, size=S.SMALL, max_text_width=3.0),
                          label(N.fmt_prob(s["prob"]), S.SMALL, S.LOGIT, mono=True),
                          label(paid, S.SMALL, S.FLOPS if s["index"] > 0 else S.MUTED, mono=True)])
        # one row per pass, the pick just after its arrow, the bill flush right at the text's edge
        gaps = [GAP.xl, GAP.xl, GAP.s, GAP.xl, GAP.xl]
        rows = table(cells, "LLCLRR", gaps=gaps, width=S.TEXT_W, row_gap=GAP.m, rtl_aligns="RRCRRR")
        if rows.width > S.TEXT_W:      # longer words (a translation): the wide gaps give way, then the text
            over = (rows.width - S.TEXT_W) / sum(g > GAP.s for g in gaps)
            gaps = [max(GAP.s, g - over) if g > GAP.s else g for g in gaps]
            rows = fit_width(table(cells, "LLCLRR", gaps=gaps, width=S.TEXT_W, row_gap=GAP.m, rtl_aligns="RRCRRR"),
                             S.FULL_W)
        below(rows, prompt, buff=GAP.xl)
        rows.set_x(S.TEXT.x)
        note = fit_lines(self.text("loop-note"), S.SMALL, S.FLOPS, S.TEXT_W)
        note.move_to(UP * S.FOOTER_Y)
        floor = note.get_top()[1] + GAP.m
        squeeze = (rows.get_top()[1] - floor) / rows.height
        if squeeze < LEGIBLE:              # taller words (a translation): the rows close up to the strip first
            rows.shift(UP * min(GAP.xl - GAP.s, (LEGIBLE - squeeze) * rows.height))
        if rows.get_bottom()[1] < floor:   # many steps: squeeze the rows in above the note
            rows.stretch_to_fit_height(rows.get_top()[1] - floor, about_edge=UP)

        with self.beat("append") as beat:
            self.play(FadeIn(header), FadeIn(prompt, shift=DOWN * GAP.xs), run_time=beat.span(0.2))
            # "one pick, <token>, at <p>": the first pass and its pick, then its probability lit
            ptr = Pointer(S.LOGIT, buff=GAP.xs, opacity=0.2)
            say(self, beat, "pick", FadeIn(rows[0][:5], shift=UP * GAP.xs), ptr.to(rows[0][:5], color=S.INK),
                into=0.2)
            say(self, beat, "pick", ptr.to(rows[0][3:5]), into=0.4)
            if self.bundle.synthetic:     # random weights: that probability is noise
                say(self, beat, "noise", ptr.to(rows[0][4], color=S.WARNING))
            # "the model keeps no memory of it": the pass is over; only the token is carried on
            say(self, beat, "no-memory", FadeIn(rows[0][5]), rows[0][:3].animate.set_opacity(0.35),
                ptr.to(rows[0][3]))
            say(self, beat, "appended", TransformFromCopy(rows[0][3], slots[0]), ptr.off())
            context = glow(VGroup(prompt, slots[0]), color=S.TOKEN, opacity=0.12)
            say(self, beat, "runs-again", FadeIn(context))
        with self.beat("loop") as beat:
            # "passes over 6, 7 and 8 tokens pick ...": each pass and its pick, as they are read
            more = list(zip(steps[1:], rows[1:], slots[1:]))
            n = max(1, len(more))
            self.play(FadeOut(context), run_time=0.3)
            for k, (s, row, slot) in enumerate(more):
                say(self, beat, "passes", FadeIn(row[:3], shift=UP * GAP.xs), into=0.05 + 0.4 * k / n,
                    run_time=min(0.8, beat.span(0.15, mark="passes")))
            for k, (s, row, slot) in enumerate(more):
                say(self, beat, "passes", FadeIn(row[3:5], shift=UP * GAP.xs),
                    TransformFromCopy(row[3], slot), into=0.45 + 0.5 * k / n,
                    run_time=min(0.8, beat.span(0.15, mark="passes")))
            # "the meter adds a full pass every time": each row's bill, paid on the meter
            total = self.ledger.total
            say(self, beat, "recomputes", FadeIn(note), FadeIn(glow(self.meter, color=S.FLOPS, opacity=0.15)))
            for k, (s, row, slot) in enumerate(more):
                total += s["full"]
                beat.at("each-pass", 0.3 + 0.65 * k / n)
                run = min(1.2, beat.span(0.6 / n))
                self.pay_total(total, self.text("pass-over", count=s["context"]), FadeIn(row[5], shift=LEFT * 0.1),
                               FadeIn(glow(row[5], color=S.FLOPS, buff=0.06, opacity=0.15)), run_time=run)


class Cache(LoopChapter):
    """The KV cache: per-token numbers, growing one column per step; cached vs recomputed FLOPs."""

    def columns(self):
        """One column per cached token (keys above values, one cell per layer), last ones windowed."""
        b, f = self.bundle, self.f
        L = f["shape"].n_layer
        texts = list(b.tokens) + [s["text"] for s in f["steps"][:-1]]   # the last pick is not fed back yet
        final = len(texts)
        first = max(0, final - CACHE_COLUMNS)
        cw = 0.8
        ch = min(0.16, 1.3 / L)
        stacks = {}
        for j in range(first, final):
            k = VGroup(*[Rectangle(width=cw, height=ch, stroke_width=1, stroke_color=S.BACKGROUND, fill_color=S.KEY,
                                   fill_opacity=0.85) for _ in range(L)]).arrange(DOWN, buff=GAP.none)
            v = VGroup(*[Rectangle(width=cw, height=ch, stroke_width=1, stroke_color=S.BACKGROUND,
                                   fill_color=S.VALUE, fill_opacity=0.85) for _ in range(L)]).arrange(DOWN, buff=GAP.none)
            stacks[j] = VGroup(k, v).arrange(DOWN, buff=GAP.xs)
        VGroup(*stacks.values()).arrange(RIGHT, buff=GAP.s)      # the final window; build() places it
        cols = {}
        for j, col in stacks.items():
            name = fit_width(label(S.show_token(texts[j]), S.SMALL, S.LOGIT if j >= b.T else S.TOKEN, mono=True),
                             cw + 0.04)
            cols[j] = VGroup(col, below(name, col, buff=GAP.xs))
        return cols, first, final

    def counter(self, cache: dict) -> VGroup:
        """The cache's size after one pass (an entry of loop_facts' "cache")."""
        t = label(self.text("cache-counter", count=cache["tokens"], numbers=N.fmt_int(cache["numbers"]),
                            bytes=N.fmt_int(cache["bytes"])), S.SMALL, S.INK, mono=True)
        return place_in(fit_width(t, S.TEXT_W), S.TEXT, y=S.FOOTER_Y)

    def build(self):
        b, f = self.bundle, self.f
        sh = f["shape"]
        cols, first, final = self.columns()
        prompt_cols = VGroup(*[cols[j] for j in range(first, min(b.T, final))])
        any_col = next(iter(cols.values()))[0]
        legend = VGroup()
        layers = self.text("layers", count=sh.n_layer)
        for block, word, colour in ((any_col[0], self.text("keys"), S.KEY), (any_col[1], self.text("values"), S.VALUE)):
            m = VGroup(label(word, S.SMALL, colour), label(layers, S.SMALL, colour))
            m.arrange(DOWN, buff=GAP.xxs, aligned_edge=LEFT)
            legend.add(place_in(m, S.FULL, LEFT, y=block.get_y()))    # flush left, beside its block
        window = VGroup(*cols.values())       # the final window, centred in the room right of the legend
        window.set_x(S.FULL.with_(left=legend.get_right()[0]).x)
        tops = VGroup(*[c[0] for c in prompt_cols])
        brace = Brace(tops, UP, color=S.MUTED)
        same = fit_width(label(self.text("same-later"), S.SMALL, S.INK), S.TEXT_W)
        same.next_to(brace, UP, buff=GAP.xs)
        # the picture hangs from the top of the content box (the line over the brace is its top)
        VGroup(window, legend, brace, same).align_to(S.CONTENT.point(UP), UP)
        keep_inside(same, S.FULL)
        earlier = None
        if first > 0:
            earlier = below(label(self.text("earlier-columns", count=first), S.SMALL, S.MUTED), legend, buff=GAP.l,
                            aligned=LEFT)
        with self.beat("redundant") as beat:
            self.play(FadeIn(legend), LaggedStart(*[FadeIn(c, shift=UP * GAP.xs) for c in prompt_cols], lag_ratio=0.08),
                      *([FadeIn(earlier)] if earlier is not None else []), run_time=beat.span(0.8))
            # "an earlier token never sees a later one": reading runs backwards only
            over = UP * GAP.m         # the arrow runs just over the columns
            back = Arrow(tops.get_corner(UP + RIGHT) + over, tops.get_corner(UP + LEFT) + over, buff=GAP.none,
                         color=S.ATTENTION, stroke_width=6, tip_length=0.2)
            never = fit_width(label(self.text("never-sees"), S.SMALL, S.ATTENTION), S.TEXT_W)
            keep_inside(never.next_to(back, UP, buff=GAP.xs), S.FULL)
            say(self, beat, "never-sees", GrowArrow(back), FadeIn(never))
            # "so its keys and values, in every layer, come out exactly as before"
            keys = VGroup(*[c[0][0] for c in prompt_cols])
            vals = VGroup(*[c[0][1] for c in prompt_cols])
            lit = glow(keys, color=S.KEY, buff=GAP.xxs, opacity=0.25)
            say(self, beat, "keys-values", FadeIn(lit))
            say(self, beat, "every-layer", Transform(lit, glow(vals, color=S.VALUE, buff=GAP.xxs, opacity=0.25)))
            say(self, beat, "exactly", FadeOut(back), FadeOut(never), FadeOut(lit), Create(brace), FadeIn(same))
        with self.beat("cache") as beat:
            formula = fit_width(label(
                self.text("per-token", n_layer=sh.n_layer, d=sh.n_embd, numbers=N.fmt_int(f["per_token"]),
                          bytes=N.fmt_int(f["per_token_bytes"])), S.SMALL, S.INK, mono=True), S.TEXT_W)
            place_in(formula, S.TEXT, y=same.get_y())
            count = self.counter(f["cache"][0])
            frame = glow(VGroup(*[c[0] for c in prompt_cols]), color=S.KEY, buff=GAP.s, opacity=0.08)
            say(self, beat, "kept", FadeOut(brace), FadeOut(same), FadeIn(count), FadeIn(frame))
            # one token's column: a key and a value per layer
            one = prompt_cols[-1][0]
            lit = glow(one, color=S.TOKEN, opacity=0.25)
            say(self, beat, "leaves", FadeOut(frame), FadeIn(lit))
            say(self, beat, "layers", Transform(lit, glow(one[0], color=S.KEY, buff=GAP.xxs, opacity=0.3)))
            say(self, beat, "per-token", FadeIn(formula), Transform(lit, glow(formula, color=S.INK, opacity=0.1)))
            say(self, beat, "half", Transform(lit, glow(count, color=S.INK, opacity=0.1)))
            new = [j for j in range(max(first, b.T), final)]
            for k, j in enumerate(new):
                nxt = self.counter(f["cache"][j + 1 - b.T])     # after the pass that fed token j back
                say(self, beat, "columns", FadeIn(cols[j], shift=LEFT * GAP.s), FadeOut(count),
                    FadeIn(nxt), *([FadeOut(lit)] if k == 0 else []), into=0.9 * k / max(1, len(new)),
                    run_time=min(1.0, beat.span(0.8 / max(1, len(new)), mark="columns")))
                count = nxt
        with self.beat("cached_step") as beat:
            self.play(self.clear_content(), run_time=beat.share(0.1))
            costs = self.cost_table()
            head, first_row, rest, note = costs[0], costs[1] if len(costs) > 2 else None, costs[2:-1], costs[-1]
            say(self, beat, "cached", FadeIn(head, shift=UP * GAP.xs), into=0.1)
            say(self, beat, "computes-only", FadeIn(note, shift=UP * GAP.xs),
                FadeIn(glow(head[0][2], color=S.KEY, opacity=0.2)))
            ptr = Pointer(S.FLOPS, opacity=0.18)
            if first_row is not None:
                say(self, beat, "drops", FadeIn(first_row[0]), FadeIn(first_row[1]), ptr.to(first_row[:2]))
                say(self, beat, "drops", FadeIn(first_row[2]), ptr.to(first_row[2], color=S.KEY), into=0.45)
                say(self, beat, "drops", FadeIn(first_row[3]), ptr.to(first_row[3], color=S.INK), into=0.75)
            if len(rest):
                say(self, beat, "grows", LaggedStart(*[FadeIn(r, shift=UP * GAP.xs) for r in rest], lag_ratio=0.3),
                    ptr.to(VGroup(*[r[3] for r in rest]), color=S.INK))

    def cost_table(self) -> VGroup:
        """FLOPs of each generated step: recomputing everything vs the cached step."""
        cells = [[label(self.text("cost-step"), S.SMALL, S.MUTED), label(self.text("cost-full"), S.SMALL, S.MUTED),
                  label(self.text("cost-cached"), S.SMALL, S.KEY), label(self.text("cost-saved"), S.SMALL, S.MUTED)]]
        for s in self.f["steps"][1:]:
            cells.append([label(self.text("pass-over", count=s["context"]), S.SMALL, S.INK),
                          label(N.fmt_int(s["full"]), S.SMALL, S.FLOPS, mono=True),
                          label(N.fmt_int(s["cached"]), S.SMALL, S.KEY, mono=True),
                          label(f"× {N.fmt_ratio(s['saving'])}", S.SMALL, S.INK, mono=True)])
        # the steps under their header, spread across the text width, from the headline line down
        rows = table(cells, "LRRR", gaps=even_gaps(cells, S.TEXT_W), width=S.TEXT_W, row_gap=GAP.l,
                     space_before={1: GAP.m}, x=S.TEXT.left, y=S.HEADLINE_Y, rtl_aligns="RRRR")
        note = fit_width(label(self.text("cost-note"), S.SMALL, S.MUTED), S.TEXT_W)
        below(note, rows, buff=GAP.l)
        return VGroup(VGroup(rows[0], rule_under(*rows[:2])), *rows[1:], note)


class Square(LoopChapter):
    """The n² bill at three lengths, then prefill vs decode with this prompt."""

    def build(self):
        f, b = self.f, self.bundle
        cells = [[label(self.text("square-context"), S.SMALL, S.MUTED), label(self.text("square-tokens"), S.SMALL, S.MUTED),
                  label(self.text("square-pairs"), S.SMALL, S.ATTENTION), label(self.text("square-flops"), S.SMALL, S.MUTED),
                  label(self.text("square-share"), S.SMALL, S.MUTED)]]
        names = {"prompt": self.text("length-prompt"), "limit": self.text("length-limit"),
                 "long": self.text("length-million")}
        for r in f["square"]:
            cells.append([label(names[r["key"]], S.SMALL, S.INK), label(N.fmt_int(r["tokens"]), S.SMALL, S.TOKEN, mono=True),
                          label(N.fmt_int(r["pairs"]), S.SMALL, S.ATTENTION, mono=True),
                          label(N.fmt_human(r["grid_flops"]), S.SMALL, S.FLOPS, mono=True),
                          label(N.fmt_share(r["share"]), S.SMALL, S.INK, mono=True)])
        grid = table(cells, "LRRRR", gaps=even_gaps(cells, S.TEXT_W), width=S.TEXT_W, row_gap=GAP.l,
                     space_before={1: GAP.m}, x=S.TEXT.left, rtl_aligns="RRRRR")
        fit_width(grid, S.CONTENT_W)   # longer words (a translation) may use the content box's width
        head = grid[0]
        rows = [VGroup(*r[:3]) for r in grid[1:]]      # the pairs, read first
        extra = [VGroup(*r[3:]) for r in grid[1:]]     # what they cost, read after
        rule = rule_under(*grid[:2])
        causal = fit_lines(self.text("mask-allows", counts=",  ".join(N.fmt_int(r["causal"]) for r in f["square"])),
                         S.SMALL, S.MUTED, S.TEXT_W)
        below(causal, grid, buff=GAP.l)
        bound = fit_lines(self.text("bound", n=N.fmt_int(b.config["n_positions"])), S.SMALL, S.MUTED, S.TEXT_W)
        below(bound, causal, buff=GAP.s)
        place_in(VGroup(grid, rule, causal, bound), S.CONTENT)     # the table and its notes, centred
        with self.beat("square") as beat:
            self.play(FadeIn(head[:3]), Create(rule), run_time=beat.span(0.3))
            # "every token is scored against every token": the pairs column lit
            lit = glow(VGroup(head[2], *[r[2] for r in rows]), color=S.ATTENTION, opacity=0.1)
            say(self, beat, "every-token", FadeIn(lit))
            # "here that is T times T": this prompt's row; then GPT-2's limit, then a million tokens
            reading = glow(rows[0], color=S.TOKEN, buff=GAP.xs, opacity=0.15)
            say(self, beat, "here", FadeOut(lit), FadeIn(rows[0], shift=UP * GAP.xs), FadeIn(reading))
            say(self, beat, "pairs", Transform(reading, glow(rows[0][2], color=S.ATTENTION, opacity=0.25)))
            for k, r in enumerate(rows[1:]):
                say(self, beat, "limit", FadeIn(r, shift=UP * GAP.xs),
                    Transform(reading, glow(r, color=S.TOKEN, buff=GAP.xs, opacity=0.15)), into=0.05 + 0.5 * k)
            say(self, beat, "limit", FadeIn(causal), FadeOut(reading), into=0.9)
        with self.beat("square_share") as beat:
            # each length's share of a pass, as it is read
            say(self, beat, "share", FadeIn(head[3:]), FadeIn(extra[0][0], shift=S.START * GAP.xs),
                FadeIn(glow(extra[0][0], color=S.FLOPS, buff=GAP.xs, opacity=0.15)))
            say(self, beat, "share", FadeIn(extra[0][1], shift=S.START * GAP.xs),
                FadeIn(glow(extra[0][1], color=S.FLOPS, buff=GAP.xs, opacity=0.15)), into=0.45)
            for k, r in enumerate(extra[1:]):
                say(self, beat, "longer", FadeIn(r, shift=S.START * GAP.xs),
                    FadeIn(glow(r, color=S.FLOPS, buff=GAP.xs, opacity=0.15)), into=0.0 + 0.5 * k)
            say(self, beat, "long-contexts", FadeIn(bound),
                FadeIn(glow(VGroup(head[4], *[r[1] for r in extra]), color=S.ATTENTION, opacity=0.12)))
        prefill, decode = self.panels()
        with self.beat("prefill") as beat:
            # "the loop in two": the two halves; then prefill's figures as they are read
            self.play(self.clear_content(), run_time=beat.span(0.3))
            say(self, beat, "two", FadeIn(prefill[0]), FadeIn(decode[0]), FadeIn(decode[1]), Create(prefill[-1]),
                into=0.3)
            reading = glow(prefill[1], color=S.KEY, opacity=0.15)
            prefill_lit = reading
            for k, m in enumerate(prefill[1:-1]):
                move = FadeIn(reading) if k == 0 else Transform(reading, glow(m, color=S.KEY, opacity=0.15))
                say(self, beat, "prefill", FadeIn(m, shift=UP * GAP.xs), move,
                    into=0.05 + 0.85 * k / max(1, len(prefill) - 2))
        with self.beat("decode") as beat:
            body = decode[1:]
            reading = glow(body[0], color=S.LOGIT, buff=GAP.s, opacity=0.25)
            self.play(FadeOut(prefill_lit), run_time=0.3)
            for k, m in enumerate(body):
                move = FadeIn(reading) if k == 0 else Transform(reading, glow(m, color=S.LOGIT, buff=GAP.s, opacity=0.25))
                if k < len(body) - 1:     # decode's figures as they are read; the last as the chip waits
                    say(self, beat, "decode", FadeIn(m, shift=UP * GAP.xs), move, into=0.9 * k / max(1, len(body) - 1))
                else:
                    say(self, beat, "memory", FadeIn(m, shift=UP * GAP.xs), move)
            # "an answer starts after a pause, then streams": the picks arriving one by one
            stream = VGroup(*[TokenChip(s["text"], color=S.LOGIT, size=S.SMALL) for s in self.f["steps"]])
            stream.arrange(RIGHT, buff=GAP.xs)
            fit_width(stream, self.second_half.width - GAP.xl)
            place_in(stream, self.second_half, DOWN, buff=GAP.xs)     # under decode's half
            waiting = glow(stream, color=S.MUTED, opacity=0.12)     # the answer, not there yet
            say(self, beat, "pause", FadeIn(waiting))
            say(self, beat, "streams", LaggedStart(*[FadeIn(c, shift=LEFT * GAP.s) for c in stream], lag_ratio=0.5),
                Transform(waiting, glow(stream, color=S.LOGIT, opacity=0.12)),
                run_time=beat.span(0.8, mark="streams"))

    def panels(self) -> tuple[VGroup, VGroup]:
        b, f = self.bundle, self.f
        steps = f["steps"]

        def panel(half, title, colour, chips, lines):
            """One half: its title on the headline line, the tokens it reads, then its figures."""
            t = place_in(fit_width(label(title, S.BODY_SIZE, colour), half.width - GAP.xl), half, y=S.HEADLINE_Y)
            below(chips, t, buff=GAP.l)
            body = VGroup(*lines).arrange(DOWN, buff=GAP.m, aligned_edge=S.START)
            below(fit_width(body, half.width - GAP.xl), chips, buff=GAP.l)
            body.set_x(half.x)
            return VGroup(t, chips, *body)

        shown = b.tokens[-STRIP_PROMPT:]
        row = VGroup(*[TokenChip(t, size=S.SMALL) for t in shown]).arrange(RIGHT, buff=GAP.xs)
        if b.T > len(shown):
            row = VGroup(label(self.text("earlier-prefix", count=b.T - len(shown)), S.SMALL, S.MUTED), *row).arrange(RIGHT, buff=GAP.xs)
        fit_width(row, S.LEFT_HALF.width - GAP.xl)
        w = S.LEFT_HALF.width - GAP.xl           # a line of a panel (both halves are as wide)
        # prefill, then decode, in reading order: prefill in the half where the reader starts
        first_half, self.second_half = (S.RIGHT_HALF, S.LEFT_HALF) if S.RTL else (S.LEFT_HALF, S.RIGHT_HALF)
        prefill = panel(first_half, self.text("prefill-title"), S.KEY, row, [
            fit_lines(self.text("prefill-rows", count=b.T), S.SMALL, S.INK, w),
            fit_lines(self.text("flops", flops=N.fmt_int(f["prefill"])), S.SMALL, S.FLOPS, w, mono=True),
            fit_lines(self.text("per-weight", ratio=N.fmt_ratio(f["prefill_per_param"])), S.SMALL, S.INK, w),
            fit_lines(self.text("prefill-bound"), S.SMALL, S.MUTED, w)])
        nxt = steps[1] if len(steps) > 1 else steps[0]
        chip = VGroup(TokenChip(nxt["text"], color=S.LOGIT, size=S.SMALL))
        decode = panel(self.second_half, self.text("decode-title"), S.LOGIT, chip, [
            fit_lines(self.text("decode-row"), S.SMALL, S.INK, w),
            fit_lines(self.text("flops", flops=N.fmt_int(f["decode"])), S.SMALL, S.FLOPS, w, mono=True),
            fit_lines(self.text("per-weight", ratio=N.fmt_ratio(f["decode_per_param"])), S.SMALL, S.INK, w),
            fit_lines(self.text("cache-read", bytes=N.fmt_int(f["cache_read_bytes"])), S.SMALL, S.INK, w),
            fit_lines(self.text("decode-bound"), S.SMALL, S.MUTED, w)])
        divider = Line(S.CONTENT.point(UP), S.CONTENT.point(DOWN), color=S.MUTED, stroke_width=1.5)   # between the halves
        prefill.add(divider)
        return prefill, decode


NAME_W = 2.4          # the scale table's model names: wider ones ("a GPT-2-shaped model") wrap


class Scale(LoopChapter):
    """Where this model sits: the GPT-2 family and GPT-3 priced by the same ledger (data.facts.ch06's
    family_facts), this model's row lit; then a 100-token reply for this model."""

    def family_table(self, below: float) -> tuple[VGroup, VGroup, list[dict]]:
        """One row per model, smallest first, GPT-3 last: layers, heads, width, parameters, the next
        token's FLOPs with a KV cache and the numbers its cache keeps per token. Returns the rows (the
        header first), the rule under the header and the facts of each row."""
        facts = family_facts(self.bundle)
        head = [self.text("col-model"), self.text("row-layers"), self.text("row-heads"), self.text("row-width"),
                self.text("row-params"), self.text("col-token-flops", n=self.f["decode_context"]), self.text("col-kv")]
        names, body = [], []
        for r in facts:
            colour = S.LOGIT if r["key"] == "gpt3" else (S.TOKEN if r["ours"] else S.INK)
            name = self.text("model-gpt3") if r["key"] == "gpt3" else self.words.model_name(
                None if r["key"] == "other" else r["key"])
            names.append((name, colour))
            nums = (N.fmt_int(r["layers"]), N.fmt_int(r["heads"]), N.fmt_int(r["width"]), N.fmt_short(r["params"]),
                    N.fmt_short(r["token_flops"]), N.fmt_int(r["kv_numbers"]))
            body.append([label(n, S.SMALL, colour if r["ours"] else S.INK, mono=True) for n in nums])
        # each column's header as wide as its numbers plus a share of the room left on the line (the names
        # keep NAME_W), in proportion to how much wider than its numbers it is: longer words (a translation)
        # wrap instead of shrinking; a one-word header keeps its width
        cols = [max(r[j].width for r in body) for j in range(len(head) - 1)]
        natural = [label(t, S.SMALL, S.MUTED).width for t in head[1:]]
        fixed = [" " not in t.strip() for t in head[1:]]
        over = [max(0.0, n - c) for n, c in zip(natural, cols)]
        spare = (S.FULL_W - NAME_W - sum(cols) - GAP.s * (len(head) - 1)
                 - sum(o for o, f in zip(over, fixed) if f))
        wrap = sum(o for o, f in zip(over, fixed) if not f)
        share = 1.0 if wrap <= spare else max(0.0, spare) / wrap
        header = [fit_lines(t, S.SMALL, S.MUTED, c + (o if f else o * share))
                  for t, c, o, f in zip(head[1:], cols, over, fixed)]
        # the names take what the numbers leave (at least NAME_W): a name wraps only when the line is full
        name_w = max(NAME_W, S.FULL_W - sum(max(c, h.width) for c, h in zip(cols, header)) - GAP.s * (len(head) - 1))
        header = [fit_lines(head[0], S.SMALL, S.MUTED, name_w)] + header
        body = [[fit_lines(name, S.SMALL, colour, name_w)] + r for (name, colour), r in zip(names, body)]
        cells = [header] + body
        least = sum(max(r[j].width for r in cells) for j in range(len(head))) + GAP.s * (len(head) - 1)
        region = S.TEXT if least <= S.TEXT_W else S.FULL      # longer words may use the margin to margin width
        # the models under their header, spread across the text width from the headline line down; GPT-3
        # apart; a model outside the family adds a row, and the rows close up so the ratio under them stays
        # out of the captions
        line = max(m.height for r in body for m in r[1:])     # one line of numbers
        lift = max(m.height for m in header) - line      # a header that wraps takes more room above the rows
        space = {1: GAP.s + lift / 2, len(cells) - 1: GAP.m}
        for k, r in enumerate(body, start=1):            # a name that wraps: air above and below its row
            extra = max(0.0, r[0].height - line) / 2
            space[k] = space.get(k, 0.0) + extra
            space[k + 1] = space.get(k + 1, 0.0) + extra
        # rows a GAP.m apart, closer where more rows or taller words would push the line under the table
        # (`below`: its height and gap) into the captions
        for row_gap in (GAP.m, GAP.s, GAP.xs):
            rows = table(cells, "LRRRRRR", gaps=even_gaps(cells, region.width), width=region.width,
                         pitch=line + row_gap, space_before=space, x=region.left, y=S.HEADLINE_Y, rtl_aligns="RRRRRRR")
            if rows.get_y(DOWN) - below > S.CAPTION_TOP:
                break
        for m in rows[0]:
            m.align_to(rows[0], DOWN)             # the header's words sit on one line, just over the rule
        fit_width(rows, S.FULL_W)
        return rows, rule_under(*rows[:2]), facts

    def build(self):
        f = self.f
        ratio = fit_width(label(self.text("gpt3-ratio", ratio=N.fmt_whole(f["gpt3_ratio"])), S.BODY_SIZE, S.FLOPS),
                          S.TEXT_W)
        rows, rule, facts = self.family_table(below=ratio.height + GAP.l)
        head, body = rows[0], rows[1:]
        ours = body[next(k for k, r in enumerate(facts) if r["ours"])]
        gpt3 = body[-1]
        family = body[:-1]
        # under the table, closer to it when the table is tall (long words, a model outside the family)
        below(ratio, rows, buff=max(GAP.s, min(GAP.l, rows.get_y(DOWN) - S.CAPTION_TOP - ratio.height - GAP.xs)))
        with self.beat("family") as beat:
            # "the same blueprint comes in a family of sizes": the header; then the family, smallest first
            self.play(FadeIn(head), Create(rule), run_time=beat.span(0.5))
            say(self, beat, "sizes", LaggedStart(*[FadeIn(r, shift=UP * GAP.xs) for r in family], lag_ratio=0.3),
                run_time=beat.span(0.4, mark="sizes"))
            # "from the smallest … to the largest …, the ledger prices each one the same way": the two
            # ends of the family, then the FLOPs column the ledger fills for every row
            ptr = Pointer(S.TOKEN, buff=GAP.xs, opacity=0.2)
            say(self, beat, "sizes", ptr.to(family[0]), into=0.15)
            say(self, beat, "sizes", ptr.to(family[-1]), into=0.45)
            say(self, beat, "sizes", ptr.to(VGroup(head[5], *[r[5] for r in family]), color=S.FLOPS), into=0.75)
            # "this film's model is …": its row lit, then its parameters, its FLOPs per token, its KV cache
            say(self, beat, "ours", ptr.to(ours, color=S.TOKEN))
            for k, into in ((4, 0.3), (5, 0.55), (6, 0.8)):
                say(self, beat, "ours", ptr.to(VGroup(head[k], ours[k])), into=into)
        with self.beat("gpt3") as beat:
            # "print the same blueprint bigger": GPT-3's name; then its figures as they are read
            self.play(FadeIn(gpt3[0], shift=UP * GAP.xs), ptr.to(gpt3[0], color=S.LOGIT), run_time=beat.span(0.6))
            for k in range(1, 5):
                say(self, beat, "gpt3", FadeIn(gpt3[k], shift=S.START * GAP.s), ptr.to(gpt3[k], color=S.LOGIT),
                    into=0.15 + 0.8 * (k - 1) / 3, run_time=min(0.8, beat.span(0.2, mark="gpt3")))
            # "prices one new token at … against … for <this model>"
            say(self, beat, "prices", FadeIn(gpt3[5:], shift=S.START * GAP.s), run_time=min(0.8, beat.span(0.15)))
            say(self, beat, "prices", ptr.to(gpt3[5], color=S.LOGIT), into=0.3)
            say(self, beat, "prices", ptr.to(ours[5], color=S.TOKEN), into=0.65)
            # as the sentence ends, the two prices the ratio divides, together
            say(self, beat, "prices", ptr.to(VGroup(gpt3[5], ours[5]), color=S.FLOPS), into=0.97)
            say(self, beat, "times-bill", FadeIn(ratio, shift=UP * GAP.xs), ptr.to(ratio, color=S.FLOPS))
        name2 = self.words.model_name(self.bundle.model)
        with self.beat("reply") as beat:
            self.play(self.clear_content(), run_time=beat.share(0.1))
            title = fit_width(label(self.text("reply-title", n=f["reply_tokens"], model=name2), S.BODY_SIZE, S.INK),
                              S.TEXT_W)
            place_in(title, S.TEXT, y=S.HEADLINE_Y)
            full, cached = f["reply_full"], f["reply_cached"]
            bills = ((self.text("bill-full"), full, S.MUTED), (self.text("bill-cached"), cached, S.KEY))
            nums = [label(self.text("flops", flops=N.fmt_int(value)), S.SMALL, S.FLOPS, mono=True) for _, value, _ in bills]
            longest = S.TEXT_W - max(n.width for n in nums) - GAP.s    # the bill without a cache fills the line
            bars = VGroup()
            for (text, value, colour), num in zip(bills, nums):
                bar = Rectangle(width=max(GAP.xxs, longest * value / full), height=0.42, stroke_width=0,
                                fill_color=colour, fill_opacity=0.9)
                name = label(text, S.SMALL, S.INK)
                below(bar, name, buff=GAP.s, aligned=LEFT)
                num.next_to(bar, RIGHT, buff=GAP.s)
                bars.add(VGroup(name, bar, num))
            bars.arrange(DOWN, buff=GAP.l, aligned_edge=LEFT)
            below(bars, title, buff=GAP.l).align_to(S.TEXT.point(LEFT), LEFT)     # flush left under the title
            loop = fit_width(label(self.text("looped"), S.BODY_SIZE, S.LOGIT), S.TEXT_W)
            place_in(loop, S.TEXT, y=S.FOOTER_Y)
            self.play(FadeIn(title), run_time=beat.span(0.3))
            # the cached bill as it is read, then the one without a cache, then the whole machine
            for k, (name, bar, num) in ((1, bars[1]), (0, bars[0])):
                if k == 1:
                    say(self, beat, "reply", FadeIn(name), GrowFromEdge(bar, LEFT), FadeIn(num), into=0.55)
                else:
                    say(self, beat, "without", FadeIn(name), GrowFromEdge(bar, LEFT), FadeIn(num))
            say(self, beat, "looped", FadeIn(loop, shift=UP * GAP.xs), FadeIn(glow(loop, color=S.LOGIT, opacity=0.12)))


SCENES = [Loop, Cache, Square, Scale]
