"""Chapter 06 — the loop, the KV cache and the n² bill.

The meter starts at the one-pass total and adds a full forward pass (no cache) for
every generated step, as the extraction ran them; the cached alternative is shown
beside it, both from data/flops.py.
"""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UL, UP, Create, DashedLine, DashedVMobject, FadeIn, FadeOut,
                   Group, GrowFromEdge, GrowFromPoint, LaggedStart, Line, Rectangle, Transform,
                   TransformFromCopy, VGroup, VMobject)
from manim import Square as Square_

from onepass.data.facts.ch06 import WHOLE_FROM, family_facts, kv_facts, loop_facts, serve_facts
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Pointer, Swell, change, glow, glow_cells, say
from onepass.scenes.layout import GAP, above, below, columns, even_gaps, keep_inside, place_in, table
from onepass.scenes.text import LEGIBLE, fit_lines, fit_width, label
from onepass.scenes.widgets import NumberGrid, TokenChip, token_window
from onepass.words import numbers as N

KV_ROWS = 8            # at most this many rows of the KV cache on screen (the prompt's last ones, then the picks)
KV_COLS = 3            # as chapter 02's grids: each q, k and v row's first numbers, then '…' (NumberGrid's max_cols)
KV_CELL_W = 1.05       # a cell of the q, k and v grids
WEIGHT_CELL_W = 0.95   # a cell of the head's weights (two decimals: a row's budget of one)
KV_CELL_H = 0.5        # at most: a cell's height (lower when more rows must fit)
STACK_STEP = 0.07      # how far each head and layer's block stands out behind the one drawn
STACK_DEPTH = 3        # outlines drawn behind a block for the other heads and layers
STRIP_PROMPT = 5       # prompt tokens shown before the generated ones in the context strip


def at(x: float, y: float) -> np.ndarray:
    """A point of the frame from coordinates worked out from the picture (a plot's axis, a grid's cell)."""
    return np.array([x, y, 0.0])


