"""Chapter 02's pictures of why attention works as it does, each drawn from data/facts/ch02.py.

AgreementFan   the last token's query and every key as arrows: each key at its true angle to the
               query, its dot product beside it (a dot product is agreement made numeric).
BarRow         a row of attention weights as bars (the √d picture puts two side by side: the same
               row's softmax with the division by √d_head and without it).
BudgetBar      a row of attention as one unit spent across the tokens: a bar split into the weights.
BlendStrips    the last token's output as the weighted sum of the value vectors: each value a strip
               of coloured cells, scaled by its weight, the strips summed into the output's strip.
NormColumn     one head's query or key through the q/k norm (Qwen3): its numbers as bars before, the
               division by their rms and the gain, the bars after, on one scale.

Each takes the facts and the token texts and builds at its final size (labels at S.SMALL or above:
nothing is scaled down after its text is set).
"""
from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, ORIGIN, RIGHT, UP, Arc, Arrow, DashedLine, Dot, Line, ManimColor, Rectangle, VGroup,
                   interpolate_color)

from onepass.scenes import style as S
from onepass.scenes.layout import GAP
from onepass.scenes.text import fit_lines, fit_width, label
from onepass.words import numbers as N

# one hue per token position, shared by the budget and the blend (so a token's piece of the budget and
# its value strip are the same colour); its name is always written beside it (colour never alone)
_HUES = [ManimColor(c) for c in ("#C77DFF", "#4CC9F0", "#FFD166", "#06D6A0", "#F4A261", "#EF476F",
                                 "#A8DADC", "#80ED99")]


# sizes of the pictures on the frame (manim units)
BUDGET_W = S.TEXT_W * 0.85             # the bar that stands for one unit of attention
BLEND_W = min(6.4, S.TEXT_W * 0.55)    # a value vector's strip, all its d_head cells
QUERY_GAP = 1.4                        # the gap the last token's lines cross to the values
PROJECTION_W = S.TEXT_W * 0.92         # one row, its three arrows and the q, k, v strips
SOFTMAX_W = min(8.0, S.TEXT_W * 0.62)  # one row's bars through the softmax (its total beside them)
COST_SIDE = 2.7                        # the side of the largest FLOPs square


def token_hue(position: int) -> ManimColor:
    return _HUES[position % len(_HUES)]


def degrees(x: float) -> str:
    return f"{N.fmt_int(int(round(x)))}°"


