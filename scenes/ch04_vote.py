"""Chapter 04 — the vote: the last row, the tied unembedding, softmax over the vocabulary,
temperature, top-k, top-p, greedy vs sampled, and the pick appended to the prompt.

The vocabulary (50,257 entries for GPT-2) is never drawn as separate mobjects: the
whole distribution is one path (its cumulative mass over log-spaced ranks).
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    Create,
    DashedLine,
    DashedVMobject,
    Dot,
    FadeIn,
    FadeOut,
    FadeTransform,
    LaggedStart,
    Line,
    Polygon,
    Rotate,
    Rectangle,
    SurroundingRectangle,
    Triangle,
    VGroup,
    VMobject,
    Wait,
    there_and_back,
)

from onepass.data.facts.ch04 import TOP_K, TOP_P, vote_facts
from onepass.scenes import follow
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Swell, change
from onepass.scenes.pictures_ch04 import AgreementStrips, DieBar, Die, EntropyScale, GreedyRun
from onepass.scenes.layout import GAP, below, flow, keep_inside, place_in, place_row, table
from onepass.scenes.text import LEGIBLE, fit_lines, fit_width, label
from onepass.scenes.widgets import NumberGrid, ProbBars, TokenChip, token_window
from onepass.words import numbers as N


def lines_within(texts: list[tuple[str, int, object]], width: float, buff: float = GAP.xs, **kw) -> VGroup:
    """(text, size, colour) lines flush left, fit to `width`: shrunk together as fit_width does while
    that stays legible, otherwise each line wrapped on its own (onepass.scenes.text.fit_lines)."""
    g = VGroup(*[label(t, size, colour, **kw) for t, size, colour in texts]).arrange(DOWN, buff=buff, aligned_edge=S.START)
    if g.width > width and min(m.font_size for m in g) * width / g.width < LEGIBLE * S.SMALL:
        g = VGroup(*[fit_lines(t, size, colour, width, **kw) for t, size, colour in texts]).arrange(
            DOWN, buff=buff, aligned_edge=S.START)
    return fit_width(g, width)


def under_lead(mob, lead: Line, floor: float, pad: float = GAP.xs) -> None:
    """Move mob down (never up, never below `floor`) until the straight line `lead` passes above it: the
    lowest the line gets over mob's width, less a pad."""
    (ax, ay, _), (bx, by, _) = lead.get_start(), lead.get_end()
    left, right = max(mob.get_left()[0] - pad, min(ax, bx)), min(mob.get_right()[0] + pad, max(ax, bx))
    if left > right or abs(bx - ax) < 1e-9:
        return
    low = min(ay + (by - ay) * (x - ax) / (bx - ax) for x in (left, right))
    bottom, top = mob.get_bottom()[1], mob.get_top()[1]
    drop = min(top - (low - pad), bottom - floor)
    if bottom - pad < max(ay, by) and top + pad > low and drop > 0:
        mob.shift(DOWN * drop)


class VoteScene(ChapterScene):
    chapter = "04"

    def setup(self):
        super().setup()
        self.d, self.V = self.bundle.shape.n_embd, self.bundle.shape.vocab
        self.facts = vote_facts(self.bundle)

    def meter_opening(self):
        return self.ledger.total, ""      # scenes after the unembedding: the meter shows the whole pass


# the thing a sentence names, lit up (scenes/follow.py), a little tighter around this chapter's cells
glow = partial(follow.glow, buff=GAP.xxs)


def top_bars(facts: dict, **kw) -> ProbBars:
    top = facts["top"]
    return ProbBars([c["text"] for c in top], [c["prob"] for c in top], [c["rank"] for c in top], **kw)


def extra_row(bars: ProbBars, cand: dict, colour=S.TOKEN) -> VGroup:
    """A candidate below the bars ('⋮' then its row), drawn on the bars' scale and columns."""
    first = bars.rows[0]
    scale = first.bar.width / max(bars.probs[0], 1e-12)
    dots = below(label("⋮", S.SMALL, S.MUTED), bars.rows[-1].name, buff=GAP.xs, aligned=LEFT)
    dots.shift(RIGHT * GAP.xs)
    rank = label("#" + N.fmt_int(cand['rank']), S.SMALL, colour, mono=True)
    name = fit_width(label(S.clip_token(cand["text"]), S.SMALL, colour, mono=True), 1.9)
    bar = Rectangle(width=max(scale * cand["prob"], 0.02), height=first.bar.height, stroke_width=0,
                    fill_color=colour, fill_opacity=0.9)
    # the bars' decimals, unless they would round this far-down share to nothing ('0.0%' while the
    # voice says 'less than 0.0001 percent'): then the share in the digits it needs
    shown = N.fmt_prob(cand["prob"], bars.decimals)
    if bars.decimals is not None and 0 < cand["prob"] and round(100 * cand["prob"], bars.decimals) == 0:
        shown = N.fmt_prob(cand["prob"])
    pct = label(shown, S.SMALL, colour, mono=True)
    # the bars' own columns: rank flush right, name and bar flush left, percentage flush right
    xs = [first.rank.get_right()[0], first.name.get_left()[0], first.bar.get_left()[0], bars.pct_x()]
    row = place_row([rank, name, bar, pct], xs, "RLLR", dots.get_bottom()[1] - GAP.m)
    return VGroup(dots, row)


def flow_chips(texts, ids, earlier, max_width: float = S.TEXT_W, buff: float = GAP.s, max_lines: int = 4) -> VGroup:
    """Token chips flowed like text, lines left-aligned. A prompt too long for `max_lines` shows
    its last tokens after a note saying how many earlier ones are not drawn (chips never shrink);
    `earlier(n)` is the scene's words for that note."""
    all_chips = [TokenChip(t, i) for t, i in zip(texts, ids)]
    skip = 0
    while True:
        chips = all_chips[skip:]
        head = [label(earlier(skip), S.SMALL, S.MUTED)] if skip else []
        lines = flow(head + chips, max_width, buff, GAP.m)
        if len(lines) <= max_lines or len(chips) <= 1:
            break
        skip += max(1, len(lines[0]) - len(head))
    if head and chips:
        head[0].match_y(chips[0].box)
    lines.chips = chips
    lines.head = VGroup(*head)
    return lines