def top_of(mob) -> float:
    """The height of a mobject's top edge."""
    return mob.get_top()[1]


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
        gen_chips = [TokenChip(s["text"], color=S.LOGIT, size=S.BODY_SIZE, generated=True) for s in steps]
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
                          TokenChip(s["text"], color=S.LOGIT, size=S.SMALL, max_text_width=3.0, generated=True),
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
            # "how does a whole answer come out, and what does it cost?": the answer's empty places after
            # the prompt, and the meter that will price them
            empty = VGroup(*[DashedVMobject(Rectangle(width=slot.width - GAP.s, height=slot.height, color=S.LOGIT,
                                                      stroke_width=2)).move_to(slot) for slot in slots])
            question = fit_lines(self.text("question"), S.BODY_SIZE, S.INK, S.TEXT_W)
            place_in(question, S.CONTENT)
            cost = glow(self.meter, color=S.FLOPS, opacity=0.15)
            say(self, beat, "question", LaggedStart(*[Create(e) for e in empty], lag_ratio=0.3),
                FadeIn(question, shift=UP * GAP.xs), run_time=beat.span(0.5, mark="question"))
            say(self, beat, "question", FadeIn(cost), into=0.6)
            # "here the pass picked <token>, at <p>": the first pass and its pick, then its probability lit
            ptr = Pointer(S.LOGIT, buff=GAP.xs, opacity=0.2)
            say(self, beat, "pick", FadeOut(question), FadeIn(rows[0][:5], shift=UP * GAP.xs),
                ptr.to(rows[0][:5], color=S.INK),
                into=0.2)
            say(self, beat, "pick", ptr.to(rows[0][3:5]), into=0.4)
            if self.bundle.synthetic:     # random weights: that probability is noise
                say(self, beat, "noise", ptr.to(rows[0][4], color=S.WARNING))
            # "the model keeps no memory of it": the pass is over; only the token is carried on
            say(self, beat, "no-memory", ptr.to(rows[0][3]))      # "… only ever predicts the next token"
            say(self, beat, "no-memory", FadeIn(rows[0][5]), rows[0][:3].animate.set_opacity(0.35), into=0.5)
            say(self, beat, "appended", TransformFromCopy(rows[0][3], slots[0]), FadeOut(empty[0]), FadeOut(cost),
                ptr.off())
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
                    TransformFromCopy(row[3], slot), FadeOut(empty[k + 1]), into=0.45 + 0.5 * k / n,
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
    """The KV cache as chapter 02 laid out q, k and v: one head of layer 1, a row per token (the bundle's
    own numbers), the head's weights with the mask's zeros; the cache keeps k and v, a block that gains a
    row per pick fed back; a cached step computes only the new row and reads every kept one."""

    def setup(self):
        super().setup()
        self.kv = kv_facts(self.bundle)

    def counter(self, cache: dict) -> VGroup:
        """The cache's size after one pass (an entry of loop_facts' "cache")."""
        t = label(self.text("cache-counter", count=cache["tokens"], numbers=N.fmt_int(cache["numbers"]),
                            bytes=N.fmt_int(cache["bytes"])), S.SMALL, S.INK, mono=True)
        return place_in(fit_width(t, S.TEXT_W), S.TEXT, y=S.FOOTER_Y)

    def block_title(self, name: str, colour, rows: int) -> VGroup:
        """A grid's name as chapter 02 writes it (q, k, v) and its true shape beside it: rows × d_head."""
        return VGroup(label(name, S.BODY_SIZE, colour),
                      label(f"{N.fmt_int(rows)} × {N.fmt_int(self.kv['d_head'])}", S.SMALL, S.MUTED, mono=True)
                      ).arrange(RIGHT, buff=GAP.s, aligned_edge=DOWN)

    def kv_picture(self) -> dict:
        """q, k and v of the featured head of layer 1 side by side (the prompt's last rows, a token's name
        before each row), the head's weights beside them, and the rows the picks fed back will add
        under k and v (cells without numbers: the bundle keeps the prompt's pass only). Returns the parts
        by name; `self.kv_parts` keeps them for tests."""
        b, f, kv = self.bundle, self.f, self.kv
        picks = [s["text"] for s in f["steps"][:-1]]       # the last pick is not fed back yet
        shown = token_window(b.T, max(1, KV_ROWS - len(picks)))
        n_rows = len(shown) + len(picks) + (1 if len(shown) < b.T else 0)     # a '⋮' row over a window
        if b.shape.kv_heads < b.shape.n_head:     # grouped-query attention: k and v are its key/value head's
            head = fit_lines(self.text("kv-head-gqa", layer=kv["layer"] + 1, head=kv["head"] + 1, n_head=b.shape.n_head,
                                       kv=kv["kv_head"] + 1, n_kv=b.shape.kv_heads), S.SMALL, S.MUTED, S.TEXT_W)
        else:
            head = fit_lines(self.text("kv-head", layer=kv["layer"] + 1, head=kv["head"] + 1,
                                       n_head=b.shape.n_head), S.SMALL, S.MUTED, S.TEXT_W)
        place_in(head, S.TEXT, y=S.HEADLINE_Y)
        titles_y = head.get_bottom()[1] - GAP.m - label("k", S.BODY_SIZE, S.INK).height / 2
        top = titles_y - GAP.l
        floor = S.FOOTER_Y + label("0", S.SMALL, S.INK).height / 2 + GAP.m
        cell_h = min(KV_CELL_H, (top - floor) / n_rows)
        grids = {}
        for name in ("q", "k", "v"):
            grids[name] = NumberGrid(kv[name], max_cols=KV_COLS, rows=shown, cell_w=KV_CELL_W, cell_h=cell_h,
                                     row_labels=b.tokens if name == "q" else None)
        weights = NumberGrid(kv["weights"], rows=shown, cols=shown, cell_w=WEIGHT_CELL_W, cell_h=cell_h,
                             colour=lambda p: S.sequential(p), vmax=1.0)
        order = [grids["q"], grids["k"], grids["v"], weights]
        VGroup(*order).arrange(RIGHT, buff=GAP.m, aligned_edge=UP)
        for g in order:      # the rows on one line whatever each grid's '⋮' and names
            g.shift(UP * (top_of(grids["q"].cell_group) - top_of(g.cell_group)))
        whole = VGroup(*order)
        whole.shift(RIGHT * (S.TEXT.x - whole.get_x()))
        fit_width(whole, S.FULL_W)
        whole.shift(UP * (top - top_of(grids["q"].ellipses if len(shown) < b.T else grids["q"].cell_group)))
        cell_h = grids["q"].cell_group[0].height
        colours = {"q": S.QUERY, "k": S.KEY, "v": S.VALUE}
        titles = {}
        for name, g in grids.items():
            titles[name] = self.block_title(name, colours[name], len(shown) if name == "q" else b.T)
            titles[name].move_to(at(g.cell_group.get_x(), titles_y))
        w_title = fit_lines(self.text("weights-title"), S.SMALL, S.ATTENTION, weights.cell_group.width + GAP.l)
        w_title.move_to(at(weights.cell_group.get_x(), titles_y))
        # the mask's zeros: every weight a row gives a later token (the grid's upper triangle)
        upper_keys = [(r, c) for r in shown for c in shown if c > r]
        upper = VGroup(*[weights.cells[key] for key in upper_keys])
        zero = fit_lines(self.text("on-later", n=N.fmt_int(kv["n_heads"]), weight=N.fmt_general(kv["on_later"])),
                         S.SMALL, S.ATTENTION, weights.width + GAP.xl)
        below(zero, weights, buff=GAP.m)
        keep_inside(zero, S.FULL)
        # the rows each pick fed back adds under k and v, and its name under the prompt's names
        added = []
        last = shown[-1]
        for j, text in enumerate(picks, start=1):       # the j-th row under the prompt's last
            row = {}
            for name in ("k", "v"):
                g = grids[name]
                cells = VGroup(*[g.cells[(last, c)].copy().set_fill(colours[name], opacity=0.4)
                                 for c in g.cols]).shift(DOWN * cell_h * j)
                row[name] = cells
            tag = fit_width(label(S.show_token(text), S.SMALL, S.LOGIT, mono=True, compact=True), 1.8)
            tag.next_to(row["k"], LEFT, buff=GAP.xs).set_x(grids["q"].row_label_mobs[-1].get_x())
            row["name"] = tag
            row["q"] = VGroup(*[grids["q"].cells[(last, c)].copy().set_fill(S.QUERY, opacity=0.4)
                                for c in grids["q"].cols]).shift(DOWN * cell_h * j)
            added.append(row)
        # once the queries and the weights go, the rest moves to the middle (the queries' column kept for the
        # new token's query)
        span = VGroup(grids["q"], grids["k"], grids["v"])
        centre = RIGHT * (S.TEXT.x - span.get_x())
        parts = {"centre": centre, "head": head, "grids": grids, "titles": titles, "weights": weights, "w_title": w_title,
                 "upper": upper, "upper_keys": upper_keys, "zero": zero, "added": added, "shown": shown, "cell_h": cell_h}
        self.kv_parts = parts
        return parts

    def stack(self, mob, colour) -> VGroup:
        """The same block in the other heads and layers: outlines stacked behind it, up and to the right,
        each drawn only where it shows past the block (a whole outline ran over the block's numbers)."""
        left, bottom, right, top = *mob.get_corner(DOWN + LEFT)[:2], *mob.get_corner(UP + RIGHT)[:2]
        out = VGroup()
        for k in range(1, STACK_DEPTH + 1):
            s = STACK_STEP * k
            out.add(VMobject(stroke_width=1.5, stroke_color=colour, stroke_opacity=0.75 - 0.15 * k, fill_opacity=0)
                    .set_points_as_corners([at(left + s, top), at(left + s, top + s), at(right + s, top + s),
                                            at(right + s, bottom + s), at(right, bottom + s)]))
        return out

    def build(self):
        b, f, kv = self.bundle, self.f, self.kv
        sh = f["shape"]
        p = self.kv_picture()
        g, t, weights, added = p["grids"], p["titles"], p["weights"], p["added"]
        prompt_rows = {name: VGroup(g[name].cell_group, g[name].text_group, g[name].ellipses) for name in g}
        names = g["q"].row_label_mobs
        with self.beat("redundant") as beat:
            # "most of that work was repeated": each prompt token's q, k and v rows, as chapter 02 drew them
            self.play(FadeIn(p["head"]), FadeIn(names), *[FadeIn(t[n]) for n in t],
                      LaggedStart(*[FadeIn(prompt_rows[n], shift=RIGHT * GAP.s) for n in ("q", "k", "v")],
                                  lag_ratio=0.3), run_time=beat.span(0.8))
            # "an earlier token never attends to a later one": the head's weights, every later token at 0
            say(self, beat, "never-sees", FadeIn(p["w_title"]), FadeIn(VGroup(weights.cell_group, weights.text_group)))
            # lit in its own shape, along the cells' edges: the diagonal (a token's weight on itself) stays unlit
            lit = glow_cells(weights, p["upper_keys"], color=S.ATTENTION)
            say(self, beat, "never-sees", FadeIn(lit), into=0.45)
            # "so its keys and values": the k and v blocks. The lights over the grids are outlines, no tint: a
            # cell's number takes S.ink_on(its cell) and a 5-8% tint over both took it to 4.0-4.5:1
            kv_rows = VGroup(prompt_rows["k"], prompt_rows["v"])
            say(self, beat, "keys-values", Transform(lit, glow(kv_rows, color=S.KEY, buff=GAP.xs, opacity=0)))
            # "in every layer": the same blocks in every head of every layer, and the mask's zeros in all of them
            # behind the whole block, its '…' included: an edge through the '…' read as a glow through it
            stacks = VGroup(*[self.stack(VGroup(g[n].cell_group, g[n].ellipses), colour)
                              for n, colour in (("k", S.KEY), ("v", S.VALUE))])
            say(self, beat, "every-layer", FadeIn(stacks), FadeIn(p["zero"], shift=UP * GAP.xs),
                Transform(lit, VGroup(glow_cells(weights, p["upper_keys"], color=S.ATTENTION),
                                      glow(p["zero"], color=S.ATTENTION, buff=GAP.xs, opacity=0))))
            # "they come out exactly the same on every later pass"
            same = fit_width(label(self.text("same-later"), S.SMALL, S.INK), S.TEXT_W)
            place_in(same, S.TEXT, y=S.FOOTER_Y)
            say(self, beat, "exactly", FadeIn(same), Transform(lit, glow(kv_rows, color=S.KEY, buff=GAP.xs,
                                                                         opacity=0)))
        with self.beat("cache") as beat:
            # "so they are computed once and kept: the KV cache": the queries and the weights go, k and v stay
            count = self.counter(f["cache"][0])
            frame = glow(VGroup(kv_rows, t["k"], t["v"]), color=S.KEY, buff=GAP.s, opacity=0)
            say(self, beat, "kept", FadeOut(prompt_rows["q"]), FadeOut(t["q"]), FadeOut(p["w_title"]),
                FadeOut(VGroup(weights.cell_group, weights.text_group)), FadeOut(p["zero"]), FadeOut(same),
                FadeOut(stacks), FadeOut(lit), FadeIn(frame))
            # the blocks kept move to the middle; what shows later (the picks' rows, the new query) with them
            moving = VGroup(names, prompt_rows["k"], prompt_rows["v"], t["k"], t["v"], frame)
            later = [prompt_rows["q"], t["q"], stacks, *[m for r in added for m in r.values()]]
            for m in later:
                m.shift(p["centre"])
            say(self, beat, "kept", moving.animate.shift(p["centre"]), FadeIn(count, shift=UP * GAP.xs), into=0.5)
            # "each token leaves one key row and one value row": the last prompt token's two rows
            last = p["shown"][-1]
            # along the rows' own edges (glow_cells): a box grown around them ran through the row above's numbers
            lit = VGroup(*[glow_cells(g[n], [(last, c) for c in g[n].cols], color=S.TOKEN) for n in ("k", "v")],
                         glow(names[-1], color=S.TOKEN, buff=GAP.xxs, opacity=0))
            say(self, beat, "leaves", FadeOut(frame), FadeIn(lit))
            if sh.kv_heads < sh.n_head:
                # "… for every key and value head in every layer": a longer sentence before "layers";
                # the other heads' and layers' blocks come in behind k and v one outline at a time as
                # it is said (one fade at "layers" left the lit row still for 5 s)
                gap = beat.mark("layers")[1] - beat.elapsed
                if gap > 1.0:
                    self.play(LaggedStart(*[FadeIn(VGroup(a, b), shift=(UP + RIGHT) * GAP.xxs)
                                            for a, b in zip(*stacks)], lag_ratio=0.6), run_time=gap)
                say(self, beat, "layers", Swell(stacks, color=S.KEY) if gap > 1.0 else FadeIn(stacks))
            else:
                # "in every layer: L layers of d numbers": the stack behind each block again
                say(self, beat, "layers", FadeIn(stacks))
            if sh.kv_heads < sh.n_head:    # grouped-query attention: key/value heads, and what it saves
                formula = VGroup(*[fit_width(label(t, S.SMALL, S.INK, mono=True), S.TEXT_W) for t in (
                    self.text("per-token-gqa", n_layer=sh.n_layer, kv=sh.kv_heads, dh=sh.d_head,
                              numbers=N.fmt_int(f["per_token"]), bytes=N.fmt_int(f["per_token_bytes"])),
                    self.text("per-token-without", n_layer=sh.n_layer, n_head=sh.n_head, dh=sh.d_head,
                              numbers=N.fmt_int(f["per_token_full"])),
                    self.text("context-full", n=N.fmt_int(sh.n_positions), bytes=N.fmt_short(f["context_bytes"])))]
                                 ).arrange(DOWN, buff=GAP.xs)
                formula[1].set_color(S.MUTED)
                place_in(formula, S.TEXT, y=S.HEADLINE_Y - (formula.height - formula[0].height) / 2)
            else:
                formula = fit_width(label(
                    self.text("per-token", n_layer=sh.n_layer, d=sh.n_embd, numbers=N.fmt_int(f["per_token"]),
                              bytes=N.fmt_int(f["per_token_bytes"])), S.SMALL, S.INK, mono=True), S.TEXT_W)
                place_in(formula, S.TEXT, y=S.HEADLINE_Y)
            if sh.kv_heads < sh.n_head:
                # three lines over the block titles, raised clear of them into the head's line and above it,
                # coming one by one over the sentences up to "rows" (one fade was a 20 s still)
                titles_top = max(t["k"].get_top()[1], t["v"].get_top()[1])
                formula.shift(UP * max(0.0, titles_top + GAP.s - formula.get_bottom()[1]))
                beat.at("per-token")
                rest = max(1.0, beat.mark("rows")[1] - beat.elapsed)
                self.play(FadeOut(p["head"]), FadeIn(formula[0]),
                          Transform(lit, glow(VGroup(formula[0], count), color=S.INK, opacity=0)),
                          run_time=0.15 * rest)
                # the per-token count is those blocks: the light goes from the line over the stacks it counts
                self.play(Transform(lit, glow(VGroup(formula[0], stacks), color=S.INK, opacity=0)),
                          run_time=0.2 * rest)
                self.play(FadeIn(formula[1], shift=UP * GAP.xs), run_time=0.15 * rest)
                self.wait(0.15 * rest)
                self.play(FadeIn(formula[2], shift=UP * GAP.xs),
                          Transform(lit, glow(VGroup(formula, count), color=S.INK, opacity=0)), run_time=0.15 * rest)
                self.play(Swell(formula[2], color=S.TOKEN), run_time=0.1 * rest)
            else:
                say(self, beat, "per-token", FadeOut(p["head"]), FadeIn(formula),
                    Transform(lit, glow(VGroup(formula, count), color=S.INK, opacity=0)))
            # "each step adds one new row, for the new token alone": a row under k and v per pick fed back,
            # the blocks' shapes and the counter growing
            n = max(1, len(added))
            say(self, beat, "rows", FadeOut(stacks), FadeOut(lit))
            for j, r in enumerate(added):
                nxt = self.counter(f["cache"][j + 1])
                grown = {x: self.block_title(x, S.KEY if x == "k" else S.VALUE, kv["rows_after"][j + 1]).move_to(t[x])
                         for x in ("k", "v")}
                say(self, beat, "rows", FadeIn(r["name"], shift=DOWN * GAP.xs),
                    FadeIn(r["k"], shift=DOWN * GAP.xs), FadeIn(r["v"], shift=DOWN * GAP.xs),
                    *[change(t[x], grown[x]) for x in grown], FadeOut(count), FadeIn(nxt),
                    into=0.1 + 0.85 * j / n, run_time=min(1.0, beat.span(0.8 / n, mark="rows")))
                count = nxt
            # "the old rows are never touched again": the prompt's rows, their numbers as they were
            untouched = fit_width(label(self.text("untouched"), S.SMALL, S.KEY), S.TEXT_W)
            place_in(untouched, S.TEXT, y=S.HEADLINE_Y)
            kept = glow(kv_rows, color=S.KEY, buff=GAP.xs, opacity=0)
            say(self, beat, "untouched", FadeOut(formula), FadeIn(untouched), FadeIn(kept))
            said = glow(untouched, color=S.KEY, opacity=0.1)
            say(self, beat, "untouched", FadeIn(said), into=0.5)
        with self.beat("cached_step") as beat:
            # "with the cache, a step computes only the new token's row": its q, k and v, on the last row
            new = added[-1] if added else None
            ptr = Pointer(S.QUERY, buff=GAP.xxs, opacity=0)      # over the grids: an outline (see "keys-values")
            reads = VGroup()
            if new is not None:
                q_row, k_rows = new["q"], VGroup(*[g["k"].row_cells(r) for r in p["shown"]], *[a["k"] for a in added])
                for row in k_rows:        # its query reads every kept key
                    reads.add(Line(q_row.get_right(), row.get_left(), color=S.ATTENTION, stroke_width=2,
                                   stroke_opacity=0.8))
                one = self.block_title("q", S.QUERY, 1).move_to(t["q"])     # the new token's query alone
                say(self, beat, "cached", FadeOut(untouched), FadeOut(said), FadeOut(kept), FadeIn(one),
                    FadeIn(q_row, shift=RIGHT * GAP.s), ptr.to(VGroup(q_row, new["k"], new["v"], new["name"])))
                say(self, beat, "computes-only", LaggedStart(*[Create(x) for x in reads], lag_ratio=0.1),
                    ptr.to(k_rows, color=S.KEY), run_time=min(1.2, beat.span(0.3, mark="computes-only")))
                every_v = VGroup(*[g["v"].row_cells(r) for r in p["shown"]], *[a["v"] for a in added])
                say(self, beat, "computes-only", ptr.to(every_v, color=S.VALUE), into=0.6)
            costs = self.cost_table()
            head, first_row, rest, note = costs[0], costs[1] if len(costs) > 2 else None, costs[2:-1], costs[-1]
            say(self, beat, "drops", self.clear_content(), run_time=min(0.5, beat.span(0.1, mark="drops")))
            self.play(FadeIn(head, shift=UP * GAP.xs), FadeIn(note, shift=UP * GAP.xs),
                      FadeIn(glow(head[0][2], color=S.KEY, opacity=0.2)), run_time=min(0.6, beat.span(0.1)))
            ptr = Pointer(S.FLOPS, opacity=0.18)
            if first_row is not None:
                say(self, beat, "drops", FadeIn(first_row[0]), FadeIn(first_row[1]), ptr.to(first_row[:2]), into=0.2)
                say(self, beat, "drops", FadeIn(first_row[2]), ptr.to(first_row[2], color=S.KEY), into=0.5)
                say(self, beat, "drops", FadeIn(first_row[3]), ptr.to(first_row[3], color=S.INK), into=0.78)
            if len(rest):
                say(self, beat, "grows", LaggedStart(*[FadeIn(r, shift=UP * GAP.xs) for r in rest], lag_ratio=0.3),
                    ptr.to(VGroup(*[r[3] for r in rest]), color=S.INK))

    def cost_table(self) -> VGroup:
        """FLOPs of each generated step as two bars on one scale: recomputing every row (the meter's full
        pass) over the cached step (the new row only), each with its figure at its end, and how many times
        less the cached step costs at the row's far side. Returns the header (its row and rule), one row per
        step ([name, full bar + figure, cached bar + figure, saving]) and the note under them."""
        steps = self.f["steps"][1:]
        head = VGroup(label(self.text("cost-step"), S.SMALL, S.MUTED), label(self.text("cost-full"), S.SMALL, S.MUTED),
                      label(self.text("cost-cached"), S.SMALL, S.KEY), label(self.text("cost-saved"), S.SMALL, S.MUTED))
        names = [fit_lines(self.text("pass-over", count=s["context"]), S.SMALL, S.INK, S.TEXT_W * NAME_SHARE)
                 for s in steps]
        savings = [label(f"× {N.fmt_ratio(s['saving'])}", S.SMALL, S.INK, mono=True) for s in steps]
        figures = [(label(N.fmt_int(s["full"]), S.SMALL, S.FLOPS, mono=True),
                    label(N.fmt_int(s["cached"]), S.SMALL, S.KEY, mono=True)) for s in steps]
        name_w = max([head[0].width] + [m.width for m in names])
        save_w = max([head[3].width] + [m.width for m in savings])
        fig_w = max([m.width for pair in figures for m in pair], default=0.0)
        room = S.TEXT_W - name_w - save_w - fig_w - 2 * GAP.l - GAP.s      # the longest bar's length
        most = max((s["full"] for s in steps), default=1)
        sign = -1.0 if S.RTL else 1.0
        start = (S.TEXT.right - name_w - GAP.l) if S.RTL else (S.TEXT.left + name_w + GAP.l)
        far = S.TEXT.left if S.RTL else S.TEXT.right
        y = S.HEADLINE_Y
        head[0].move_to(at(start - sign * GAP.l, y), aligned_edge=S.END)
        legend = VGroup(head[1], head[2]).arrange(S.END, buff=GAP.xl)
        legend.move_to(at(start, y), aligned_edge=S.START)
        head[3].move_to(at(far, y), aligned_edge=S.END)
        rows, y = [], y - head.height - GAP.l
        for s, name, saving, (full_n, cached_n) in zip(steps, names, savings, figures):
            bars = []
            for k, (value, colour, figure) in enumerate(((s["full"], S.MUTED, full_n), (s["cached"], S.KEY, cached_n))):
                bar = Rectangle(width=max(GAP.xxs, room * value / most), height=COST_BAR_H, stroke_width=0,
                                fill_color=colour, fill_opacity=0.85)
                bar.move_to(at(start, y - k * (COST_BAR_H + GAP.xxs)), aligned_edge=S.START + UP)
                figure.next_to(bar, S.END, buff=GAP.s)
                bars.append(VGroup(bar, figure))
            pair = VGroup(*bars)
            name.move_to(at(start - sign * GAP.l, pair.get_y()), aligned_edge=S.END)
            saving.move_to(at(far, pair.get_y()), aligned_edge=S.END)
            rows.append(VGroup(name, bars[0], bars[1], saving))
            y = pair.get_bottom()[1] - GAP.l
        rule = rule_under(head, rows[0] if rows else None)
        note = fit_width(label(self.text("cost-note"), S.SMALL, S.MUTED), S.TEXT_W)
        below(note, VGroup(*rows) if rows else head, buff=GAP.l)
        note.set_x(S.TEXT.x)
        return VGroup(VGroup(head, rule), *rows, note)