class AgreementFan(VGroup):
    """The query along +x from one origin and each shown key as an arrow at its true angle to it.

    `radius` is the drawn length of the longest vector. `.query`, `.keys[i]` (arrows, in the order of
    `positions`), `.tags[i]` (token and dot product beside each tip), `.drops[i]` (dashed line from a
    tip down to the query's line: where it lands is k · q / |q|), `.angle` (the arc and degrees between
    the query and the best-agreeing key), `.query_tag`."""

    def __init__(self, facts: dict, tokens, positions, last: int, radius: float = 2.0, height: float | None = None):
        """`height`: the most the picture may stand, tags included (tags stacked clear of each other can
        stand taller than the arrows: the fan is drawn smaller until they fit)."""
        super().__init__()
        self.positions = list(positions)
        for _ in range(4):
            self._draw(facts, tokens, last, radius)
            if height is None or self.height <= height:
                break
            radius -= (self.height - height) / 2 + GAP.xs
            self.remove(*self.submobjects)

    def _draw(self, facts: dict, tokens, last: int, radius: float):
        longest = max(facts["q_norm"], float(max(facts["k_norm"][j] for j in self.positions)))
        scale = radius / longest if longest > 0 else 1.0
        origin = np.zeros(3)
        q_tip = np.array([facts["q_norm"] * scale, 0.0, 0.0])
        self.origin = Dot(origin, radius=0.06, color=S.MUTED)
        self.axis = DashedLine(origin + LEFT * radius * 0.45, origin + RIGHT * radius * 1.15, color=S.MUTED,
                               stroke_width=1.5, dash_length=0.08)
        self.query = Arrow(origin, q_tip, buff=GAP.none, color=S.QUERY, stroke_width=7,
                           max_tip_length_to_length_ratio=0.12)
        self.query_tag = VGroup(label("q", S.SMALL, S.QUERY, mono=True, compact=True),
                                label(S.clip_token(tokens[last], 7), S.SMALL, S.TOKEN, mono=True, compact=True)
                                ).arrange(RIGHT, buff=GAP.s)
        self.query_tag.next_to(self.query.get_end(), DOWN + RIGHT * 0.2, buff=GAP.xs)
        self.keys, self.tags, self.drops = VGroup(), VGroup(), VGroup()
        for j in self.positions:
            tip = np.array([*facts["tips"][j] * scale, 0.0])
            self.keys.add(Arrow(origin, tip, buff=GAP.none, color=S.KEY, stroke_width=5,
                                max_tip_length_to_length_ratio=0.12))
            direction = tip / (np.linalg.norm(tip) or 1.0)
            tag = VGroup(label(S.clip_token(tokens[j], 7), S.SMALL, S.TOKEN, mono=True, compact=True),
                         label(N.fmt_signed(float(facts["dots"][j]), 2), S.SMALL, S.INK, mono=True, compact=True)
                         ).arrange(RIGHT, buff=GAP.xs)
            tag.next_to(tip, direction, buff=GAP.xs + self.keys[-1].tip.width)     # clear of the arrowhead
            self.tags.add(tag)
            self.drops.add(DashedLine(tip, [tip[0], 0.0, 0.0], color=S.KEY, stroke_width=2, dash_length=0.06))
        self._spread(self.tags, [k.tip for k in self.keys])
        top = self.positions.index(facts["top_index"]) if facts["top_index"] in self.positions else 0
        self.top = top
        theta = float(np.radians(facts["angle"][self.positions[top]]))
        sign = 1.0 if facts["tips"][self.positions[top]][1] >= 0 else -1.0
        arc = Arc(radius=radius * 0.28, start_angle=0.0, angle=sign * theta, color=S.INK, stroke_width=3)
        mid = sign * theta / 2
        where = np.array([np.cos(mid), np.sin(mid), 0.0])
        deg = label(degrees(np.degrees(theta)), S.SMALL, S.INK, mono=True, compact=True)
        deg.move_to(where * (radius * 0.28 + GAP.l))
        self.angle = VGroup(arc, deg)
        self.add(self.axis, self.origin, self.keys, self.query, self.query_tag, self.tags, self.drops, self.angle)


    @staticmethod
    def _spread(tags, heads=()):
        """Tags that overlap an earlier tag or another key's arrowhead are moved apart, away from the query's
        line (up above it, down below it), one after another from the line outwards (keys pointing nearly
        the same way put a tag on a neighbour's arrowhead: SmolLM2's '·on' sat on 'The''s)."""
        def clear(a, b):
            return (a.get_left()[0] >= b.get_right()[0] or a.get_right()[0] <= b.get_left()[0]
                    or a.get_bottom()[1] >= b.get_top()[1] or a.get_top()[1] <= b.get_bottom()[1])
        for sign in (1.0, -1.0):
            side = sorted((t for t in tags if np.sign(t.get_y()) == sign or (sign > 0 and t.get_y() == 0)),
                          key=lambda t: sign * t.get_y())
            for i, tag in enumerate(side):
                own = heads[list(tags).index(tag)] if len(heads) == len(tags) else None
                obstacles = sorted([*side[:i], *[h for h in heads if h is not own]], key=lambda m: sign * m.get_y())
                for other in obstacles:
                    if not clear(tag, other):
                        edge = other.get_top()[1] if sign > 0 else other.get_bottom()[1]
                        target = edge + sign * (GAP.xs + tag.height / 2)
                        if sign * (target - tag.get_y()) > 0:      # only ever outwards
                            tag.shift(UP * (target - tag.get_y()))