# ---------------------------------------------------------------------------
class LastRow(VoteScene):
    """Only the last row goes on; it meets the tied embedding table: V scores."""
    show_title = True

    def meter_opening(self):
        return self.ledger.before("unembed"), ""     # this scene pays for the unembedding

    def build(self):
        b, d, V = self.bundle, self.d, self.V
        rows = token_window(b.T)
        last = b.T - 1
        with self.beat("last_row") as beat:
            # "After all that arithmetic, how does the model choose one next word?": the prompt, then a gap
            prompt = flow_chips(list(b.tokens), list(b.ids), lambda n: self.text("earlier-tokens", count=n))
            slot_mark = label(self.text("next-slot"), S.BODY_SIZE, S.LOGIT)
            slot = VGroup(DashedVMobject(SurroundingRectangle(slot_mark, buff=GAP.m, color=S.LOGIT)), slot_mark)
            slot.next_to(prompt.chips[-1].box, RIGHT, buff=GAP.s)
            opening = VGroup(prompt, slot)
            place_in(fit_width(opening, S.TEXT_W), S.CONTENT)
            self.play(FadeIn(VGroup(*prompt.head, *prompt.chips)), run_time=beat.span(0.35))
            self.play(FadeIn(slot, shift=LEFT * GAP.s), run_time=beat.span(0.4))
            self.play(Swell(slot, color=S.LOGIT), run_time=beat.span(0.8))
            # "The 12 layers have refined T rows, one for each token"
            beat.at("rows")
            grid = NumberGrid(b["ln_f"], row_labels=b.tokens, rows=rows, max_cols=8, cell_w=1.05,
                              shape_text=self.text("grid-shape" if b.shape.norm == "layernorm" else "grid-shape-rms",
                                                   n_layer=b.shape.n_layer, T=b.T, d=d))
            fit_width(grid, S.TEXT_W - 2.4)
            place_in(grid, S.CONTENT, LEFT, y=S.CONTENT_Y + GAP.s)   # a step up: the row's note goes under it
            # one after the other: at once, the prompt's chips and ids lay over the grid's numbers in one place
            self.play(LaggedStart(FadeOut(opening), FadeIn(grid), lag_ratio=1.0), run_time=beat.span(0.7))
            # "Each row guesses the token that follows its own … you already know the answer": each
            # earlier row's next token, already in the prompt
            beat.at("only")
            nexts = VGroup()
            for i, r in enumerate(rows):
                cells = grid.row_cells(r)
                colour = S.TOKEN if r != last else S.LOGIT
                word = S.clip_token(b.tokens[r + 1], 8) if r != last else self.text("next-slot")
                tag = VGroup(label("→", S.SMALL, colour), label(word, S.SMALL, colour, mono=True)).arrange(
                    RIGHT, buff=GAP.xs)
                tag.next_to(grid, RIGHT, buff=GAP.m).match_y(cells)
                nexts.add(tag)
            keep_inside(nexts, S.CONTENT)
            known = [t for t, r in zip(nexts, rows) if r != last]
            self.play(LaggedStart(*[FadeIn(t, shift=RIGHT * GAP.xs) for t in known], lag_ratio=0.3) if known else Wait(),
                      run_time=beat.span(0.4))
            beat.at("only", 0.5)
            known_tag = label(self.text("known"), S.SMALL, S.TOKEN)
            if known:
                known_tag.next_to(VGroup(*known), UP, buff=GAP.s).align_to(VGroup(*known), LEFT)
            keep_inside(known_tag, S.CONTENT)
            self.play(FadeIn(known_tag), FadeIn(glow(VGroup(*known), S.TOKEN)) if known else Wait(),
                      run_time=beat.span(0.6))
            # "Only the last row … guesses a word that is not there yet"
            beat.at("seen")
            others = VGroup(*[m for r in rows if r != last for m in (*grid.row_cells(r), *grid.row_values(r))],
                            *[grid.row_label_mobs[i] for i, r in enumerate(rows) if r != last], *known, known_tag)
            box = SurroundingRectangle(VGroup(grid.row_cells(last), grid.row_label_mobs[-1]), color=S.TOKEN,
                                       buff=GAP.xxs, stroke_width=3)
            goes_on = below(label(self.text("goes-on"), S.SMALL, S.TOKEN), box, buff=GAP.s, aligned=RIGHT)
            shape_at = grid.shape_mob.copy().next_to(goes_on, DOWN, buff=GAP.xs).align_to(box, RIGHT)
            if shape_at.get_bottom()[1] < S.CAPTION_TOP:      # no room under the note: over the grid
                shape_at.next_to(grid, UP, buff=GAP.xs).align_to(box, RIGHT)
            self.play(others.animate.set_opacity(0.2), FadeIn(box), grid.shape_mob.animate.move_to(shape_at),
                      Swell(nexts[-1], color=S.LOGIT), run_time=beat.span(0.35))
            self.play(FadeIn(goes_on), run_time=beat.span(0.3))
            # "… and only it has read the whole prompt": every token it has read
            beat.at("seen", 0.55)
            seen = glow(VGroup(*grid.row_label_mobs), S.TOKEN)
            self.play(FadeIn(seen), run_time=beat.span(0.6))
            # "The other rows have done their part, as keys and values"
            beat.at("others")
            done = label(self.text("others"), S.SMALL, S.MUTED)
            fit_width(done, S.TEXT_W)
            done.next_to(grid, UP, buff=GAP.m).align_to(grid, LEFT)
            keep_inside(done, S.CONTENT)
            rest = VGroup(*[m for r in rows if r != last for m in grid.row_cells(r)])
            self.play(FadeOut(seen), FadeOut(known_tag), FadeIn(done),
                      FadeIn(glow(rest, S.MUTED, opacity=0.3)) if len(rest) else Wait(), run_time=beat.span(0.8))
        with self.beat("unembed") as beat:
            vec = NumberGrid(b["ln_f"][last][None, :], row_labels=[b.tokens[last]], max_cols=3, cell_w=1.0,
                             shape_text=f"1 × {d}")
            t_lines = VGroup(label(self.text("wte-symbol"), S.BODY_SIZE, S.TOKEN),
                             label(f"{d} × {N.fmt_int(V)}", S.SMALL, S.INK, mono=True),
                             label(self.text("wte-line-1"), S.SMALL, S.MUTED),
                             label(self.text("wte-line-2"), S.SMALL, S.MUTED))
            t_lines.arrange(DOWN, buff=GAP.xxs)
            wte = VGroup(SurroundingRectangle(t_lines, color=S.TOKEN, buff=GAP.s, stroke_width=2, fill_color=S.PANEL,
                                              fill_opacity=1), t_lines)
            scores = NumberGrid(b["logits"][last][None, :], col_labels=[b.tokenizer.readable(i) for i in range(5)],
                                max_cols=5, cell_w=1.0, label_color=S.TOKEN,
                                shape_text=self.text("scores-shape", V=N.fmt_int(V)))
            times, eq = label("×", S.TITLE_SIZE, S.MUTED), label("=", S.TITLE_SIZE, S.MUTED)
            eqn = VGroup(vec, times, wte, eq, scores).arrange(RIGHT, buff=GAP.m)
            place_in(fit_width(eqn, S.FULL_W), S.CONTENT, UP)
            f = self.facts
            best = f["agree"][0]
            strips = AgreementStrips(f["h"], best["row"], best["products"],
                                     (self.text("agree-row"), self.text("agree-embedding", token=S.show_token(best["text"])),
                                      self.text("agree-products"),
                                      self.text("agree-sum", d=d, score=N.fmt_signed(best["score"], 2))),
                                     width=S.LEFT_HALF.width + S.SIDE_PANEL.left)   # up to the side panel
            below(strips, eqn, buff=GAP.xl).align_to(eqn, LEFT)
            formula = label(self.text("unembed-formula", formula=self.ledger["unembed"].formula,
                                      flops=N.fmt_int(self.ledger["unembed"].flops)), S.SMALL, S.FLOPS, mono=True)
            fit_width(formula, S.TEXT_W)
            below(formula, strips, buff=GAP.l, aligned=LEFT)
            room = S.RIGHT_EDGE - strips.get_right()[0] - GAP.l
            tied = fit_lines(self.text("tied-note", n=N.fmt_short(f["table_params"])), S.SMALL, S.TOKEN,
                             max(room, S.RIGHT_HALF.width / 2))
            if tied.width <= room:        # beside the strips, level with their top
                tied.next_to(strips, RIGHT, buff=GAP.l, aligned_edge=UP)
            else:                         # no room beside them: under the formula
                below(tied, formula, buff=GAP.m, aligned=LEFT)
            keep_inside(VGroup(strips, tied, formula), S.CONTENT)
            # "To turn that row into a word, GPT-2 reads the embedding table … backwards"
            self.play(*[FadeOut(m) for m in self.mobjects if m not in (self.meter, self.heading)
                        and m is not getattr(self, "random_mark", None)], FadeIn(vec),
                      run_time=beat.span(0.3))
            self.play(FadeIn(times), FadeIn(wte, shift=LEFT * GAP.s), run_time=beat.span(0.7))
            # "The row is set against every token's embedding, and out comes one score for each token"
            beat.at("scores")
            self.play(FadeIn(eq), FadeIn(scores, shift=LEFT * GAP.s), run_time=beat.span(0.5))
            self.play(FadeIn(glow(scores, S.LOGIT, opacity=0.15)), run_time=beat.span(0.6))
            # "Each score is a dot product: the more the row and an embedding agree …": one token's
            # embedding under the row, their products, and the sum that is its score
            beat.at("agree")
            self.play(FadeIn(strips.h), FadeIn(strips.h_name), FadeIn(strips.e), FadeIn(strips.e_name),
                      run_time=beat.span(0.35))
            self.play(FadeIn(strips.p), FadeIn(strips.prod_name), run_time=beat.span(0.45))
            self.play(FadeIn(strips.sum, shift=UP * GAP.xs), FadeIn(glow(strips.sum, S.LOGIT)), run_time=beat.span(0.8))
            # "So one table of N numbers works both ways"
            beat.at("same")
            self.play(FadeIn(tied), Swell(t_lines, color=S.TOKEN), FadeIn(glow(wte, S.TOKEN)),
                      run_time=beat.span(0.7))
            # "This last product costs N FLOPs"
            beat.at("cost")
            self.play(FadeIn(formula, shift=UP * GAP.xs), FadeIn(glow(formula, S.FLOPS)), run_time=beat.span(0.6))
            # "The whole pass now comes to N"
            beat.at("total")
            self.pay("unembed", run_time=beat.span(0.9))