GRID_CELLS = 16       # at most this many cells a side in the prompt's score grid; longer prompts: one square
SPECK = 0.14          # the smallest square drawn: a shorter length's grid inside a longer one's, enlarged
SIDE = 2.6            # the side of each length's square (at most: a third of the content box's width)
NAME_SHARE = 0.26     # of the text width: the prefill/decode plot's bar names (they wrap)
END_ROOM = 2.6        # room after the bars' top tick for the longest bar's value and regime
BAR_H = 0.5          # the height of a bar of the prefill/decode plot
COST_BAR_H = 0.24     # the height of a bar of the cached step's cost picture
PITCH_GAP = 0.4       # between the plot's bars


class Square(LoopChapter):
    """The n² bill drawn as three squares (the prompt, GPT-2's limit, a million tokens), then prefill and
    decode as work per weight fetched against a chip's balance point (onepass.data.facts.ch06.serve_facts)."""

    def setup(self):
        super().setup()
        self.serve = serve_facts(self.bundle)

    def squares(self, side: float = SIDE) -> list[dict]:
        """One panel per length, in reading order: its name and length, its square (the prompt's as T x T
        cells, the causal triangle brighter; a longer length's as one square holding the shorter one's grid,
        to scale or as a speck when that would be too small to see), its pairs and its share bar."""
        f = self.f
        names = {"prompt": self.text("length-prompt"),
                 "limit": self.text("length-limit" if self.bundle.shape.has_position_table else "length-trained"),
                 "long": self.text("length-million")}
        cols = columns(S.CONTENT, len(f["square"]))
        cols = cols[::-1] if S.RTL else cols
        side = min(side, cols[0].width - 2 * GAP.xl)
        panels, before = [], None
        for r, col in zip(f["square"], cols):
            name = fit_lines(names[r["key"]], S.SMALL, S.INK, col.width - GAP.l)
            count = label(self.text("n-tokens", count=r["tokens"], n=N.fmt_int(r["tokens"])), S.SMALL, S.TOKEN)
            head = VGroup(name, count).arrange(DOWN, buff=GAP.xs)
            place_in(head, col, UP)
            sq = Square_(side).set_fill(S.ATTENTION, opacity=0.15)
            below(sq, head, buff=GAP.s)
            inner = VGroup()
            if before is None:         # the prompt: its own grid, cell by cell (the mask's triangle brighter)
                n = min(r["tokens"], GRID_CELLS)
                if r["tokens"] <= GRID_CELLS:
                    c = side / n
                    for i in range(n):
                        for j in range(n):
                            cell = Rectangle(width=c, height=c, stroke_width=1, stroke_color=S.BACKGROUND,
                                             fill_color=S.ATTENTION, fill_opacity=0.8 if j <= i else 0.3)
                            centre = sq.get_corner(UL) + at((j + 0.5) * c, -(i + 0.5) * c)
                            cell.move_to(centre)
                            inner.add(cell)
                else:
                    inner.add(sq.copy().set_fill(S.ATTENTION, opacity=0.5))
            else:                      # a longer length: the shorter one's grid in its corner
                small = max(SPECK, side * before["tokens"] / r["tokens"])
                speck = Square_(small).set_fill(S.TOKEN, opacity=0.9).set_stroke(S.TOKEN, 1)
                speck.move_to(sq.get_corner(UL), aligned_edge=UL)
                tiny = side * before["tokens"] / r["tokens"] < SPECK     # drawn larger than it is, and said so
                n = N.fmt_int(before["tokens"])
                tag = fit_lines(self.text("speck-enlarged", n=n) if tiny else self.text("speck", n=n), S.SMALL, S.TOKEN,
                                side - GAP.m)
                below(tag, speck, buff=GAP.s, aligned=LEFT).shift(RIGHT * GAP.s)
                inner.add(speck, tag)
            pairs = fit_lines(self.text("pairs", count=r["pairs"], n=N.fmt_int(r["pairs"])), S.SMALL, S.ATTENTION, col.width - GAP.l, mono=True)
            below(pairs, sq, buff=GAP.s)
            track = Rectangle(width=side, height=GAP.s, stroke_width=1, stroke_color=S.MUTED, fill_opacity=0)
            below(track, pairs, buff=GAP.s)
            thinnest = GAP.xxs / 2     # a share too small to see still shows as a hairline
            fill = Rectangle(width=max(thinnest, side * r["share"]), height=GAP.s, stroke_width=0,
                             fill_color=S.FLOPS, fill_opacity=0.9).move_to(track, aligned_edge=S.START)
            share = fit_lines(self.text("share-of-pass", flops=N.fmt_human(r["grid_flops"]), share=N.fmt_share(r["share"])),
                              S.SMALL, S.FLOPS,
                              col.width - GAP.l)
            below(share, track, buff=GAP.xs)
            panels.append({"head": head, "square": sq, "inner": inner, "pairs": pairs, "track": track,
                           "fill": fill, "share": share, "col": col, "facts": r})
            before = r
        return panels

    def build(self):
        f, b = self.f, self.bundle
        causal = fit_lines(self.text("mask-allows", counts=",  ".join(N.fmt_int(r["causal"]) for r in f["square"])),
                           S.SMALL, S.MUTED, S.TEXT_W)
        bound = fit_lines(self.text("bound" if b.shape.has_position_table else "bound-rope", n=N.fmt_int(b.shape.n_positions)),
                          S.SMALL, S.MUTED, S.TEXT_W)
        side = SIDE
        while True:       # the squares as large as the notes under them allow (longer words wrap to more lines)
            panels = self.squares(side)
            below(causal, VGroup(*[p["share"] for p in panels]), buff=GAP.s).set_x(S.TEXT.x)
            bound.move_to(causal)
            low = min(causal.get_bottom()[1], bound.get_bottom()[1])
            if low >= S.CAPTION_TOP + GAP.xs or side <= SIDE / 2:
                break
            side -= S.CAPTION_TOP + GAP.xs - low
        first, rest = panels[0], panels[1:]
        self.square_parts = panels          # what tests read of the picture
        with self.beat("square") as beat:
            self.play(FadeIn(first["head"]), Create(first["square"]), run_time=beat.span(0.4))
            # "each new token is scored against every token before it": the prompt's grid, row by row
            say(self, beat, "every-token", LaggedStart(*[FadeIn(c) for c in first["inner"]], lag_ratio=0.02),
                run_time=beat.span(0.7, mark="every-token"))
            lit = glow(first["square"], color=S.TOKEN, buff=GAP.xs, opacity=0.12)
            say(self, beat, "here", FadeIn(lit))
            say(self, beat, "pairs", FadeIn(first["pairs"], shift=UP * GAP.xs),
                Transform(lit, glow(first["pairs"], color=S.ATTENTION, opacity=0.2)))
            # "at GPT-2's limit …; at a million tokens …": each square grows out of the one before
            for p, mark, prev in zip(rest, ("limit", "million"), panels):
                speck = p["inner"][0]
                say(self, beat, mark, FadeIn(p["head"]), TransformFromCopy(prev["square"], speck),
                    FadeOut(lit) if mark == "limit" else Transform(lit, glow(speck, color=S.TOKEN, opacity=0.2)),
                    run_time=min(1.0, beat.span(0.25, mark=mark)))
                say(self, beat, mark, GrowFromPoint(p["square"], p["square"].get_corner(UL)), FadeIn(p["inner"][1:]),
                    into=0.3, run_time=min(1.2, beat.span(0.3, mark=mark)))
                lit = glow(p["pairs"], color=S.ATTENTION, opacity=0.2)
                say(self, beat, mark, FadeIn(p["pairs"], shift=UP * GAP.xs), FadeIn(lit), into=0.6)
            say(self, beat, "million", FadeIn(causal), FadeOut(lit), into=0.95)
        with self.beat("square_share") as beat:
            # each length's share of a pass, as a bar filling under its square
            ptr = Pointer(S.FLOPS, buff=GAP.xs, opacity=0.15)
            say(self, beat, "share", *[FadeIn(p["track"]) for p in panels], FadeIn(first["share"]),
                GrowFromEdge(first["fill"], S.START), ptr.to(VGroup(first["track"], first["share"])))
            # "the weights cost far more": the rest of the prompt's bar, the pass's other work, lit
            say(self, beat, "share", ptr.to(first["track"], color=S.INK), into=0.55)
            for k, p in enumerate(rest):
                say(self, beat, "longer", FadeIn(p["share"]), GrowFromEdge(p["fill"], S.START),
                    ptr.to(VGroup(p["track"], p["share"])), into=0.5 * k)
            say(self, beat, "long-contexts", FadeOut(causal), FadeIn(bound),
                # the pairs' counts too: wider than their squares, they lay across the pointer's sides
                ptr.to(VGroup(*[VGroup(p["square"], p["pairs"], p["fill"]) for p in rest]), color=S.ATTENTION))
            if self.bundle.shape.has_position_table:
                say(self, beat, "long-contexts", ptr.to(bound, color=S.MUTED), into=0.55)
            else:    # a longer sentence (no table to run out of, quality past the trained length): the
                # growing squares swell as it is said, then the trained length's note (two 5 s stills before)
                say(self, beat, "long-contexts", *[Swell(VGroup(p["square"], p["fill"]), color=S.ATTENTION,
                                                         scale_factor=1.05) for p in rest], into=0.2)
                say(self, beat, "long-contexts", ptr.to(bound, color=S.MUTED), into=0.55)
                say(self, beat, "long-contexts", Swell(bound, color=S.MUTED), into=0.8)
        self.serving()

    def plot(self) -> dict:
        """FLOPs per weight fetched, on a log scale, as bars from the reader's side: one decode step, this
        prompt's prefill and a long prompt's, each named at its start and with its value and regime in words
        at its end, against the chip's balance point (a dashed line across the bars, named over them with the
        crossover under its name). Right to left, the bars grow from the right."""
        sv = self.serve
        ticks = sv["ticks"]
        top = np.log10(ticks[-1])
        title = fit_lines(self.text("plot-title"), S.BODY_SIZE, S.INK, S.TEXT_W)
        place_in(title, S.TEXT, y=S.HEADLINE_Y)
        names = {"decode": self.text("bar-decode"),
                 "prompt": self.text("bar-prompt", count=sv["prompt"]["tokens"], n=N.fmt_int(sv["prompt"]["tokens"])),
                 "long": self.text("bar-long", count=sv["long"]["tokens"], n=N.fmt_int(sv["long"]["tokens"]))}
        colours = {"decode": S.LOGIT, "prompt": S.KEY, "long": S.KEY}
        name_w = S.TEXT_W * NAME_SHARE
        # the bars' room, 1 to the top tick: as wide as leaves each bar's value and regime one line after it
        room = S.TEXT_W - name_w - GAP.l
        width = room - END_ROOM
        for bar in sv["bars"]:
            v, reach = bar["per_weight"], max(0.0, np.log10(bar["per_weight"])) / top
            after = (label(N.fmt_ratio(v) if v < WHOLE_FROM else N.fmt_whole(v), S.SMALL, S.INK, mono=True).width
                     + label(self.text("bound-compute") if bar["bound"] == "compute" else self.text("bound-memory"),
                             S.SMALL, S.INK).width + 2 * GAP.s)
            if reach > 0:
                width = min(width, (room - after) / reach)
        width = max(width, room / 2)         # never under half the room: a longer regime wraps instead
        # nor so narrow that two tick values touch (a decade is width / top long; "10.000" beside "100.000")
        sizes = [label(N.fmt_int(t), S.SMALL, S.MUTED, mono=True).width for t in ticks]
        width = max(width, top * max(((a + b) / 2 + GAP.s for a, b in zip(sizes, sizes[1:])), default=0.0))
        sign = -1.0 if S.RTL else 1.0
        start = (S.TEXT.right - name_w - GAP.l) if S.RTL else (S.TEXT.left + name_w + GAP.l)

        def x_of(v):
            return start + sign * width * max(0.0, np.log10(v)) / top

        chip = fit_lines(self.text("balance", chip=self.text("chip"), ratio=N.fmt_whole(sv["balance"])), S.SMALL,
                         S.FLOPS, S.TEXT_W / 2)
        cross = fit_lines(self.text("crossover", n=N.fmt_int(sv["crossover"])), S.SMALL, S.FLOPS, S.TEXT_W / 2)
        below(chip, title, buff=GAP.m)
        below(cross, chip, buff=GAP.xs)
        line_x = x_of(sv["balance"])
        for m in (chip, cross):
            m.set_x(line_x)
            keep_inside(m, S.TEXT)
        rows, y = {}, cross.get_bottom()[1] - GAP.l
        for bar in sv["bars"]:
            name = fit_lines(names[bar["key"]], S.SMALL, colours[bar["key"]], name_w)
            h = max(GAP.m, name.height)
            w = max(GAP.xxs, abs(x_of(bar["per_weight"]) - start))
            rect = Rectangle(width=w, height=BAR_H, stroke_width=0, fill_color=colours[bar["key"]], fill_opacity=0.85)
            mid = y - h / 2          # the row's middle line
            rect.move_to(at(start, mid), aligned_edge=S.START)
            name.move_to(at(start - sign * GAP.l, mid), aligned_edge=S.END)
            v = bar["per_weight"]
            value = label(N.fmt_ratio(v) if v < WHOLE_FROM else N.fmt_whole(v), S.SMALL, S.INK, mono=True)
            value.next_to(rect, S.END, buff=GAP.s)
            regime = self.text("bound-compute") if bar["bound"] == "compute" else self.text("bound-memory")
            room = S.TEXT.right - value.get_right()[0] if not S.RTL else value.get_left()[0] - S.TEXT.left
            tag = fit_lines(regime, S.SMALL, S.INK, max(room - GAP.s, END_ROOM - value.width - GAP.s))
            tag.next_to(value, S.END, buff=GAP.s)
            if (tag.get_right()[0] > S.TEXT.right + GAP.xs) or (tag.get_left()[0] < S.TEXT.left - GAP.xs):
                below(tag, value, buff=GAP.xxs, aligned=S.START)      # no room after the value: under it
            rows[bar["key"]] = {"rect": rect, "value": value, "tag": tag, "name": name, "facts": bar}
            y -= h + PITCH_GAP
        axis_y = y + PITCH_GAP - GAP.s
        axis = Line(at(start, axis_y), at(x_of(ticks[-1]), axis_y), color=S.MUTED, stroke_width=1.5)
        tick_labels = VGroup()
        top_y = cross.get_bottom()[1] - GAP.s
        for t in ticks:
            x = x_of(t)
            m = label(N.fmt_int(t), S.SMALL, S.MUTED, mono=True)
            # GAP.s under the axis: a pointer's outline around a bar and the balance line (GAP.xs out) clears them
            below(m, Line(at(x, axis_y), at(x, axis_y)), buff=GAP.s).set_x(x)
            tick_labels.add(VGroup(m, Line(at(x, axis_y), at(x, top_y), color=S.MUTED, stroke_width=0.5,
                                           stroke_opacity=0.4)))
        line = DashedLine(at(line_x, top_y), at(line_x, axis_y), color=S.FLOPS, stroke_width=3)
        # where the balance comes from: the chip's published peak and bandwidth, two bytes a weight
        how = fit_lines(self.text("balance-how", chip=self.text("chip"), peak=N.fmt_ratio(sv["peak_tflops"]),
                                  bandwidth=N.fmt_fixed(sv["bandwidth_tb"], 2), bytes=sv["bytes_per_weight"],
                                  ratio=N.fmt_whole(sv["balance"])), S.SMALL, S.MUTED, S.TEXT_W)
        place_in(how, S.TEXT, DOWN, buff=GAP.xs)      # on the footer line, above the captions
        return {"title": title, "axis": axis, "ticks": tick_labels, "bars": rows, "line": line, "chip": chip,
                "cross": cross, "how": how}

    def serving(self):
        sv = self.serve
        p = self.plot()
        self.plot_parts = p          # what tests read of the picture (its bars, their regimes, the line)
        bars = p["bars"]
        with self.beat("prefill") as beat:
            # "serving splits the loop in two": the plot's frame and its two kinds of bar named
            self.play(self.clear_content(), run_time=beat.span(0.3))
            say(self, beat, "two", FadeIn(p["title"]), Create(p["axis"]), FadeIn(p["ticks"]),
                FadeIn(bars["decode"]["name"]), FadeIn(bars["prompt"]["name"]), into=0.2)
            # "prefill … each weight used for all T tokens": this prompt's bar and its value
            pr = bars["prompt"]
            ptr = Pointer(S.KEY, buff=GAP.xs, opacity=0.15)
            say(self, beat, "prefill", GrowFromEdge(pr["rect"], S.START), FadeIn(pr["value"]), ptr.to(pr["name"]),
                run_time=min(1.2, beat.span(0.3, mark="prefill")))
            say(self, beat, "prefill", ptr.to(p["ticks"], color=S.MUTED), into=0.4)
            say(self, beat, "prefill", ptr.to(VGroup(pr["rect"], pr["value"])), into=0.75)
            # "a chip like … can do about … FLOPs in the time it fetches one weight": the balance line
            say(self, beat, "balance", Create(p["line"]), ptr.to(p["line"], color=S.FLOPS))
            say(self, beat, "balance", FadeIn(p["chip"]), FadeIn(p["how"]), ptr.to(VGroup(p["chip"], p["how"]),
                                                                                 color=S.FLOPS), into=0.45)
            # "so this prefill is memory-bound (or compute-bound)": the bar's regime over it, against the line
            say(self, beat, "bound", FadeIn(pr["tag"], shift=UP * GAP.xs), ptr.to(VGroup(pr["tag"], pr["rect"])))
            say(self, beat, "bound", ptr.to(VGroup(pr["rect"], p["line"])), into=0.5)
        with self.beat("long") as beat:
            lo = bars["long"]
            say(self, beat, "long", FadeIn(lo["name"]), ptr.to(lo["name"]))
            say(self, beat, "long", GrowFromEdge(lo["rect"], S.START), FadeIn(lo["value"]),
                ptr.to(VGroup(lo["rect"], lo["value"])), into=0.3, run_time=min(1.2, beat.span(0.3, mark="long")))
            say(self, beat, "long", FadeIn(lo["tag"], shift=UP * GAP.xs), ptr.to(VGroup(lo["tag"], lo["rect"])),
                into=0.7)
            say(self, beat, "crossover", FadeIn(p["cross"], shift=UP * GAP.xs), ptr.to(p["cross"], color=S.FLOPS))
            say(self, beat, "crossover", ptr.to(VGroup(lo["rect"], p["line"]), color=S.FLOPS), into=0.5)
        with self.beat("decode") as beat:
            de = bars["decode"]
            say(self, beat, "decode", GrowFromEdge(de["rect"], S.START), FadeIn(de["value"]),
                ptr.to(VGroup(de["rect"], de["value"], de["name"]), color=S.LOGIT))
            say(self, beat, "decode", ptr.to(VGroup(de["rect"], p["line"]), color=S.LOGIT), into=0.5)
            say(self, beat, "memory", FadeIn(de["tag"], shift=UP * GAP.xs), ptr.to(de["tag"], color=S.LOGIT))
            say(self, beat, "memory", ptr.to(VGroup(de["tag"], pr["tag"]), color=S.LOGIT), into=0.5)
            # "a long prompt's prefill is the pause before an answer starts": the long bar lit; then the picks
            # arriving one by one
            say(self, beat, "pause", ptr.to(VGroup(lo["rect"], lo["value"]), color=S.KEY))
            say(self, beat, "pause", ptr.to(VGroup(lo["rect"], lo["name"]), color=S.KEY), into=0.5)
            stream = VGroup(*[TokenChip(s["text"], color=S.LOGIT, size=S.SMALL, generated=True) for s in self.f["steps"]])
            stream.arrange(S.END, buff=GAP.xs)
            fit_width(stream, S.TEXT_W / 2)
            place_in(stream, S.TEXT, y=S.FOOTER_Y)
            keep_inside(stream, S.FULL)
            if stream.get_top()[1] > p["ticks"].get_bottom()[1] - GAP.xs:
                # a taller plot (longer words wrap) leaves no room under its ticks: the picks arrive on
                # decode's own row instead, after its regime
                # (a longer tag, Spanish: in rows as wide as the room between the tag and the frame's edge)
                room = abs(S.FULL.point(S.END)[0] - de["tag"].get_edge_center(S.END)[0]) - GAP.l
                per_row = max(1, int((room + GAP.xs) // (max(c.width for c in stream) + GAP.xs)))
                if per_row < len(stream):
                    stream.arrange_in_grid(cols=per_row, buff=GAP.xs, flow_order="rd" if S.END[0] > 0 else "ld")
                stream.next_to(de["tag"], S.END, buff=GAP.l, aligned_edge=UP)
            p["stream"] = stream
            say(self, beat, "streams", FadeOut(p["how"]),
                LaggedStart(*[FadeIn(c, shift=S.START * GAP.s) for c in stream], lag_ratio=0.5),
                ptr.to(VGroup(de["rect"], de["name"]), color=S.LOGIT), run_time=beat.span(0.8, mark="streams"))


NAME_W = 2.4          # the scale table's model names: wider ones ("a GPT-2-shaped model") wrap


class Scale(LoopChapter):
    """Where this model sits: the GPT-2 family priced by the same ledger (onepass.data.facts.ch06's
    family_facts), this model's row lit; GPT-3 as this model's block printed bigger, its bill a square to
    the same scale; then a 100-token reply for this model."""

    def family_table(self, below: float) -> tuple[VGroup, VGroup, list[dict]]:
        """One row per model, smallest first, GPT-3 last: layers, heads, width, parameters, the next
        token's FLOPs with a KV cache and the numbers its cache keeps per token. Returns the rows (the
        header first), the rule under the header and the facts of each row. GPT-3's row is built but not
        shown (the gpt3 beat draws GPT-3 as a picture; tests/test_ch05_ch06.py still reads its figures)."""
        facts = family_facts(self.bundle)
        head = [self.text("col-model"), self.text("row-layers"), self.text("row-heads"), self.text("row-width"),
                self.text("row-params"), self.text("col-token-flops", n=self.f["decode_context"]), self.text("col-kv")]
        names, body = [], []
        for r in facts:
            colour = S.LOGIT if r["key"] == "gpt3" else (S.TOKEN if r["ours"] else S.INK)
            name = self.text("model-gpt3") if r["key"] == "gpt3" else self.words.model_name(
                r.get("model") if r["key"] == "other" else r["key"])
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

    def bill_bars(self, header, rows, facts) -> VGroup:
        """A thin bar under each row's FLOPs per token, as long as its share of the largest (that one spans
        the column: the header and the numbers), from the column's reading start."""
        column = VGroup(header, *[r[5] for r in rows])
        most = max(r["token_flops"] for r in facts)
        bars = VGroup()
        for r, fact in zip(rows, facts):
            bar = Rectangle(width=max(GAP.xxs, column.width * fact["token_flops"] / most), height=GAP.xs / 2,
                            stroke_width=0, fill_color=S.FLOPS, fill_opacity=0.9)
            below(bar, r[5], buff=GAP.xxs)
            bar.align_to(column, S.START)
            bars.add(bar)
        self.bill_parts = bars          # what tests read of the picture
        return bars

    def blueprint(self, facts, ratio) -> dict:
        """The gpt3 beat's picture, from the same ledger rows as the table (family_facts): on the reading
        start, this model and GPT-3 as blocks drawn to one scale, each as tall as its layers and as wide
        as its width (d_model), names over them, their figures under them; on the other side each one's
        FLOPs for the next token as a square's area to one scale, this model's in the corner of GPT-3's.
        Returns the parts by name (kept as self.gpt3_parts for the tests)."""
        ours, g3 = next(r for r in facts if r["ours"]), facts[-1]
        start, end = columns(S.TEXT, 2)
        if S.RTL:
            start, end = end, start
        floor = ratio.get_top()[1] + GAP.m             # everything above the ratio's line
        names = {"ours": (self.words.model_name(ours.get("model") if ours["key"] == "other" else ours["key"]), S.TOKEN),
                 "g3": (self.text("model-gpt3"), S.LOGIT)}
        dims = {k: VGroup(*[label(self.text(msg, n=N.fmt_int(r[key])), S.SMALL, colour)
                            for msg, key in (("block-layers", "layers"), ("block-width", "width"))]
                          ).arrange(DOWN, buff=GAP.xs)
                for k, r, colour in (("ours", ours, S.TOKEN), ("g3", g3, S.LOGIT))}
        for d in dims.values():
            for m in d:
                m.align_to(d, S.START)
        name_mobs = {k: fit_lines(t, S.SMALL, c, NAME_W) for k, (t, c) in names.items()}    # long names wrap
        # one scale for both: GPT-3 (the taller, wider) fills what its labels leave of the column
        room_h = S.HEADLINE_Y - floor - max(m.height for m in name_mobs.values()) - GAP.s \
            - max(d.height for d in dims.values()) - GAP.s
        ours_w0 = max(name_mobs["ours"].width, dims["ours"].width)
        room_w = start.width - ours_w0 - GAP.l * 2     # a gap to the next model, one to the bills
        most_l = max(ours["layers"], g3["layers"])
        most_w = max(ours["width"], g3["width"])
        per_layer, per_width = room_h / most_l, room_w / most_w
        blocks = {}
        for k, r, colour in (("ours", ours, S.TOKEN), ("g3", g3, S.LOGIT)):
            blocks[k] = Rectangle(width=max(GAP.xxs, r["width"] * per_width), height=max(GAP.xxs, r["layers"] * per_layer),
                                  stroke_color=colour, stroke_width=2, fill_color=colour, fill_opacity=0.25)
        base = floor + max(d.height for d in dims.values()) + GAP.s     # the blocks stand on one line
        parts = {}
        x = start.point(S.START)[0]
        for k in ("ours", "g3"):
            block = blocks[k]
            block.move_to(at(x, base), aligned_edge=DOWN + S.START)
            above(name_mobs[k], block, buff=GAP.s, aligned=S.START)
            below(dims[k], block, buff=GAP.s, aligned=S.START)
            parts[k + "_block"], parts[k + "_name"], parts[k + "_dims"] = block, name_mobs[k], dims[k]
            parts[k] = VGroup(block, name_mobs[k], dims[k])
            x = x + S.END[0] * (max(block.width, name_mobs[k].width, dims[k].width) + GAP.l)
        # the bills: GPT-3's square fills the other column under its header; this model's, to the same
        # scale (side by the square root of its share), in its corner
        head = fit_width(label(self.text("col-token-flops", n=self.f["decode_context"]), S.SMALL, S.MUTED), end.width)
        side = min(end.width - GAP.l, S.HEADLINE_Y - head.height - GAP.s - floor)
        g3_bill = Rectangle(width=side, height=side, stroke_color=S.FLOPS, stroke_width=2,
                            fill_color=S.FLOPS, fill_opacity=0.2)
        place_in(g3_bill, end, aligned=DOWN + S.END, y=floor)     # flush with the far edge, on the floor
        above(head, g3_bill, buff=GAP.s, aligned=S.START)
        small = max(GAP.xxs, side * float(np.sqrt(ours["token_flops"] / g3["token_flops"])))
        ours_bill = Rectangle(width=small, height=small, stroke_width=0, fill_color=S.TOKEN, fill_opacity=0.95)
        ours_bill.move_to(g3_bill.get_corner(DOWN + S.START), aligned_edge=DOWN + S.START)
        g3_price = VGroup(*[label(t, S.SMALL, c) for t, c in (
            (names["g3"][0], S.LOGIT), (self.text("flops", flops=N.fmt_short(g3["token_flops"])), S.FLOPS))]
                          ).arrange(DOWN, buff=GAP.xs)
        g3_price.move_to(g3_bill)
        inside = side - small - GAP.s * 2         # what GPT-3's square leaves beside this model's
        ours_price = VGroup(fit_lines(names["ours"][0], S.SMALL, S.TOKEN, inside),
                            fit_width(label(self.text("flops", flops=N.fmt_short(ours["token_flops"])), S.SMALL, S.TOKEN),
                                      inside)).arrange(DOWN, buff=GAP.xxs)
        for m in ours_price:
            m.align_to(ours_price, S.START)
        ours_price.next_to(ours_bill, S.END + UP, buff=GAP.s)
        parts.update(bill_head=head, g3_bill=g3_bill, ours_bill=ours_bill, g3_price=g3_price, ours_price=ours_price,
                     scale={"per_layer": per_layer, "per_width": per_width, "side": side})
        self.gpt3_parts = parts
        return parts

    def build(self):
        f = self.f
        ratio = fit_width(label(self.text("gpt3-ratio" if self.bundle.arch == "gpt2" else "gpt3-ratio-other",
                                          ratio=N.fmt_whole(f["gpt3_ratio"])), S.BODY_SIZE, S.FLOPS),
                          S.TEXT_W)
        rows, rule, facts = self.family_table(below=GAP.l)
        head, body = rows[0], rows[1:]
        ours = body[next(k for k, r in enumerate(facts) if r["ours"])]
        family = body[:-1]         # GPT-3's row stays off screen
        place_in(ratio, S.TEXT, y=S.FOOTER_Y)          # the gpt3 beat's last line, on the footer
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
            # "the ledger prices each one the same way": each row's price lit in turn (for a model outside
            # GPT-2's family, whose table holds its own row; GPT-2's film keeps its frames)
            if self.bundle.shape.kv_heads < self.bundle.shape.n_head:
                say(self, beat, "sizes", LaggedStart(*[Swell(r[5], color=S.FLOPS) for r in family], lag_ratio=0.5),
                    into=0.6, share=0.9)
            # "each new token uses every weight once, two FLOPs a weight": the parameters, then the FLOPs
            # column the ledger fills for every row
            say(self, beat, "rule", ptr.to(VGroup(head[4], *[r[4] for r in family]), color=S.INK))
            # "so the bill grows with the size": under each model's price a bar, the family's largest the
            # column's width (the ledger's figures, to scale)
            bills = self.bill_bars(head[5], family, [r for r in facts if r["key"] != "gpt3"])
            say(self, beat, "rule", ptr.to(VGroup(head[5], *[r[5] for r in family]), color=S.FLOPS),
                LaggedStart(*[GrowFromEdge(bar, S.START) for bar in bills], lag_ratio=0.2), into=0.5)
            # "this film's model is …": its row lit, then its parameters and its FLOPs per token
            say(self, beat, "ours", ptr.to(ours, color=S.TOKEN))
            if self.bundle.shape.kv_heads < self.bundle.shape.n_head:
                # "… parameters, … FLOPs, and a cache of … numbers per token, fewer (more) than GPT-2 small's,
                # because it keeps … key and value heads": the three columns in turn, then GPT-2 small's cache
                small = next(i for i, r in enumerate(facts) if r["key"] == "gpt2")
                for k, into in ((4, 0.2), (5, 0.4), (6, 0.6)):
                    say(self, beat, "ours", ptr.to(VGroup(head[k], ours[k])), into=into)
                say(self, beat, "ours", ptr.to(VGroup(ours[6], family[small][6]), color=S.KEY), into=0.75)
                say(self, beat, "ours", Swell(ours[6], color=S.KEY), Swell(family[small][6], color=S.KEY), into=0.9)
            else:
                for k, into in ((4, 0.35), (5, 0.7)):
                    say(self, beat, "ours", ptr.to(VGroup(head[k], ours[k])), into=into)
        with self.beat("gpt3") as beat:
            # "print the same blueprint bigger": the table goes; this model's block (its layers by its width)
            bp = self.blueprint(facts, ratio)
            self.play(self.clear_content(), run_time=beat.span(0.2))
            self.play(FadeIn(bp["ours"]), run_time=beat.span(0.3))
            ptr = Pointer(S.TOKEN, buff=GAP.xs, opacity=0.12)
            self.play(ptr.to(bp["ours"]), run_time=beat.span(0.3))
            # "GPT-3 is the same diagram, only taller and wider": the same block printed at GPT-3's shape
            say(self, beat, "gpt3", TransformFromCopy(bp["ours_block"], bp["g3_block"]), ptr.to(bp["g3"], color=S.LOGIT),
                run_time=min(1.2, beat.span(0.4, mark="gpt3")))
            say(self, beat, "gpt3", FadeIn(bp["g3_name"]), FadeIn(bp["g3_dims"]), into=0.4)
            # "… and every other layer uses a banded, sparse attention": every other floor of GPT-3's
            # block lit, bottom up
            blk, n3 = bp["g3_block"], facts[-1]["layers"]
            floor_h = blk.height / n3
            sparse = VGroup(*[Rectangle(width=blk.width, height=floor_h, stroke_width=0, fill_color=S.ATTENTION,
                                        fill_opacity=0.6).move_to(blk.get_corner(DOWN + LEFT) + UP * floor_h * k,
                                                                       aligned_edge=DOWN + LEFT)
                              for k in range(1, n3, 2)])
            say(self, beat, "gpt3", LaggedStart(*[FadeIn(m) for m in sparse], lag_ratio=0.1), into=0.6,
                run_time=beat.span(0.8))
            # "the same ledger prices its next token at … against … for <this model>": each bill as a
            # square's area, this model's in GPT-3's corner
            say(self, beat, "prices", FadeIn(bp["bill_head"]), GrowFromEdge(bp["g3_bill"], DOWN),
                ptr.to(bp["g3_bill"], color=S.LOGIT), FadeOut(sparse), run_time=min(1.0, beat.span(0.3)))
            # "… counting every layer as dense": the floors lit back to one fill
            say(self, beat, "prices", FadeIn(bp["g3_price"]), ptr.to(bp["g3_price"], color=S.LOGIT), into=0.2,
                run_time=beat.span(0.5))
            say(self, beat, "prices", FadeIn(bp["ours_bill"]), FadeIn(bp["ours_price"]),
                ptr.to(VGroup(bp["ours_bill"], bp["ours_price"]), color=S.TOKEN), into=0.6)
            # as the sentence ends, the ratio of the two prices comes in; "that is … times the bill" lights it
            # (brought in only at its last words, it was gone 1.2 s later, too soon to be read)
            say(self, beat, "prices", FadeIn(ratio, shift=UP * GAP.xs), ptr.to(bp["g3_bill"], color=S.FLOPS), into=0.9)
            say(self, beat, "times-bill", ptr.to(ratio, color=S.FLOPS))
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
                below(bar, name, buff=GAP.s, aligned=S.START)
                num.next_to(bar, S.END, buff=GAP.s)
                bars.add(VGroup(name, bar, num))
            # flush with the reading start under the title (right to left: from the right)
            bars.arrange(DOWN, buff=GAP.l, aligned_edge=S.START)
            self.reply_parts = bars          # what tests read of the picture
            below(bars, title, buff=GAP.l).align_to(S.TEXT.point(S.START), S.START)
            loop = fit_width(label(self.text("looped"), S.BODY_SIZE, S.LOGIT), S.TEXT_W)
            place_in(loop, S.TEXT, y=S.FOOTER_Y)
            self.play(FadeIn(title), run_time=beat.span(0.3))
            # the cached bill as it is read, then the one without a cache, then the whole machine
            for k, (name, bar, num) in ((1, bars[1]), (0, bars[0])):
                if k == 1:
                    say(self, beat, "reply", FadeIn(name), GrowFromEdge(bar, S.START), FadeIn(num), into=0.55)
                else:
                    say(self, beat, "without", FadeIn(name), GrowFromEdge(bar, S.START), FadeIn(num))
            say(self, beat, "looped", FadeIn(loop, shift=UP * GAP.xs), FadeIn(glow(loop, color=S.LOGIT, opacity=0.12)))


SCENES = [Loop, Cache, Square, Scale]