class BarRow(VGroup):
    """Weights as bars over their tokens, the height of a bar `height` for a weight of one: `.bars`,
    `.pcts` (percentages over the bars), `.tokens` (under the baseline), `.numbers` (one more label per
    bar under the tokens, e.g. the scores, when `numbers` is given), `.baseline`."""

    def __init__(self, weights, tokens, positions, width: float, height: float, color=S.ATTENTION,
                 numbers=None, number_color=S.MUTED):
        super().__init__()
        positions = list(positions)
        pitch = width / max(len(positions), 1)
        bar_w = pitch * 0.62
        self.baseline = Line(LEFT * width / 2, RIGHT * width / 2, color=S.MUTED, stroke_width=2)
        self.bars, self.pcts, self.tokens, self.numbers = VGroup(), VGroup(), VGroup(), VGroup()
        for i, j in enumerate(positions):
            x = -width / 2 + pitch * (i + 0.5)
            h = max(float(weights[j]) * height, 0.02)
            bar = Rectangle(width=bar_w, height=h, stroke_width=0, fill_color=color, fill_opacity=0.9)
            bar.move_to([x, h / 2, 0.0])
            self.bars.add(bar)
            pct = fit_width(label(N.fmt_pct(float(weights[j])), S.SMALL, S.INK, mono=True, compact=True), pitch)
            pct.next_to(bar, UP, buff=GAP.xs)
            self.pcts.add(pct)
            tok = fit_width(label(S.clip_token(tokens[j], 6), S.SMALL, S.TOKEN, mono=True, compact=True), pitch)
            tok.move_to([x, 0.0, 0.0]).next_to(self.baseline, DOWN, buff=GAP.s)
            tok.set_x(x)
            self.tokens.add(tok)
            if numbers is not None:
                num = fit_width(label(N.fmt_signed(float(numbers[j]), 2), S.SMALL, number_color, mono=True,
                                      compact=True), pitch)
                self.numbers.add(num)
        if numbers is not None:
            for tok, num in zip(self.tokens, self.numbers):
                num.next_to(self.tokens, DOWN, buff=GAP.xs).set_x(tok.get_x())
        self.add(self.baseline, self.bars, self.pcts, self.tokens, self.numbers)


class BudgetBar(VGroup):
    """One unit of attention as a bar `width` long, cut into each token's weight (every token of the
    row, in order), each piece in its token's hue; under a piece wide enough, its token and share.
    `.pieces[j]` (position j), `.tags` (j -> its label), `.frame` (the whole unit's outline)."""

    def __init__(self, facts: dict, tokens, width: float, height: float = 0.6):
        super().__init__()
        w = facts["weights"]
        self.frame = Rectangle(width=width, height=height, stroke_width=3, stroke_color=S.INK, fill_opacity=0)
        left = -width / 2
        self.pieces, self.tags = VGroup(), {}
        tag_group = VGroup()
        for j, (share, start) in enumerate(zip(w, facts["starts"])):
            piece_w = max(float(share) * width, 1e-3)
            piece = Rectangle(width=piece_w, height=height, stroke_width=1.5, stroke_color=S.BACKGROUND,
                              fill_color=token_hue(j), fill_opacity=0.85)
            piece.move_to([left + float(start) * width + piece_w / 2, 0.0, 0.0])
            self.pieces.add(piece)
            tag = VGroup(label(S.clip_token(tokens[j], 7), S.SMALL, S.TOKEN, mono=True, compact=True),
                         label(N.fmt_pct(float(share)), S.SMALL, S.INK, mono=True, compact=True)
                         ).arrange(DOWN, buff=GAP.xxs)
            if tag.width <= piece_w - GAP.xs or j == facts["top_index"]:   # the largest share always says so
                tag.next_to(piece, DOWN, buff=GAP.s)
                self.tags[j] = tag
                tag_group.add(tag)
        top = self.tags[facts["top_index"]]
        for j, tag in list(self.tags.items()):      # a narrow top piece's tag may reach over its neighbours'
            if j != facts["top_index"] and tag.get_left()[0] < top.get_right()[0] and tag.get_right()[0] > top.get_left()[0]:
                del self.tags[j]
                tag_group.remove(tag)
        self.tag_group = tag_group
        self.add(self.pieces, self.frame, tag_group)