# ---------------------------------------------------------------------------
class CumulativePlot(VGroup):
    """Cumulative probability over tokens sorted by probability; ranks on a log axis; one path.
    `x_name`: the scene's words under the rank axis."""

    def __init__(self, probs: np.ndarray, x_name: str, width: float = 5.0, height: float = 3.1, samples: int = 240):
        super().__init__()
        V = len(probs)
        self.cum = np.cumsum(np.sort(np.asarray(probs, dtype=np.float64))[::-1])
        self.V, self.w, self.h = V, width, height
        self.log_v = math.log10(V) if V > 1 else 1.0
        self.anchor = Dot(ORIGIN, radius=0.001).set_opacity(0)   # follows the plot's origin when it moves
        x_axis = Line(ORIGIN, [width, 0, 0], color=S.MUTED, stroke_width=2)
        y_axis = Line(ORIGIN, [0, height, 0], color=S.MUTED, stroke_width=2)
        ranks = np.unique(np.round(np.logspace(0, self.log_v, samples)).astype(int))
        path = VMobject(stroke_color=S.LOGIT, stroke_width=4).set_points_as_corners(
            [self.local(r, self.cum[r - 1]) for r in ranks])
        ticks, x_labels = VGroup(), VGroup()
        per_decade = width / self.log_v
        tick = DOWN * GAP.xs
        for r in [10 ** k for k in range(int(self.log_v) + 1)] + [V]:
            if r != V and (self.log_v - math.log10(r)) * per_decade < 1.0:   # would touch the last label
                continue
            p = self.local(r, 0)
            ticks.add(Line(p, p + tick, color=S.MUTED, stroke_width=2))
            x_labels.add(label(N.fmt_int(r), S.SMALL, S.MUTED, mono=True).next_to(p, DOWN, buff=GAP.s))
        ticks.add(*x_labels)
        for q in (0.0, 0.5, 1.0):      # up the y axis: none, half and all of the mass
            ticks.add(label(N.fmt_pct(q, 0), S.SMALL, S.MUTED, mono=True).next_to(
                y_axis.point_from_proportion(q), LEFT, buff=GAP.s))
        x_name = fit_lines(x_name, S.SMALL, S.MUTED, width + 1.0)
        below(x_name, x_labels, buff=GAP.xs).match_x(x_axis)
        self.x_axis, self.y_axis = x_axis, y_axis
        self.path, self.axes = path, VGroup(x_axis, y_axis, ticks, x_name)
        self.add(self.anchor, self.axes, self.path)

    def local(self, rank: float, mass: float) -> np.ndarray:
        return np.array([math.log10(max(rank, 1)) / self.log_v * self.w, mass * self.h, 0.0])

    def origin(self) -> np.ndarray:
        return self.anchor.get_center()

    def point(self, rank: float, mass: float) -> np.ndarray:
        """Where (rank, cumulative mass) is on screen, wherever the plot has moved (no scaling)."""
        return self.origin() + self.local(rank, mass)