class BlendStrips(VGroup):
    """Each shown token's value vector as a strip of d_head cells (the shared diverging scale), then
    the same strip times its weight, and their sum: the output. `.values[i]`, `.scaled[i]` (strips, in
    the order of `positions`, at the same place), `.names[i]` (token and weight, left of the strips),
    `.output` (the sum's strip, under a rule), `.sigma`."""

    def __init__(self, facts: dict, tokens, positions, width: float, cell_h: float = 0.34, pitch: float = 0.46):
        super().__init__()
        positions = list(positions)
        vmax = facts["vmax"]

        def strip(vec, outline):
            return value_strip(vec, vmax, width, cell_h, outline)

        self.values, self.scaled, self.names = VGroup(), VGroup(), VGroup()
        for i, j in enumerate(positions):
            y = -i * pitch
            v = strip(facts["values"][j], token_hue(j)).move_to([0.0, y, 0.0])
            s = strip(facts["scaled"][j], token_hue(j)).move_to([0.0, y, 0.0])
            name = VGroup(Rectangle(width=0.18, height=cell_h, stroke_width=0, fill_color=token_hue(j),
                                    fill_opacity=1),
                          label(S.clip_token(tokens[j], 7), S.SMALL, S.TOKEN, mono=True, compact=True),
                          label(f"× {N.fmt_pct(float(facts['weights'][j]))}", S.SMALL, S.ATTENTION, mono=True,
                                compact=True)).arrange(RIGHT, buff=GAP.xs)
            name.next_to(v, LEFT, buff=GAP.m).set_y(y)
            self.values.add(v)
            self.scaled.add(s)
            self.names.add(name)
        for n in self.names:       # the names flush right against the strips
            n.align_to(self.names, RIGHT)
        rule_y = -(len(positions) - 1) * pitch - cell_h / 2 - GAP.m
        self.rule = Line([-width / 2, rule_y, 0.0], [width / 2, rule_y, 0.0], color=S.MUTED, stroke_width=2)
        self.output = strip(facts["output"], S.VALUE)
        self.output.next_to(self.rule, DOWN, buff=GAP.m)
        self.sigma = label("Σ", S.BODY_SIZE, S.INK).next_to(self.output, LEFT, buff=GAP.m)
        # the scaled strips stand where the values stand (what the values become): members of the picture so
        # that they move with it; a scene shows the picture's parts, never the whole (values turn into them)
        self.add(self.values, self.scaled, self.names, self.rule, self.output, self.sigma)


def shade(colour, amount: float) -> ManimColor:
    """A colour faded toward the background by `amount` (0: as it is, 1: the background)."""
    return interpolate_color(colour, S.BACKGROUND, amount)


def value_strip(vec, vmax: float, width: float, height: float, outline) -> VGroup:
    """A vector as a strip of cells on the shared diverging scale, in an outline: `[0]` the cells."""
    cell_w = width / max(len(vec), 1)
    cells = VGroup(*[Rectangle(width=cell_w, height=height, stroke_width=0,
                               fill_color=S.diverging(float(x), vmax), fill_opacity=1) for x in vec])
    cells.arrange(RIGHT, buff=0)
    box = Rectangle(width=width, height=height, stroke_width=2, stroke_color=outline, fill_opacity=0).move_to(cells)
    return VGroup(cells, box)


class ProjectionFan(VGroup):
    """One token's row of the head's input going through three projections into three short vectors.

    `.x` (the row: all d cells), `.x_tag` (its token over it), `.arrows[i]`, `.mats[i]` (× W_q … on each
    arrow), `.outs[i]` (q, k, v: dh cells each, framed in their colours), `.letters[i]`, `.roles[i]`
    (what each is for, under its strip); i = 0, 1, 2 for q, k, v.

    Every cell is as wide in the short vectors as in the row (a strip is dh/d of the row's length):
    drawn longer than the row they come from, 64 numbers read as more than 768. The roles start under
    their strips and run on to the picture's right edge, since a strip can be narrower than its words."""

    NAMES = ("q", "k", "v")
    COLOURS = (S.QUERY, S.KEY, S.VALUE)

    def __init__(self, facts: dict, token: str, roles, width: float, x_width: float | None = None,
                 cell_h: float = 0.42, pitch: float = 1.3):
        super().__init__()
        x_width = x_width or width * 0.45
        cell_w = x_width / len(facts["x"])
        self.x = value_strip(facts["x"], facts["x_vmax"], x_width, cell_h, S.RESIDUAL)
        self.x.move_to([-width / 2 + x_width / 2, 0.0, 0.0])
        self.x_tag = label(S.clip_token(token, 9), S.SMALL, S.TOKEN, mono=True, compact=True)
        self.x_tag.next_to(self.x, UP, buff=GAP.s)
        self.outs, self.letters, self.roles, self.arrows, self.mats = VGroup(), VGroup(), VGroup(), VGroup(), VGroup()
        tags = [label(role, S.SMALL, colour) for role, colour in zip(roles, self.COLOURS)]
        room = width / 2 - self.x.get_right()[0]        # right of the row: arrows, letters, strips, roles
        role_w = min(max(t.width for t in tags), room / 2)
        for i, (name, colour, tag) in enumerate(zip(self.NAMES, self.COLOURS, tags)):
            y = (1 - i) * pitch
            out = value_strip(facts[name], facts["vmax"], cell_w * len(facts[name]), cell_h, colour)
            out.move_to([width / 2 - role_w, y, 0.0], aligned_edge=LEFT)
            letter = label(name, S.BODY_SIZE, colour, mono=True, compact=True).next_to(out, LEFT, buff=GAP.s)
            fit_width(tag, role_w)
            tag.next_to(out, DOWN, buff=GAP.xs).align_to(out, LEFT)
            start = self.x.get_right() + RIGHT * GAP.s
            end = letter.get_left() + LEFT * GAP.s
            arrow = Arrow(start, end, buff=0, color=colour, stroke_width=3, max_tip_length_to_length_ratio=0.08)
            mat = label(f"× W_{name}", S.SMALL, colour, mono=True, compact=True)
            # on its arrow, staggered along them so that no two labels meet: q and k above, v below
            mat.move_to(arrow.point_from_proportion((0.4, 0.62, 0.4)[i]) +
                        UP * (GAP.s + mat.height / 2) * (1 if i < 2 else -1))
            self.outs.add(out)
            self.letters.add(letter)
            self.roles.add(tag)
            self.arrows.add(arrow)
            self.mats.add(mat)
        self.add(self.x, self.x_tag, self.arrows, self.mats, self.outs, self.letters, self.roles)