class Softmax(VoteScene):
    """Softmax over the vocabulary: top candidates, the long tail, the token of interest."""

    def build(self):
        f, V = self.facts, self.V
        w = f["watch"]
        bars = top_bars(f, bar_max=2.4)
        extra = extra_row(bars, w) if w is not None and w["rank"] > len(f["top"]) else None
        left = VGroup(bars, *([extra] if extra is not None else []))
        place_in(left, S.LEFT_COLUMN, UP + LEFT)
        head = fit_lines(self.text("softmax-head", V=N.fmt_int(V), n=len(f["top"])), S.SMALL, S.LOGIT, 6.6)
        head.next_to(bars, UP, buff=GAP.m).align_to(left, LEFT)
        # the rule, beside the bars until the plot takes its place
        rule = lines_within([(self.text("rule"), S.BODY_SIZE, S.LOGIT),
                             (self.text("rule-sum", V=N.fmt_int(V)), S.SMALL, S.INK),
                             (self.text("rule-total"), S.SMALL, S.INK)], S.SIDE_PANEL.width - GAP.xl, buff=GAP.m)
        # set in from the panel's edge, its first line level with the top bar
        place_in(rule, S.SIDE_PANEL, S.START, buff=GAP.m).align_to(bars, UP)
        with self.beat("softmax") as beat:
            # "A softmax turns the V scores into probabilities"
            self.play(FadeIn(head), FadeIn(rule[0]), run_time=beat.span(0.25))
            self.play(LaggedStart(*[FadeIn(r, shift=RIGHT * GAP.s) for r in bars.rows], lag_ratio=0.12),
                      FadeIn(rule[1:], shift=UP * GAP.xs), run_time=beat.span(0.85))
            # "The top candidate is …": each candidate the line reads is pointed at as it is read (the
            # line reads three in their sentence, one with random weights), a third of it each
            beat.at("top")
            read = 1 if self.bundle.synthetic else 3
            for r in range(min(read, len(bars.rows))):
                beat.at("top", r / read)
                self.play(Swell(bars.rows[r], color=S.LOGIT, scale_factor=1.08), run_time=beat.span(0.8 / read))
            if self.bundle.synthetic:     # "An even split would give each token …": that level
                beat.at("even")
                even = self.even_mark(bars, 1 / V, left, self.text("even-split", p=N.fmt_prob(1 / V)))
                self.play(FadeIn(even),
                          FadeIn(glow(even, S.WARNING, opacity=0.2), rate_func=there_and_back, remover=True),
                          run_time=beat.span(0.8))
            self.point_at_mark(beat, "opinion")      # random weights: "none of this is GPT-2's opinion"
            if "unsure" in beat.marks:      # trained weights: what a favourite's share says about the model
                beat.at("unsure")
                spread = VGroup(*[r.bar for r in bars.rows])
                self.play(FadeIn(glow(spread, S.LOGIT, opacity=0.15)), run_time=beat.span(0.4))
                self.play(Swell(bars.rows[0].pct, color=S.LOGIT, scale_factor=1.3), run_time=beat.span(0.6))
        mass = label(self.text("top-mass", n=len(f["top"]), p=N.fmt_prob(f["top_mass"])), S.SMALL, S.INK)
        height = 3.1
        for _ in range(2):      # a second time, shorter, where a wrapped rank name pushes the note under it too low
            plot = CumulativePlot(f["probs"], self.text("plot-x"), width=S.SIDE_PANEL.width - GAP.xl, height=height)
            # its y axis on the panel's edge, its top (all the mass) level with the top bar
            corner = np.array([S.SIDE_PANEL.left, bars.get_top()[1], 0.0])
            plot.shift(corner - plot.y_axis.get_top())
            short = S.CONTENT.bottom - (plot.axes.get_bottom()[1] - GAP.m - mass.height)
            if short <= 0:
                break
            height -= short
        n_p = f["n_p"]
        with self.beat("tail") as beat:
            # "The tail is long": every token's mass, added up by rank
            p_title = fit_width(label(self.text("plot-title"), S.SMALL, S.LOGIT), plot.w)
            p_title.next_to(plot.y_axis, UP, buff=GAP.m).align_to(plot.y_axis, LEFT)
            self.play(FadeOut(rule), FadeIn(plot.axes), FadeIn(p_title), run_time=beat.span(0.4))
            self.play(Create(plot.path), run_time=beat.span(1.0))
            # "The top 10 hold M together"
            beat.at("together")
            # under the plot: below the bars (and a far-down watch row) it would reach the caption band
            mass.next_to(plot.axes, DOWN, buff=GAP.m).align_to(plot.axes, LEFT)
            top_dot = Dot(plot.point(len(f["top"]), plot.cum[len(f["top"]) - 1]), color=S.INK, radius=0.06)
            self.play(FadeIn(mass), FadeIn(top_dot, scale=2), Swell(VGroup(*[r.bar for r in bars.rows]),
                                                                        color=S.LOGIT), run_time=beat.span(0.8))
            # "It takes n tokens to hold 90 percent"
            beat.at("nucleus")
            at = plot.point(n_p, TOP_P)
            lines = VGroup(Dot(at, color=S.INK, radius=0.06))
            if at[0] - plot.point(1, TOP_P)[0] > 0.1:        # a 1-token nucleus sits on the axis: no line
                lines.add(DashedLine(plot.point(1, TOP_P), at, color=S.INK, stroke_width=2))
            lines.add(DashedLine(at, plot.point(n_p, 0), color=S.INK, stroke_width=2))
            words = self.text("nucleus-note", count=n_p, n=N.fmt_int(n_p), p=N.fmt_pct_short(TOP_P))
            note = label(words, S.SMALL, S.INK)
            # the token of interest's tag and its leader line (shown in the next beat): the note keeps clear of it
            tag, lead = self.interest_tag(w, plot, p_title) if w is not None else (None, None)
            # left of n_p the curve is below the line, right of it above: either side has a free corner
            if at[0] - plot.origin()[0] > note.width + 0.2:
                note.next_to(at, UP + LEFT, buff=GAP.s)
            else:
                # the corner between the dashed line and the frame's edge: in lines where one would leave the frame
                note = fit_lines(words, S.SMALL, S.INK, S.RIGHT_EDGE - at[0] - GAP.s)
                note.next_to(at, DOWN + RIGHT, buff=GAP.s)
                if lead is not None:
                    under_lead(note, lead, floor=plot.point(n_p, 0)[1] + GAP.xs)
            # the ranks that hold p, shaded under the line (a one-token nucleus has no width: its note lights)
            o, span = plot.origin(), at - plot.origin()
            shade = Polygon(o, o + span * RIGHT, at, o + span * UP, stroke_width=0, fill_color=S.LOGIT,
                            fill_opacity=0.18)
            self.play(FadeIn(lines), FadeIn(note), FadeIn(shade if shade.width > 0.3 else glow(note, S.LOGIT, opacity=0.35)),
                      run_time=beat.span(0.7))
        if w is None:
            return
        with self.beat("interest") as beat:
            # "And <token>?"
            if extra is None:
                row = bars.rows[w["rank"] - 1]
                self.play(FadeIn(glow(row, S.TOKEN)), Swell(row.name, color=S.TOKEN), run_time=beat.span(0.9))
            else:
                self.play(FadeIn(extra, shift=UP * GAP.xs), FadeIn(glow(extra[1], S.TOKEN)), run_time=beat.span(0.9))
            # "It ranks …": its place on the curve
            beat.at("ranks")
            where = lead.get_end()
            pin = Dot(where, color=S.TOKEN, radius=0.07)
            others = [r for j, r in enumerate(bars.rows) if j != w["rank"] - 1]
            self.play(FadeIn(pin, scale=2), FadeIn(tag), Create(lead), FadeIn(glow(tag, S.TOKEN, opacity=0.35)),
                      *[r.animate.set_opacity(0.3) for r in others], run_time=beat.span(0.6))
            self.point_at_mark(beat, "caveat")   # random weights: "the rank carries no meaning here"

    @staticmethod
    def interest_tag(w: dict, plot, p_title) -> tuple[VMobject, Line]:
        """The token of interest's tag and the thin line from it to its point on the curve: the tag sits
        above the plot (never on the curve), right of the plot's title and inside the frame."""
        where = plot.point(w["rank"], plot.cum[w["rank"] - 1])
        tag = label(f"{S.clip_token(w['text'])} #{N.fmt_int(w['rank'])}", S.SMALL, S.TOKEN, mono=True)
        fit_width(tag, 3.0)
        x = min(max(where[0], p_title.get_right()[0] + GAP.m + tag.width / 2),
                S.RIGHT_EDGE - tag.width / 2)
        tag.match_y(p_title).set_x(x)
        return tag, Line(tag.get_bottom() + DOWN * GAP.xxs, where, color=S.TOKEN, stroke_width=1.5)

    @staticmethod
    def even_mark(bars: ProbBars, even: float, under, text: str) -> VGroup:
        """A line down the bars where every token's bar would end if the vote were an even split; its
        name (`text`) under `under` (the bars and any row below them)."""
        first = bars.rows[0]
        x = first.bar.get_left()[0] + first.bar.width * even / max(bars.probs[0], 1e-12)
        top, bottom = bars.rows[0].get_top()[1] + 0.05, under.get_bottom()[1] - 0.1
        line = DashedLine([x, top, 0], [x, bottom, 0], color=S.WARNING, stroke_width=2)
        tag = label(text, S.SMALL, S.WARNING)
        tag.next_to(line, DOWN, buff=GAP.xs).align_to(line, LEFT)
        return VGroup(line, tag)