class SoftmaxRow(VGroup):
    """One row of masked scores through the softmax, over its keys: `.scores[i]` (each score, −∞ where
    masked), `.bars[i]` (height eˢ, the tallest `height`; a masked one is flat), `.exps[i]` (eˢ over
    each bar), `.pcts[i]` (the same bar's share of the total, which replaces eˢ), `.tokens`, `.baseline`,
    `.total` (Σ eˢ = …, right of the bars), `.masked` (indices of the −∞ cells)."""

    def __init__(self, facts: dict, tokens, positions, width: float, height: float, total_text: str):
        super().__init__()
        positions = list(positions)
        pitch = width / max(len(positions), 1)
        bar_w = pitch * 0.55
        top = float(facts["exp"].max()) or 1.0
        self.baseline = Line(LEFT * width / 2, RIGHT * width / 2, color=S.MUTED, stroke_width=2)
        self.bars, self.exps, self.pcts, self.tokens, self.scores = VGroup(), VGroup(), VGroup(), VGroup(), VGroup()
        self.masked = []
        for i, j in enumerate(positions):
            x = -width / 2 + pitch * (i + 0.5)
            masked = bool(facts["masked"][j])
            if masked:
                self.masked.append(i)
            h = max(float(facts["exp"][j]) / top * height, 0.02)
            bar = Rectangle(width=bar_w, height=h, stroke_width=0, fill_color=S.WARNING if masked else S.ATTENTION,
                            fill_opacity=0.9).move_to([x, h / 2, 0.0])
            self.bars.add(bar)
            colour = S.WARNING if masked else S.INK
            e = fit_width(label(N.fmt_general(float(facts["exp"][j]), 3), S.SMALL, colour, mono=True, compact=True),
                          pitch)
            e.next_to(bar, UP, buff=GAP.xs).set_x(x)
            self.exps.add(e)
            p = fit_width(label(N.fmt_pct(float(facts["weights"][j])), S.SMALL, colour, mono=True, compact=True),
                          pitch)
            p.move_to(e)
            self.pcts.add(p)
            tok = fit_width(label(S.clip_token(tokens[j], 6), S.SMALL, S.TOKEN, mono=True, compact=True), pitch)
            tok.next_to(self.baseline, DOWN, buff=GAP.s).set_x(x)
            self.tokens.add(tok)
            s = fit_width(label(N.fmt_signed(float(facts["scores"][j]), 2), S.SMALL, colour, mono=True,
                                compact=True), pitch)
            self.scores.add(s)
        for tok, s in zip(self.tokens, self.scores):
            s.next_to(self.tokens, DOWN, buff=GAP.s).set_x(tok.get_x())
        self.total = label(total_text, S.SMALL, S.ATTENTION, mono=True)
        self.add(self.baseline, self.bars, self.exps, self.pcts, self.tokens, self.scores)


class CostSquares(VGroup):
    """An attention layer's FLOPs as squares whose areas are the costs (the largest `side` wide), side
    by side on one baseline: `.squares[i]`, `.names[i]` (the step, under its square), `.flops[i]`
    (its FLOPs, under the name), in the ledger's order."""

    def __init__(self, facts: dict, names, side: float, pitch: float, colours):
        super().__init__()
        self.squares, self.names, self.flops = VGroup(), VGroup(), VGroup()
        n = len(names)
        for i, (s, name, flops, colour) in enumerate(zip(facts["sides"], names, facts["flops"], colours)):
            x = (i - (n - 1) / 2) * pitch * (-1 if S.RTL else 1)     # in reading order
            a = max(float(s) * side, 0.03)
            sq = Rectangle(width=a, height=a, stroke_width=2, stroke_color=colour, fill_color=colour,
                           fill_opacity=0.55).move_to([x, a / 2, 0.0])
            self.squares.add(sq)
            nm = fit_lines(name, S.SMALL, S.INK, pitch - GAP.s, max_lines=2)
            nm.move_to([x, -GAP.s - nm.height / 2, 0.0])
            fl = fit_width(label(N.fmt_int(int(flops)), S.SMALL, S.FLOPS, mono=True), pitch - GAP.s)
            fl.next_to(nm, DOWN, buff=GAP.xs).set_x(x)
            self.names.add(nm)
            self.flops.add(fl)
        self.add(self.squares, self.names, self.flops)


class RopeDials(VGroup):
    """RoPE on the last token's query: each shown pair (data/facts/ch02.py rope_facts) as a dial, its
    two numbers before the turn as a faint arrow and after it as a bright one, the arc between them.

    `.dials[k]`: VGroup(ring, before, after, arc); `.speeds[k]` (its turn per token, over it),
    `.turns[k]` (the last token's angle, under it)."""

    def __init__(self, facts: dict, speed_text, turn_text, radius: float = 0.9, pitch: float = 3.2):
        super().__init__()
        self.dials, self.speeds, self.turns = VGroup(), VGroup(), VGroup()
        for k, p in enumerate(facts["pairs"]):
            centre = np.array([k * pitch, 0.0, 0.0])
            ring = Arc(radius=radius, start_angle=0, angle=2 * np.pi, arc_center=centre, color=S.MUTED, stroke_width=2)
            longest = max(float(np.linalg.norm(p["before"])), 1e-9)
            tip = lambda v: centre + radius * 0.95 * np.array([v[0], v[1], 0.0]) / longest
            before = Arrow(centre, tip(p["before"]), buff=0, color=S.MUTED, stroke_width=4, tip_length=0.16,
                           max_tip_length_to_length_ratio=0.3).set_opacity(0.6)
            after = Arrow(centre, tip(p["after"]), buff=0, color=S.QUERY, stroke_width=6, tip_length=0.18,
                          max_tip_length_to_length_ratio=0.3)
            a0 = float(np.arctan2(p["before"][1], p["before"][0]))
            arc = Arc(radius=radius * 0.45, start_angle=a0, angle=max(np.radians(p["turn"]), 1e-3) % (2 * np.pi) or 1e-3,
                      arc_center=centre, color=S.QUERY, stroke_width=3)
            self.dials.add(VGroup(ring, before, after, arc))
            # wrapped to the dial's pitch (one line shrunk to fit was unreadable at 480p)
            speed = fit_lines(speed_text(p), S.SMALL, S.INK, pitch - GAP.m)
            speed.next_to(ring, UP, buff=GAP.s)
            turn = fit_lines(turn_text(p), S.SMALL, S.QUERY, pitch - GAP.m)
            turn.next_to(ring, DOWN, buff=GAP.s)
            self.speeds.add(speed)
            self.turns.add(turn)
        self.add(self.dials, self.speeds, self.turns)


class HeadGroups(VGroup):
    """Grouped-query attention: the layer's query heads as boxes in groups, each group over the one
    key head and one value head it reads (kv_head[h]); the featured query head and its key/value
    heads lit. `.queries`, `.keys`, `.values` (boxes), `.links` (a line from each query box to its key
    box), `.names` (the rows' names)."""

    def __init__(self, kv_head, featured: int, names, width: float):
        super().__init__()
        H, KV = len(kv_head), max(kv_head) + 1
        gap_groups = 0.35
        # the rows' names at the film's size: the boxes give way to a longer name (Spanish 'cabezas de
        # consulta' squeezed into 1.6 read at about 60% of S.SMALL)
        made = [label(text, S.SMALL, colour) for text, colour in zip(names, (S.QUERY, S.KEY, S.VALUE))]
        names_w = min(max(m.width for m in made), 0.4 * width)
        box = min(0.55, (width - max(1.8, names_w + 0.2) - gap_groups * (KV - 1)) / H)
        xs, x = [], 0.0
        for h in range(H):
            if h and kv_head[h] != kv_head[h - 1]:
                x += gap_groups
            xs.append(x)
            x += box
        mine = kv_head[featured]
        self.queries = VGroup(*[Rectangle(width=box * 0.85, height=box * 0.85, stroke_width=2, stroke_color=S.QUERY,
                                          fill_color=S.QUERY, fill_opacity=0.85 if h == featured else 0.2)
                                .move_to([xs[h], 0, 0]) for h in range(H)])
        centres = [float(np.mean([xs[h] for h in range(H) if kv_head[h] == g])) for g in range(KV)]
        wide = lambda g: (sum(1 for h in kv_head if h == g) * box) * 0.9
        self.keys = VGroup(*[Rectangle(width=wide(g), height=box * 0.7, stroke_width=2, stroke_color=S.KEY,
                                       fill_color=S.KEY, fill_opacity=0.85 if g == mine else 0.2)
                             .move_to([centres[g], -1.3, 0]) for g in range(KV)])
        self.values = VGroup(*[Rectangle(width=wide(g), height=box * 0.7, stroke_width=2, stroke_color=S.VALUE,
                                         fill_color=S.VALUE, fill_opacity=0.85 if g == mine else 0.2)
                               .move_to([centres[g], -1.3 - box * 0.9, 0]) for g in range(KV)])
        self.links = VGroup(*[Line(self.queries[h].get_bottom(), self.keys[kv_head[h]].get_top(), color=S.MUTED,
                                   stroke_width=2) for h in range(H)])
        self.names = VGroup()
        for row, t in zip((self.queries, self.keys, self.values), made):
            fit_width(t, names_w)
            t.next_to(row, S.START, buff=GAP.m)
            self.names.add(t)
        self.add(self.links, self.queries, self.keys, self.values, self.names)