# ---------------------------------------------------------------------------
class Shaping(VoteScene):
    """Temperature, then top-k and top-p trimming on the bars."""

    def build(self):
        f = self.facts
        temps = f["temps"]
        scale = max(t["top"] for t in temps)
        # one set of bars that each named temperature reshapes; a table keeps what each one did
        plain = min(range(len(temps)), key=lambda j: abs(temps[j]["t"] - 1.0))
        shapes = [place_in(ProbBars(t["texts"], t["probs"], None, bar_max=3.0, scale_to=scale, name_max=1.9),
                           S.LEFT_COLUMN, LEFT, y=S.CONTENT_Y) for t in temps]     # level with the content's middle
        panel = S.SIDE_PANEL.with_(left=min(S.SIDE_PANEL.left, max(s.get_right()[0] for s in shapes) + 0.5))
        bars = shapes[plain].copy()
        now = label("T = " + N.fmt_fixed(temps[plain]['t'], 1), S.BODY_SIZE, S.LOGIT).next_to(bars, UP, buff=GAP.m)
        now.align_to(bars, LEFT)
        formula = label(self.text("temp-formula"), S.BODY_SIZE, S.MUTED)
        place_in(formula, panel, S.START, y=now.get_y())
        # what each temperature did, one row each, beside the middle of the bars
        cells = [[label("T = " + N.fmt_fixed(t['t'], 1), S.SMALL, S.LOGIT),
                  label(self.text("temp-top", p=N.fmt_prob(t["top"])), S.SMALL, S.INK, mono=True),
                  label(self.text("temp-entropy", H=N.fmt_fixed(t["entropy"], 2)), S.SMALL, S.INK, mono=True)]
                 for t in temps]
        record = table(cells, "LLL", gaps=GAP.l, row_gap=GAP.m, rtl_aligns="RRR")
        if S.SMALL * (panel.width - GAP.xs) / record.width < LEGIBLE * S.SMALL:   # too wide: the entropy under the top
            record = table([[name, VGroup(top, ent).arrange(DOWN, buff=GAP.xxs, aligned_edge=S.START)]
                            for name, top, ent in cells], "LL", gaps=GAP.l, row_gap=GAP.m, rtl_aligns="RR")
        place_in(fit_width(record, panel.width - GAP.xs), panel, S.START, y=bars.get_y())
        if record.get_top()[1] > formula.get_bottom()[1]:     # taller rows (a translation): under the formula
            record.next_to(formula, DOWN, buff=GAP.m, coor_mask=UP)
        coolest, hottest = record[0], record[-1]
        foot = fit_lines(self.text("temp-foot", V=N.fmt_int(self.V), H=N.fmt_fixed(f["max_entropy"], 2)), S.SMALL,
                         S.MUTED, panel.width - GAP.xs)
        below(foot, record, buff=GAP.l, aligned=S.START)
        with self.beat("temperature") as beat:
            # "Temperature divides the scores before the softmax"
            self.play(FadeIn(formula), FadeIn(now), FadeIn(bars), run_time=beat.span(0.6))
            # "At 0.2, the top token takes …": the bars reshape to each temperature as it is named
            lit = VGroup()
            for j, t in enumerate(temps):
                beat.at(f"temp-{j}")
                tag = label("T = " + N.fmt_fixed(t['t'], 1), S.BODY_SIZE, S.LOGIT).move_to(now, aligned_edge=LEFT)
                self.play(change(bars, shapes[j].copy()), change(now, tag), FadeIn(record[j], shift=S.START * GAP.xs),
                          *[r.animate.set_opacity(0.45) for r in record[:j]],
                          FadeOut(lit), run_time=beat.span(0.45))
                beat.at(f"temp-{j}", 0.55)
                lit = glow(record[j], S.LOGIT, opacity=0.3)
                self.play(FadeIn(lit), run_time=beat.span(0.6))
            # "Low temperature sharpens the vote; high temperature flattens it"
            beat.at("sharpens")
            self.play(Swell(coolest, color=S.LOGIT), coolest.animate.set_opacity(1), lit.animate.move_to(coolest),
                      run_time=beat.span(0.4))
            self.play(Swell(hottest, color=S.LOGIT), FadeIn(foot), lit.animate.move_to(hottest),
                      run_time=beat.span(0.8))
        with self.beat("spread") as beat:
            # "How spread out is a vote?": a line from certainty to an even split
            scale_ = EntropyScale([t["entropy"] for t in temps], f["max_entropy"], [t["probs"] for t in temps],
                                  ["T = " + N.fmt_fixed(t["t"], 1) for t in temps],
                                  [self.text("temp-entropy", H=N.fmt_fixed(t["entropy"], 2)) for t in temps],
                                  (self.text("entropy-certain"), self.text("entropy-even")),
                                  self.text("entropy-title"), width=S.TEXT_W - GAP.xl * 2)
            place_in(scale_, S.CONTENT)
            self.play(FadeOut(VGroup(bars, now, formula, record, foot, lit)), run_time=beat.span(0.3))
            self.play(Create(scale_.axis), run_time=beat.span(0.6))
            # "Entropy measures it, in nats …"
            beat.at("nats")
            self.play(FadeIn(scale_.title), FadeIn(scale_.ticks), run_time=beat.span(0.5))
            # words in a glow keep a label's gap from its edge (the chapter's hairline drew it against them)
            self.play(FadeIn(glow(scale_.title, S.LOGIT, opacity=0.2, buff=GAP.xs)), run_time=beat.span(0.6))
            # "Zero nats means one token is certain, and an even split … gives N"
            beat.at("zero")
            certain = scale_.end_lit(0, S.LOGIT)
            self.play(FadeIn(scale_.ends[0]), FadeIn(certain), run_time=beat.span(0.4))
            self.play(FadeIn(scale_.ends[1]), FadeOut(certain), FadeIn(scale_.end_lit(1, S.LOGIT)),
                      run_time=beat.span(0.8))
            # "At temperature 1.0, this vote spreads over N nats": the three temperatures, that one lit
            beat.at("here")
            self.play(LaggedStart(*[FadeIn(VGroup(m_, l_, d_), shift=DOWN * GAP.xs)
                                    for m_, l_, d_ in zip(scale_.minis, scale_.leads, scale_.dots)], lag_ratio=0.3),
                      run_time=beat.span(0.5))
            self.play(FadeIn(glow(scale_.minis[plain], S.LOGIT, buff=GAP.xs)),
                      Swell(scale_.dots[plain], color=S.LOGIT, scale_factor=1.5), run_time=beat.span(0.8))
        bars_k = place_in(top_bars(f, bar_max=2.6), S.LEFT_COLUMN, UP + LEFT)
        with self.beat("topk") as beat:
            # "Top-k keeps a fixed shortlist"
            bars_k_head = label(self.text("topk-head"), S.SMALL, S.MUTED)
            bars_k_head.next_to(bars_k, UP, buff=GAP.m).align_to(bars_k, LEFT)
            keep_inside(bars_k_head, S.CONTENT)
            k = min(TOP_K, len(bars_k.rows))
            title = label(self.text("topk-title", k=k), S.BODY_SIZE, S.LOGIT)
            sub = lines_within([(self.text("topk-keep", k=k), S.SMALL, S.INK), (self.text("topk-renorm"), S.SMALL, S.INK)],
                               S.SIDE_PANEL.width)
            info = VGroup(title, sub).arrange(DOWN, buff=GAP.s, aligned_edge=S.START)
            place_in(fit_width(info, S.SIDE_PANEL.width), S.SIDE_PANEL, S.START).align_to(bars_k, UP)   # level with the top bar
            self.play(*[FadeOut(m) for m in self.mobjects if m not in (self.meter, self.heading)
                        and m is not getattr(self, "random_mark", None)], run_time=beat.span(0.2))
            self.play(FadeIn(bars_k), FadeIn(bars_k_head), FadeIn(title), run_time=beat.span(0.7))
            bars = bars_k
            cut = VGroup(*bars.rows[k:])
            # "With k equal to 5, only the first 5 bars survive"
            beat.at("survive")
            self.play(FadeIn(sub[0]), cut.animate.set_opacity(0.2), run_time=beat.span(0.7))
            # "They are renormalised to share all of the probability: … rises from … to …"
            beat.at("renorm")
            dec = N.prob_decimals(f["topk"])
            new_pcts = [label(N.fmt_prob(p, dec), S.SMALL, S.LOGIT, mono=True).move_to(r.pct, aligned_edge=RIGHT)
                        for p, r in zip(f["topk"], bars.rows[:k])]
            old_pcts = [r.pct.copy() for r in bars.rows[:k]]
            self.play(FadeIn(sub[1]), *[change(r.pct, n) for r, n in zip(bars.rows[:k], new_pcts)],
                      run_time=beat.span(0.45))
            kept = glow(VGroup(*[r.pct for r in bars.rows[:k]]), S.LOGIT)
            self.play(Swell(bars.rows[0].pct, color=S.LOGIT, scale_factor=1.2), FadeIn(kept),
                      run_time=beat.span(0.8))
        with self.beat("topp") as beat:
            n_p = f["n_p"]
            title2 = label(self.text("topp-title", p=N.fmt_general(TOP_P)), S.BODY_SIZE, S.LOGIT)
            keep = min(n_p, len(bars.rows))
            more = n_p - keep
            lines = [self.text("topp-keep"), self.text("topp-count", p=N.fmt_pct_short(TOP_P), n=N.fmt_int(n_p))]
            if more > 0:
                lines.append(self.text("topp-more", bars=len(bars.rows), more=N.fmt_int(more)))
            sub2 = VGroup(*[label(t, S.SMALL, S.INK) for t in lines]).arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
            cum = np.cumsum([c["prob"] for c in f["top"]])
            dec = N.prob_decimals(cum)
            sums = VGroup(*[label(f"Σ {N.fmt_prob(c, dec)}", S.SMALL, S.MUTED, mono=True) for c in cum])
            # a column right of the percentages, flush right, each sum level with its bar
            sums.arrange(DOWN, aligned_edge=RIGHT).next_to(bars, RIGHT, buff=GAP.m)
            for m, r in zip(sums, bars.rows):
                m.match_y(r)
            panel = S.SIDE_PANEL.with_(left=max(S.SIDE_PANEL.left, sums.get_right()[0] + GAP.l))   # right of the sums
            info2 = VGroup(title2, sub2).arrange(DOWN, buff=GAP.s, aligned_edge=S.START)
            if S.SMALL * panel.width / info2.width < LEGIBLE * S.SMALL:     # would shrink away: each line wraps
                title2 = fit_lines(self.text("topp-title", p=N.fmt_general(TOP_P)), S.BODY_SIZE, S.LOGIT, panel.width)
                sub2 = lines_within([(t, S.SMALL, S.INK) for t in lines], panel.width)
                info2 = VGroup(title2, sub2).arrange(DOWN, buff=GAP.s, aligned_edge=S.START)
            place_in(fit_width(info2, panel.width), panel, S.START).align_to(bars, UP)
            # "A fixed shortlist is too long when the model is sure, and too short when it is not"
            self.play(FadeOut(info), FadeOut(kept), *[change(r.pct, o) for r, o in zip(bars.rows[:k], old_pcts)],
                      cut.animate.set_opacity(1), run_time=beat.span(0.35))
            fixed = glow(VGroup(*bars.rows[:k]), S.MUTED, opacity=0.2)
            self.play(FadeIn(fixed), run_time=beat.span(0.7))
            # "Top-p adapts: it keeps the fewest tokens that hold 90 percent": the running sums, bar by bar
            beat.at("adapts")
            self.play(FadeOut(fixed), FadeIn(title2), FadeIn(sub2[0]), run_time=beat.span(0.25))
            self.play(LaggedStart(*[FadeIn(m, shift=LEFT * GAP.xs) for m in sums], lag_ratio=0.2),
                      run_time=beat.span(0.9))
            # "Here that is n tokens, …": where the sum first reaches p
            beat.at("here")
            anims = [FadeIn(VGroup(*sub2[1:]))]
            if keep < len(bars.rows):      # every bar below rank n is cut
                anims.append(VGroup(*bars.rows[keep:], *sums[keep:]).animate.set_opacity(0.2))
            anims.append(Swell(sums[keep - 1], color=S.LOGIT, scale_factor=1.2))
            anims.append(FadeIn(glow(VGroup(*bars.rows[:keep], *sums[:keep]), S.LOGIT, opacity=0.15)))
            self.play(*anims, run_time=beat.span(0.7))
            # "The less sure the model, the longer that list"
            beat.at("longer")
            self.play(FadeIn(glow(VGroup(*sub2[1:]), S.LOGIT)), run_time=beat.span(0.7))