def signed_bars(vec, scale: float, width: float, colour) -> VGroup:
    """A vector as one thin bar per number about a baseline, up for positive, down for negative, a
    bar `scale` high per unit: `[0]` the baseline, `[1]` the bars."""
    pitch = width / max(len(vec), 1)
    base = Line(LEFT * width / 2, RIGHT * width / 2, color=S.MUTED, stroke_width=1.5)
    bars = VGroup()
    for i, v in enumerate(vec):
        h = max(abs(float(v)) * scale, 0.01)
        bar = Rectangle(width=pitch * 0.7, height=h, stroke_width=0, fill_color=colour, fill_opacity=0.9)
        bars.add(bar.move_to([-width / 2 + pitch * (i + 0.5), h / 2 if v >= 0 else -h / 2, 0.0]))
    return VGroup(base, bars)


class NormColumn(VGroup):
    """One head's row through the q/k norm (data/facts/ch02.py qknorm_facts), top to bottom: `.tag`,
    `.before` (its d_head numbers as bars), `.rms` (its rms), `.arrow` and `.step` (÷ rms · × gain),
    `.after` (the norm's output), `.rms_after`. Both rows share one scale, so the change of size shows;
    the tallest bar of the two is `bar_h` high."""

    def __init__(self, row: dict, tag: str, rms_text, step: str, colour, width: float, bar_h: float = 0.5):
        super().__init__()
        scale = bar_h / max(float(np.abs(row["before"]).max()), float(np.abs(row["after"]).max()), 1e-12)
        self.tag = fit_lines(tag, S.SMALL, colour, width)
        self.before = signed_bars(row["before"], scale, width, colour)
        self.rms = label(rms_text(row["rms"][-1]), S.SMALL, S.INK, mono=True)
        self.after = signed_bars(row["after"], scale, width, colour)
        self.rms_after = label(rms_text(row["rms_after"][-1]), S.SMALL, S.INK, mono=True)
        self.step = fit_lines(step, S.SMALL, S.MUTED, width * 0.6)
        # both baselines at x = 0; each part spaced by the bars' reach (bar_h either side of a baseline)
        self.tag.next_to(ORIGIN + UP * bar_h, UP, buff=GAP.s)
        self.rms.next_to(ORIGIN + DOWN * bar_h, DOWN, buff=GAP.xs)
        start = self.rms.get_bottom() + DOWN * GAP.xs
        self.arrow = Arrow(start, start + DOWN * 0.7, buff=0, color=S.MUTED, stroke_width=4, tip_length=0.18)
        self.step.next_to(self.arrow, S.END, buff=GAP.s)
        self.after.shift(UP * (self.arrow.get_bottom()[1] - GAP.xs - bar_h))
        self.rms_after.next_to(self.after[0].get_center() + DOWN * bar_h, DOWN, buff=GAP.xs)
        self.add(self.tag, self.before, self.rms, self.arrow, self.step, self.after, self.rms_after)