# ---------------------------------------------------------------------------
class Pick(VoteScene):
    """Greedy (and its loops) vs sampling (the die roll on the bar of all the probability); the greedy
    pick appended to the prompt."""

    def build(self):
        b, f = self.bundle, self.facts
        bars = place_in(top_bars(f, bar_max=2.4), S.LEFT_COLUMN, UP + LEFT)
        g, s, run = f["greedy"], f["sample"], f["greedy_run"]
        panel = S.SIDE_PANEL.with_(top=S.CONTENT.top, bottom=S.CONTENT.bottom)
        # the greedy panel: the pick, then the bundle's greedy run
        title = fit_lines(self.text("greedy-title"), S.BODY_SIZE, S.LOGIT, panel.width)
        chip = TokenChip(g["text"], g["id"], color=S.LOGIT)
        gl = fit_width(VGroup(title, chip).arrange(DOWN, buff=GAP.m, aligned_edge=S.START), panel.width)
        looped = GreedyRun(run["texts"], run["ids"], run["repeated"], self.text("greedy-run"), self.text("repeat"),
                           panel.width)
        below(looped, gl, buff=GAP.xl, aligned=S.START)
        place_in(VGroup(gl, looped), panel, S.START)
        # the sampling panel: the die and its one random step, the bar it lands on, the token
        title2 = fit_lines(self.text("sample-title", t=N.fmt_fixed(s["temperature"], 1), seed=s["seed"]), S.BODY_SIZE,
                           S.TOKEN, panel.width)
        die = Die()
        only = fit_lines(self.text("only-random"), S.SMALL, S.TOKEN, panel.width - die.width - GAP.m)
        die_row = VGroup(die, only).arrange(S.END, buff=GAP.m)
        roll = f["roll"]
        digits = 2 if roll["end"] - roll["start"] >= 0.01 else 4
        bar = DieBar(f, panel.width - GAP.l, (self.text("roll-value", u=N.fmt_fixed(roll["u"], digits)),
                                              self.text("zoom", a=N.fmt_int(max(1, roll["rank"] - 3)),
                                                        b=N.fmt_int(min(len(f["order"]), roll["rank"] + 3)))))
        chip2 = TokenChip(s["text"], s["id"], color=S.TOKEN)
        where = label(self.text("sample-rank", rank=N.fmt_int(s["rank"]), p=N.fmt_prob(s["prob"])), S.SMALL, S.INK,
                      mono=True)
        picked = VGroup(chip2, where).arrange(S.END, buff=GAP.m)
        if picked.width > panel.width:      # too wide: the rank under the token
            picked.arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
        sl = VGroup(title2, die_row, bar, picked)
        die_row.next_to(title2, DOWN, buff=GAP.m).align_to(title2, S.START)
        bar.next_to(die_row, DOWN, buff=GAP.l).align_to(title2, S.START)      # room for the die's number over it
        below(picked, bar.zoom if bar.thin else bar.ends, buff=GAP.m, aligned=S.START)
        place_in(sl, panel, S.START)
        keep_inside(sl, S.CONTENT)
        with self.beat("greedy") as beat:
            # "Now one token must be picked"
            self.play(FadeIn(bars), run_time=beat.span(0.6))
            # "Greedy decoding simply takes the top bar: …"
            beat.at("takes")
            mark = SurroundingRectangle(bars.rows[0], color=S.LOGIT, buff=GAP.xxs, stroke_width=3)
            self.play(FadeIn(mark), FadeIn(title), run_time=beat.span(0.4))
            self.play(FadeTransform(bars.rows[0].name.copy(), chip), run_time=beat.span(0.8))   # its id stays behind
            self.point_at_mark(beat, "noise")      # random weights: "a pick of noise"
            # "Always taking the top token tends to loop …": the bundle's own greedy run, repeats marked
            beat.at("loop")
            self.play(FadeIn(looped.head), LaggedStart(*[FadeIn(c, shift=LEFT * GAP.s) for c in looped.chips],
                                                       lag_ratio=0.3), run_time=beat.span(0.45))
            beat.at("loop", 0.5)
            self.play(FadeIn(looped.marks) if len(looped.marks) else Swell(looped.chips, color=S.LOGIT),
                      run_time=beat.span(0.7))
        with self.beat("sample") as beat:
            # "Sampling rolls a die against the odds instead, and that is the way out of a loop"
            self.play(FadeOut(VGroup(title, chip, looped)), FadeIn(title2), run_time=beat.span(0.35))
            self.play(FadeIn(bar.slices), FadeIn(bar.frame), FadeIn(bar.ends), run_time=beat.span(0.8))
            # "This roll is the only randomness in the whole pass …"
            beat.at("only")
            self.play(FadeIn(die, scale=0.5), run_time=beat.span(0.2))
            self.play(Rotate(die, angle=math.pi), run_time=beat.span(0.3))
            self.play(FadeIn(only), FadeIn(glow(only, S.TOKEN)), run_time=beat.span(0.7))
            # "The die gives a number between zero and one, here …, and it lands in the slice of …"
            beat.at("lands")
            self.play(FadeIn(bar.pointer, shift=DOWN * GAP.s), run_time=beat.span(0.35))
            self.play(FadeIn(bar.chosen), *([FadeIn(bar.zoom)] if bar.thin else []), run_time=beat.span(0.4))
            self.play(FadeIn(chip2), run_time=beat.span(0.8))
            # "That is rank …, with probability …"
            beat.at("rank")
            anims = [FadeIn(where), FadeIn(glow(VGroup(chip2, where), S.TOKEN))]
            if s["rank"] <= len(bars.rows):
                anims.append(FadeIn(glow(bars.rows[s["rank"] - 1], S.TOKEN)))
            self.play(*anims, run_time=beat.span(0.6))
        with self.beat("append") as beat:
            # "Take the greedy pick … and append it to the prompt"
            self.play(*[FadeOut(m) for m in self.mobjects if m not in (self.meter, self.heading)
                        and m is not getattr(self, "random_mark", None)], run_time=beat.span(0.15))
            texts, ids = list(b.tokens) + [g["text"]], list(b.ids) + [g["id"]]
            row = flow_chips(texts, ids, lambda n: self.text("earlier-tokens", count=n))
            new = row.chips[-1]
            new.box.set_stroke(S.LOGIT)
            new.text_mob.set_color(S.LOGIT)
            note = fit_width(label(self.text("append-note", T=b.T, T_next=b.T + 1), S.SMALL, S.MUTED), S.TEXT_W)
            below(note, row, buff=GAP.l)
            place_in(VGroup(row, note), S.CONTENT)      # the prompt and its note, centred
            self.play(FadeIn(VGroup(*row.head, *row.chips[:-1])), run_time=beat.span(0.35))
            tag = label(self.text("greedy-tag"), S.SMALL, S.LOGIT).next_to(new.box, RIGHT, buff=GAP.s)
            if tag.get_right()[0] > S.RIGHT_EDGE:    # a full last line: say it under the row, beside the note
                tag.become(label(self.text("greedy-tag-below"), S.SMALL, S.LOGIT))
                under = VGroup(note, tag)
                if note.width + GAP.l + tag.width <= S.TEXT_W:     # (a 58-token row left no room for a line more)
                    under.arrange(S.END, buff=GAP.l)
                else:
                    below(tag, note, buff=GAP.s)
                below(under, row, buff=GAP.l)
                place_in(VGroup(row, under), S.CONTENT)
            self.play(FadeIn(new, shift=LEFT * GAP.l), FadeIn(tag), run_time=beat.span(0.8))
            # "In chapter six, these T+1 tokens go through the whole pass again"
            beat.at("again")
            # the row lit by a box (a Swell would colour each chip's filled box and hide its token)
            self.play(FadeIn(note), FadeIn(glow(VGroup(*row.chips), S.TOKEN, buff=GAP.xs)), run_time=beat.span(0.7))


SCENES = [LastRow, Softmax, Shaping, Pick]
