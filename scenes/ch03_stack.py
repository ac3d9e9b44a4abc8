"""Chapter 03 — the full stack: a layer's heads, the MLP, the stack of layers, the logit lens.

Every number comes from the bundle (attention probabilities, MLP activations, lens
tensors) or the ledger (the meter). Dimensions come from the config, so the tiny test
model renders through the same code.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RESAMPLING_ALGORITHMS,
    RIGHT,
    UP,
    AnimationGroup,
    Arrow,
    Create,
    FadeIn,
    FadeOut,
    Group,
    GrowArrow,
    GrowFromEdge,
    ImageMobject,
    LaggedStart,
    Line,
    Polygon,
    Rectangle,
    SurroundingRectangle,
    Transform,
    VGroup,
    VMobject,
    there_and_back,
)

from onepass.data.facts.ch02 import head_facts
from onepass.data.facts.ch03 import (
    head_groups, head_habits, head_panels, lens_facts, mlp_facts, norm_facts, param_facts, rms_facts, settle_layer,
    swiglu_facts, token_mlp_rows,
)
from onepass.scenes import follow
from onepass.scenes import style as S
from onepass.scenes.base import ChapterScene
from onepass.scenes.follow import Swell, change
from onepass.scenes.layout import GAP, above, below, fit_to, place_in, table
from onepass.scenes.pictures_ch03 import norm_picture, token_paths
from onepass.scenes.text import LEGIBLE, fit_lines, fit_width, label
from onepass.scenes.widgets import AttentionArcs, NumberGrid, TokenChip, layer_window, token_window, window
from onepass.words import numbers as N


def rgb_image(colours: np.ndarray, height: float | None = None, width: float | None = None) -> ImageMobject:
    """An [h, w, 3] float array of colours in 0..1 as a crisp (nearest-neighbour) image."""
    img = ImageMobject(np.clip(np.round(colours * 255), 0, 255).astype(np.uint8))
    img.set_resampling_algorithm(RESAMPLING_ALGORITHMS["nearest"])
    if height is not None:
        img.height = height
    if width is not None:
        img.width = width
    return img


def pattern_colours(p: np.ndarray) -> np.ndarray:
    """A T x T attention pattern on the shared sequential scale; the masked future as background."""
    T = p.shape[0]
    out = np.zeros((T, T, 3))
    bg = np.array(S.BACKGROUND.to_rgb())
    for i in range(T):
        for j in range(T):
            out[i, j] = S.sequential(float(p[i, j])).to_rgb() if j <= i else bg
    return out


# the thing a sentence names, lit up (scenes/follow.py), a little tighter around this chapter's cells
glow = partial(follow.glow, buff=GAP.xxs)



def signed_colours(values: np.ndarray, rows: int, vmax: float) -> np.ndarray:
    """A vector folded row-major into `rows` rows, on the shared diverging scale (padding = background)."""
    n = len(values)
    cols = math.ceil(n / rows)
    out = np.tile(np.array(S.BACKGROUND.to_rgb()), (rows * cols, 1))
    out[:n] = [S.diverging(float(v), vmax).to_rgb() for v in values]
    return out.reshape(rows, cols, 3)


class StackScene(ChapterScene):
    chapter = "03"

    def setup(self):
        super().setup()
        shape = self.bundle.shape
        self.L, self.H, self.d = shape.n_layer, shape.n_head, shape.n_embd
        self.dh, self.dff = shape.d_head, shape.d_ff
        self.gqa = shape.kv_heads < shape.n_head          # query heads grouped over fewer key/value heads
        self.swiglu = shape.mlp == "swiglu"               # a gated MLP: three matrices
        self.rmsnorm = shape.norm == "rmsnorm"

    def meter_opening(self):
        """The meter before the MLP's first product: GPT-2's W_up, a gated MLP's W_gate."""
        if self.meter_start == "L0.mlp_up" and self.bundle.shape.mlp == "swiglu":     # asked before setup()
            return self.ledger.before("L0.mlp_gate"), ""
        return super().meter_opening()

    def floor_words(self) -> dict:
        """The words on the stack (floors()): each floor's name, its two blocks', the stream's."""
        return {"layers": [self.text("floor-name", layer=l + 1) for l in range(self.L)],
                "attn": self.text("floor-attn"), "mlp": self.text("mlp"), "stream": self.text("stream"),
                "gap": lambda first, last: self.text("floor-gap", count=last - first + 1, first=first, last=last)}


# ---------------------------------------------------------------------------
class Heads(StackScene):
    """Layer 1's heads as small multiples (grid and arcs) side by side; the width split d = H x d_head."""
    meter_start = "L0.mlp_up"
    show_title = True

    ARCS = 1.05          # an arcs panel's width, in heatmap widths

    def cell(self, h: int, size: float, featured: int, habit: str) -> Group:
        """One head: its T x T pattern as a heatmap, beside it the same weights as lines (query dots on
        the left, key dots on the right, each row's dot level with its heatmap row), titled with
        what it mostly reads (onepass.data.facts.ch03.head_habits)."""
        b, T = self.bundle, self.bundle.T
        p = b["probs"][0, h]
        img = rgb_image(pattern_colours(p), height=size)
        frame = Rectangle(width=size, height=size, stroke_color=S.MUTED, stroke_width=1.5).move_to(img)
        pitch = size / T
        arcs = AttentionArcs(p, positions=list(range(T)), layout="columns", width=size * self.ARCS,
                             height=pitch * max(T - 1, 1), max_stroke=min(6.0, 40 * pitch),
                             dot_radius=min(0.045, pitch * 0.3))
        arcs.next_to(frame, RIGHT, buff=GAP.s).match_y(frame)
        title = label(self.text("head-title", head=h + 1, habit=habit), S.SMALL, S.TOKEN if h == featured else S.MUTED)
        body = Group(frame, arcs)      # its start edge: the frame's left, or the arcs' right in an RTL film
        title.next_to(frame, UP, buff=GAP.xs).align_to(body, S.START)     # may reach into the gap after it
        cell = Group(img, frame, arcs, title)
        cell.img, cell.frame, cell.arcs, cell.title, cell.body = img, frame, arcs, title, body
        cell.title_words = (self.text("head-title", head=h + 1, habit=habit), S.TOKEN if h == featured else S.MUTED)
        return cell

    def panels(self, extra: float = 0.0) -> tuple[Group, dict]:
        """`extra`: more room kept below for a key that wraps to more lines."""
        b, T = self.bundle, self.bundle.T
        featured = head_facts(b)["head_index"]
        heads = head_panels(b, featured)     # every head, or a window of them holding the followed one
        H = len(heads)
        cols = min(H, max(4, math.ceil(H / 3)))
        if self.gqa and self.bundle.shape.group <= cols:     # a row holds whole groups of query heads
            g = self.bundle.shape.group
            cols = g * max(1, round(cols / g))
        n_rows = math.ceil(H / cols)
        gap_x, gap_y, title_h = 0.5, 0.25, 0.38
        if self.gqa:      # each group's outline takes GAP.xs on either side: rows kept that much further apart
            gap_y += GAP.xs + GAP.xs      # (at 0.25 two outlines a row apart all but touched)
        avail_w, avail_h = S.TEXT_W - 0.6, S.CONTENT_H - 0.95 - extra       # room for the key and legend below
        size = min(1.9, (avail_h - n_rows * title_h - (n_rows - 1) * gap_y) / n_rows,
                   ((avail_w - (cols - 1) * gap_x) / cols - GAP.s) / (1 + self.ARCS))
        show_labels = size / T >= 0.27     # a row label per token only when a cell is tall enough
        names = {"first token": self.text("habit-first"), "token before": self.text("habit-before"),
                 "itself": self.text("habit-itself"), "spread out": self.text("habit-spread")}
        habits = [names[h["habit"]] for h in head_habits(b)]      # onepass.data.facts.ch03's habit, in words
        cells = Group(*[self.cell(h, size, featured, habits[h]) for h in heads])
        # columns a title's width apart where the width allows (a title may reach over the gap to
        # its right); a title still too long shrinks
        cell_w = max(Group(c.img, c.frame, c.arcs).width for c in cells)
        pitch = cell_w + min(max(gap_x, max(c.title.width for c in cells) + 0.25 - cell_w),
                             (avail_w - cols * cell_w) / max(cols - 1, 1))
        row_h = max(c.height for c in cells) + gap_y
        for k, c in enumerate(cells):
            if S.SMALL * (pitch - 0.25) / c.title.width < LEGIBLE * S.SMALL:    # would shrink away: wrap it
                words, colour = c.title_words
                wrapped = fit_lines(words, S.SMALL, colour, pitch - 0.25, max_lines=2)
                wrapped.next_to(c.frame, UP, buff=GAP.xs).align_to(c.body, S.START)
                c.remove(c.title)
                c.title = wrapped
                c.add(wrapped)
            fit_width(c.title, pitch - 0.25).align_to(c.body, S.START)
            row, col = divmod(k, cols)
            col = cols - 1 - col if S.RTL else col      # heads in reading order: from the right in an RTL film
            # the frame's left edge at its column's x, the cell's top at its row's y
            c.shift(RIGHT * col * pitch + DOWN * row * row_h - c.frame.get_left() * RIGHT - c.get_top() * UP)
        labels = VGroup()
        if show_labels:
            for r in range(n_rows):
                # the tokens beside the heatmaps' rows, left of the row's leftmost frame (its first, or in an
                # RTL film its last)
                first = min((c.frame for c in cells[r * cols:(r + 1) * cols]), key=lambda f: f.get_left()[0])
                for i, tok in enumerate(b.tokens):
                    t = fit_width(label(S.clip_token(tok, 8), S.SMALL, S.TOKEN, mono=True), 1.2)
                    t.next_to(first, LEFT, buff=GAP.xs).set_y(first.get_top()[1] - (i + 0.5) * size / T)
                    labels.add(t)
        # grouped-query attention: one outline round the heads that read one key/value head
        boxes = VGroup()
        if self.gqa:
            for run in head_groups(b, heads):
                members = Group(*[Group(cells[heads.index(h)].frame, cells[heads.index(h)].arcs,
                                        cells[heads.index(h)].title) for h in run])
                boxes.add(SurroundingRectangle(members, color=S.KEY, buff=GAP.xs, stroke_width=2.5))
            # one width for every outline: a longer title (Spanish 'primer token') widened only its own group's
            left, right = min((x.get_left()[0] for x in boxes), default=0.0), max((x.get_right()[0] for x in boxes), default=0.0)
            for x in boxes:
                x.stretch_to_fit_width(right - left).set_x((left + right) / 2)
        group = Group(cells, labels, boxes)
        place_in(group, S.CONTENT.with_(bottom=S.CONTENT.bottom + 0.9 + extra))
        return group, {"featured": featured, "slot": heads.index(featured), "heads": heads,
                       "show_labels": show_labels, "cells": cells, "labels": labels, "boxes": boxes}

    def build(self):
        b = self.bundle
        with self.beat("heads") as beat:
            _group, parts = self.panels()
            key_text = self.text("grid-key") if parts["show_labels"] else self.text("grid-key-all", T=b.T)
            key = fit_lines(key_text, S.SMALL, S.MUTED, S.TEXT_W)
            extra = key.height - label(key_text, S.SMALL, S.MUTED).height    # 0 unless the key wraps
            group_key = None
            if self.gqa:     # what the outlines mean, a line of its own over the foot
                group_key = fit_lines(self.text("group-key", group=self.bundle.shape.group, kv=self.bundle.shape.kv_heads),
                                      S.SMALL, S.KEY, S.TEXT_W)
                extra += group_key.height + GAP.s
            if extra > 1e-6:     # a key in more lines: the panels make room for it
                _group, parts = self.panels(extra)
            cells, f = parts["cells"], parts["featured"]
            one = cells[parts["slot"]]
            place_in(key, S.CONTENT, DOWN)
            # the head's name inside the mark: around the picture alone its edge ran along the name's foot
            mark = SurroundingRectangle(Group(one.frame, one.arcs, one.title), color=S.TOKEN, buff=GAP.xs, stroke_width=4)
            note = label(self.text("followed-note", head=f + 1), S.SMALL, S.TOKEN)
            legend = self.sequential_legend()
            shown = parts["heads"]
            if len(shown) < self.H:      # a window of the heads: which ones, of how many
                legend = VGroup(label(self.text("heads-shown", first=shown[0] + 1, last=shown[-1] + 1, n=self.H),
                                      S.SMALL, S.ATTENTION), legend).arrange(S.END, buff=GAP.xl)
            foot = above(VGroup(note, legend).arrange(S.END, buff=GAP.xl), key, buff=GAP.s)
            fit_width(foot, S.TEXT_W)
            if group_key is not None:
                above(group_key, foot, buff=GAP.s)
                legend = VGroup(group_key, legend)      # shown with the key (and gone with it)
            # "Chapter two followed one head": that head alone, large, in the middle
            home, k = one.get_center(), min(2.2, 3.6 / one.height)
            place_in(one.scale(k), S.CONTENT)
            self.play(FadeIn(one), run_time=beat.span(0.7))
            # "How does the model build a prediction out of many?": it takes its place among empty frames
            beat.at("question")
            others = [c for c in cells if c is not one]
            self.play(one.animate.scale(1 / k).move_to(home), run_time=beat.span(0.3))
            self.play(LaggedStart(*[FadeIn(c.frame) for c in others], lag_ratio=0.1), run_time=beat.span(0.6))
            # "Layer one runs H of them at once": the others fill in
            beat.at("side")
            self.play(LaggedStart(*[FadeIn(Group(c.img, c.arcs, c.title), shift=UP * GAP.xs) for c in others],
                                  lag_ratio=0.15), FadeIn(parts["labels"]), run_time=beat.span(0.85))
            if self.gqa:     # "... in groups of g that share one key and value head": the groups outlined
                beat.at("groups")
                self.play(LaggedStart(*[Create(box) for box in parts["boxes"]], lag_ratio=0.3),
                          run_time=beat.span(0.8))
            # "... as a grid and as lines": the key says how to read both
            beat.at("grid")
            self.play(FadeIn(key), FadeIn(legend), run_time=beat.span(0.3))
            self.play(LaggedStart(*[Swell(c.arcs, color=S.ATTENTION, scale_factor=1.08) for c in cells],
                                  lag_ratio=0.1), run_time=beat.span(0.8))
            # "The title above each names what it mostly reads"
            beat.at("titles")
            self.play(LaggedStart(*[Swell(c.title, color=S.INK, scale_factor=1.0) for c in cells],   # no growth: neighbours are close
                                  lag_ratio=0.1), run_time=beat.span(0.85))
            if not self.bundle.synthetic:    # "many park it on the first token": every grid's first column lit
                beat.at("sink")
                sinks = VGroup(*[Rectangle(width=c.frame.width / b.T, height=c.frame.height, stroke_color=S.TOKEN,
                                           stroke_width=2.5, fill_color=S.TOKEN, fill_opacity=0.25)
                                 .align_to(c.frame, LEFT).align_to(c.frame, UP) for c in cells])
                self.play(FadeIn(sinks), run_time=beat.span(0.4))
                self.play(FadeOut(sinks), run_time=beat.span(0.5))
            # "Head N is the one we followed"
            beat.at("followed")
            self.play(FadeIn(mark), FadeIn(note), run_time=beat.span(0.6))
            if self.bundle.synthetic:        # random weights: point at the patterns the line calls chance
                beat.at("chance")
                self.play(LaggedStart(*[Swell(c.frame, color=S.WARNING, scale_factor=1.05) for c in cells],
                                      lag_ratio=0.12), run_time=beat.span(0.85))
        with self.beat("split") as beat:
            # titles and token labels would shrink below legible size: the slices below name the heads
            small_text = Group(*[c.title for c in cells], parts["labels"])
            panels = Group(*[Group(c.img, c.frame, c.arcs) for c in cells], mark, parts["boxes"])
            # "The heads share the width rather than copy it": the width as one bar
            whole, split, after = self.width_split(f)
            self.play(FadeOut(key), FadeOut(foot), FadeOut(small_text),
                      *([FadeOut(group_key)] if group_key is not None else []), run_time=beat.span(0.1))
            tall = 2.3
            if self.gqa:     # the key/value slices hang under the bar: the panels give up that height
                tall = min(tall, S.CONTENT.height - split.height - after.height - GAP.l - GAP.l)
            self.play(panels.animate.scale(min(1.0, tall / panels.height)).move_to(S.CONTENT.point(UP), aligned_edge=UP),
                      run_time=beat.span(0.3))
            below(Group(whole, split), panels, buff=GAP.l)
            below(after, split, buff=GAP.l)
            whole.move_to(split.segs)
            self.play(FadeIn(whole), run_time=beat.span(0.6))
            # "... cut into H slices of d_head": the bar splits, one slice per head
            beat.at("slices")
            self.play(FadeIn(split[0]), FadeOut(whole), run_time=beat.span(0.2))
            self.play(LaggedStart(*[FadeIn(s) for s in split[1]], lag_ratio=0.1), run_time=beat.span(0.8))
            if self.gqa:     # "keys and values get only KV slices, each read by g query heads"
                beat.at("shared")
                kv = split.kv
                self.play(FadeIn(kv.title), LaggedStart(*[FadeIn(s) for s in kv.segs], lag_ratio=0.2),
                          run_time=beat.span(0.4))
                self.play(LaggedStart(*[Create(w) for w in kv.wires], lag_ratio=0.05), run_time=beat.span(0.5))
            # "Their outputs are laid side by side again ... already paid for every head"
            beat.at("paid")
            self.play(FadeIn(after, shift=UP * GAP.xs), run_time=beat.span(0.3))
            beat.at("paid", 0.55)
            self.play(Swell(self.meter.counter, color=S.FLOPS, scale_factor=1.1), run_time=beat.span(0.7))

    def sequential_legend(self, width: float = 2.4) -> VGroup:
        n = 24
        bar = VGroup(*[Rectangle(width=width / n, height=0.16, stroke_width=0, fill_color=S.sequential(i / (n - 1)),
                                 fill_opacity=1) for i in range(n)]).arrange(RIGHT, buff=GAP.none)
        lo = label(N.fmt_pct(0.0), S.SMALL, S.MUTED, mono=True).next_to(bar, LEFT, buff=GAP.xs)
        hi = label(N.fmt_pct(1.0), S.SMALL, S.MUTED, mono=True).next_to(bar, RIGHT, buff=GAP.xs)
        return VGroup(lo, bar, hi)

    def width_split(self, featured: int) -> tuple[VGroup, VGroup, VGroup]:
        """d numbers as one bar; the same bar as H slices of d_head, the followed one lit; the note after."""
        H, d, dh = self.H, self.d, self.dh
        total_w = 12.0
        seg_w = total_w / H
        bar = Rectangle(width=total_w, height=0.5, stroke_color=S.MUTED, stroke_width=2, fill_color=S.ATTENTION,
                        fill_opacity=0.3)
        whole = VGroup(bar, label(self.text("width-whole", d=d), S.SMALL, S.INK).move_to(bar))
        title = label(self.text("width-split", count=H, d=d, dh=dh), S.BODY_SIZE, S.INK)
        segs = VGroup()
        for h in range(H):
            box = Rectangle(width=seg_w, height=0.5, stroke_color=S.BACKGROUND, stroke_width=2,
                            fill_color=S.ATTENTION, fill_opacity=0.85 if h == featured else 0.3)
            txt = fit_width(label(str(dh), S.SMALL, S.ink_on(S.ATTENTION, box.get_fill_opacity()), mono=True),
                            seg_w - 0.1).move_to(box)
            num = fit_width(label(str(h + 1), S.SMALL, S.TOKEN if h == featured else S.MUTED, mono=True),
                            seg_w - 0.05).next_to(box, DOWN, buff=GAP.xs)
            segs.add(VGroup(box, txt, num))
        segs.arrange(S.END, buff=GAP.none)       # head 1 where the reader starts, as the panels above it
        title.next_to(segs, UP, buff=GAP.s)
        after = fit_lines(self.text("width-after", n_head=H, dh=dh, d=d), S.SMALL, S.MUTED, S.TEXT_W)
        split = VGroup(title, segs)
        split.segs = segs
        if self.gqa:     # the key/value heads: one slice of d_head under each group of query slices
            shape = self.bundle.shape
            kv_segs, wires = VGroup(), VGroup()
            for k in range(shape.kv_heads):
                box = Rectangle(width=seg_w, height=0.5, stroke_color=S.BACKGROUND, stroke_width=2,
                                fill_color=S.KEY, fill_opacity=0.85 if k == shape.kv_head_of(featured) else 0.3)
                txt = fit_width(label(str(dh), S.SMALL, S.ink_on(S.KEY, box.get_fill_opacity()), mono=True),
                                seg_w - 0.1).move_to(box)
                members = [segs[h][0] for h in range(H) if shape.kv_head_of(h) == k]
                box.next_to(VGroup(*members), DOWN, buff=1.0).match_x(VGroup(*members))
                txt.move_to(box)
                kv_segs.add(VGroup(box, txt))
                wires.add(*[Line(m.get_bottom() + DOWN * 0.3, box.get_top(), color=S.KEY, stroke_width=2)
                            for m in members])
            kv_title = label(self.text("width-kv", kv=shape.kv_heads, dh=dh,
                                       width=shape.kv_heads * dh), S.SMALL, S.KEY)
            kv_title.next_to(kv_segs, DOWN, buff=GAP.s)
            kv = VGroup(kv_segs, wires, kv_title)
            kv.segs, kv.wires, kv.title = kv_segs, wires, kv_title
            split.add(kv)
            split.kv = kv
        return whole, split, after


# ---------------------------------------------------------------------------
class Mlp(StackScene):
    """One token through layer 1's MLP: d -> 4d (GELU) -> d, and the parameter count."""
    meter_start = "L0.mlp_up"

    HIDDEN_W = 12.0

    def blocks(self, f: dict):
        """Three blocks with equal cells: input (d), hidden (d_ff), output (d)."""
        rows = max(1, round(math.sqrt(self.dff / self.HIDDEN_W)))
        cell = self.HIDDEN_W / math.ceil(self.dff / rows)
        vmax_in = float(np.abs(f["x"]).max()) or 1.0
        vmax_h = float(np.abs(f["hidden"]).max()) or 1.0
        vmax_out = float(np.abs(f["out"]).max()) or 1.0
        make = lambda v, vmax: rgb_image(signed_colours(v, rows, vmax), width=math.ceil(len(v) / rows) * cell)
        return make(f["x"], vmax_in), make(f["hidden"], vmax_h), make(f["out"], vmax_out)

    def fan(self, top, bottom, text: str) -> VGroup:
        poly = Polygon(top.get_corner(DOWN + LEFT), top.get_corner(DOWN + RIGHT),
                       bottom.get_corner(UP + RIGHT), bottom.get_corner(UP + LEFT),
                       stroke_width=0, fill_color=S.MLP, fill_opacity=0.18)
        t = fit_width(label(text, S.SMALL, S.MLP), 9.0).move_to(poly)
        return VGroup(poly, t)

    def side_label(self, block, lines: list[tuple[str, object]]) -> VGroup:
        g = VGroup(*[label(text, S.SMALL, colour) for text, colour in lines]).arrange(DOWN, buff=GAP.xs,
                                                                                       aligned_edge=S.END)
        if S.SMALL * 4.6 / g.width < LEGIBLE * S.SMALL:     # would shrink away: each line wraps instead
            g = VGroup(*[fit_lines(text, S.SMALL, colour, 4.6) for text, colour in lines]).arrange(
                DOWN, buff=GAP.xs, aligned_edge=S.END)
        fit_width(g, 4.6)
        return g.next_to(block, S.START, buff=GAP.l)      # the block's name where its reader starts

    def value_window(self, values, block, n: int, name: str) -> VGroup:
        """The first `n` of a vector's numbers beside its block; `name`: "x" (the input) or "out"."""
        shown, total = len(window(len(values), n)[0]), N.fmt_int(len(values))
        caption = (self.text("window-x", shown=shown, n=total) if name == "x"
                   else self.text("window-out", shown=shown, n=total))
        g = NumberGrid(np.asarray(values)[None, :], max_cols=n, shape_text=caption)
        room = abs(S.CONTENT.point(S.END)[0] - block.get_edge_center(S.END)[0]) - GAP.l
        if g.width > room and n > 4:     # a wide block (a gated MLP's) leaves less room: fewer numbers, not smaller
            return self.value_window(values, block, n - 1, name)
        width = min(5.0, room)
        if (g.width > width and g.shape_mob.font_size * width / g.width < LEGIBLE * S.SMALL
                and ": " in caption):
            # a longer caption (Spanish 'salida: primeros 3 de 576') would shrink below the film's floor:
            # its name above its count, on two lines, rather than smaller
            g = NumberGrid(np.asarray(values)[None, :], max_cols=n, shape_text=caption.replace(": ", ":\n", 1))
        return fit_width(g, width).next_to(block, S.END, buff=GAP.l)

    def build(self):
        b, d, dff = self.bundle, self.d, self.dff
        f = mlp_facts(b)
        tok = S.show_token(b.tokens[f["token"]])
        x_img, h_img, o_img = self.blocks(f)
        # input, hidden and output top to bottom, the fans between them
        place_in(Group(x_img, h_img, o_img).arrange(DOWN, buff=GAP.xl), S.CONTENT, UP, buff=GAP.xs)
        with self.beat("mlp_in") as beat:
            # "Attention moved information between tokens": the tokens' rows, attention's lines between them
            paths = token_paths(self, token_mlp_rows(b))
            rows = paths.rows
            self.play(LaggedStart(*[FadeIn(Group(r.chip, r.x), shift=RIGHT * GAP.xs) for r in rows], lag_ratio=0.15),
                      FadeIn(paths.heads[0]), run_time=beat.span(0.35))
            self.play(Create(paths.mix), run_time=beat.span(0.6))
            # "The MLP works on each token alone": the lines go; each row widens on its own
            beat.at("alone")
            self.play(FadeOut(paths.mix), run_time=beat.span(0.2))
            self.play(LaggedStart(*[FadeIn(Group(r.up, r.h), shift=RIGHT * GAP.xs) for r in rows], lag_ratio=0.2),
                      FadeIn(paths.heads[1]), run_time=beat.span(0.8))
            # "Every token's row goes through the same weights": the matrices named once, for every row
            beat.at("same")
            self.play(LaggedStart(*[FadeIn(Group(r.down, r.out), shift=RIGHT * GAP.xs) for r in rows], lag_ratio=0.2),
                      FadeIn(paths.heads[2]), run_time=beat.span(0.5))
            self.play(FadeIn(paths.weights), *[FadeIn(w.bar) for w in paths.weights], FadeIn(paths.same),
                      run_time=beat.span(0.6))
            # "This is where the token thinks over what it gathered": the hidden column lit
            beat.at("why")
            hidden = glow(Group(*[r.h for r in rows]), S.MLP)
            self.play(FadeIn(hidden), run_time=beat.span(0.5))
            self.play(Swell(paths.heads[1], color=S.MLP, scale_factor=1.1), run_time=beat.span(0.8))
        with self.beat("norm") as beat:
            # "Before each half of the layer, LayerNorm steadies the numbers": the row as a histogram
            nf = rms_facts(b) if self.rmsnorm else norm_facts(b)
            pic = norm_picture(self, nf)
            self.play(FadeOut(paths), FadeOut(hidden), run_time=beat.span(0.15))
            self.play(FadeIn(pic.axis), FadeIn(pic.ticks), GrowFromEdge(pic.raw, DOWN), run_time=beat.span(0.8))
            # "Here is <token>'s row ...: a spread of s": its mean and spread named
            beat.at("row")
            self.play(FadeIn(pic.raw_note, shift=UP * GAP.xs), FadeIn(glow(pic.raw, S.RESIDUAL),
                                                                   rate_func=there_and_back, remover=True),
                      *([FadeIn(pic.tokens)] if self.rmsnorm else []), run_time=beat.span(0.6))
            # "LayerNorm shifts them to average zero and a spread of about one": the same numbers, normalised
            beat.at("rescale")
            self.play(Transform(pic.raw, pic.normed), change(pic.raw_note, pic.normed_note),
                      run_time=beat.span(0.7))
            if self.rmsnorm:     # "Unlike LayerNorm it takes no mean off …" (a 10 s still): the note whose
                beat.at("mean")      # mean stayed; "… only a learned gain per number follows": the bars it scales
                self.play(Swell(pic.raw_note, color=S.RESIDUAL, scale_factor=1.05), run_time=beat.span(0.5))
                beat.at("gain")
                self.play(Swell(pic.raw, color=S.RESIDUAL, scale_factor=1.03), run_time=beat.span(0.7))
            # "Without it, sizes drift as the layers stack up": the stream's spread layer by layer
            beat.at("drift")
            stream, after = pic.charts
            self.play(FadeIn(stream.head), FadeIn(stream[1]), LaggedStart(*[GrowFromEdge(bar, DOWN) for bar in stream.bars],
                                                                          lag_ratio=0.1), FadeIn(stream.ends),
                      run_time=beat.span(0.85))
            # "... yet every layer reads numbers of one size": after LayerNorm, level
            beat.at("level")
            self.play(FadeIn(after.head), FadeIn(after[1]), LaggedStart(*[GrowFromEdge(bar, DOWN) for bar in after.bars],
                                                                        lag_ratio=0.1), FadeIn(after.ends),
                      run_time=beat.span(0.85))
            # "That stability is what lets a deep stack be trained": both charts lit
            beat.at("train")
            self.play(FadeIn(glow(after.bars, S.INK), rate_func=there_and_back, remover=True),
                      Swell(after.head, color=S.INK, scale_factor=1.05), run_time=beat.span(0.8))
        x_lab = self.side_label(x_img, [(self.text("input-name", token=tok), S.TOKEN),
                                        (self.text("input-shape-rms" if self.rmsnorm else "input-shape", d=d), S.INK)])
        with self.beat("mlp_up") as beat:
            # "A matrix widens them to d_ff, and GELU bends each one"
            up = self.fan(x_img, h_img, self.text("fan-up-swiglu" if self.swiglu else "fan-up", d=d, dff=N.fmt_int(dff)))
            shown = len(window(dff, 9)[0])
            h_win = NumberGrid(f["hidden"][None, :], max_cols=9,
                               shape_text=self.text("hidden-window-swiglu" if self.swiglu else "hidden-window",
                                                    shown=shown, n=N.fmt_int(dff)))
            fit_width(h_win, 10.0).move_to(o_img).shift(S.END * GAP.m)     # room for its name before it
            h_name = label(self.text("hidden-name"), S.SMALL, S.MLP).next_to(h_win.cell_group, S.START, buff=GAP.m)
            pos = label(self.text("count-positive", count=f["n_pos"], n=N.fmt_int(f["n_pos"])), S.SMALL, S.POSITIVE,
                        mono=True)
            neg = label(self.text("count-negative", count=f["n_neg"], n=N.fmt_int(f["n_neg"])), S.SMALL, S.NEGATIVE,
                        mono=True)
            rng = label(self.text("range", n=N.fmt_int(dff), min=N.fmt_signed(f["min"], 2), max=N.fmt_signed(f["max"], 2)),
                        S.SMALL, S.MUTED, mono=True)
            counts = VGroup(pos, neg, rng).arrange(S.END, buff=GAP.l)
            fit_width(counts, S.TEXT_W).move_to(UP * S.FOOTER_Y)
            self.play(FadeOut(Group(pic.axis, pic.ticks, pic.raw, pic.raw_note, pic.charts,
                                    *([pic.tokens] if self.rmsnorm else []))), FadeIn(x_img),
                      FadeIn(x_lab), FadeIn(up), run_time=beat.span(0.25))
            self.play(FadeIn(h_img, shift=DOWN * GAP.xs), run_time=beat.span(0.35))
            # a gated MLP pays its gate and its up product together (two matrices into the hidden block)
            # (each key written out: the handout reads what a chapter pays from these calls)
            if self.swiglu:
                self.pay("L0.mlp_gate", through="L0.mlp_up", run_time=beat.span(0.9))
                # "One is the gate, bent by SiLU; the other, up, …" (an 8 s still): the two matrices' fan;
                beat.at("gate")
                self.play(Swell(up, color=S.MLP, scale_factor=1.03), run_time=beat.span(0.4))
                beat.at("times")     # "… the two are multiplied number by number": the block of their products
                self.play(Swell(h_img, color=S.MLP, scale_factor=1.03), run_time=beat.span(0.7))
            else:
                self.pay("L0.mlp_up", through="L0.mlp_up", run_time=beat.span(0.9))
            # "Of these d_ff activations, n came out positive and m negative"
            beat.at("counts")
            self.play(FadeIn(h_win), FadeIn(h_name), run_time=beat.span(0.3))
            # a faint tint: at glow's 22% the coloured counts under it read at 4.1:1 (WCAG 1.4.3)
            lit_up = VGroup(*[glow(m, c, opacity=0.06) for m, c in ((pos, S.POSITIVE), (neg, S.NEGATIVE), (rng, S.MUTED))])
            self.play(Swell(h_img, color=S.MLP, scale_factor=1.03), run_time=beat.span(0.6))
            # "Of these activations, n came out positive": the counts, the negatives' halfway in
            beat.at("positive")
            self.play(FadeIn(pos, shift=UP * GAP.xs), FadeIn(lit_up[0]), run_time=beat.span(0.35))
            beat.at("positive", 0.5)
            self.play(FadeIn(neg, shift=UP * GAP.xs), FadeIn(lit_up[1]), run_time=beat.span(0.8))
            # "none is below <min>"
            beat.at("below")
            self.play(FadeIn(rng, shift=UP * GAP.xs), FadeIn(lit_up[2]), run_time=beat.span(0.5))
            self.play(Swell(rng, color=S.NEGATIVE, scale_factor=1.08), run_time=beat.span(0.8))
        with self.beat("mlp_down") as beat:
            # "A second matrix folds the d_ff back to d"
            down = self.fan(h_img, o_img, self.text("fan-down", dff=N.fmt_int(dff), d=d))
            o_lab = self.side_label(o_img, [(self.text("output-shape", d=d), S.INK),
                                            (self.text("output-note"), S.RESIDUAL)])
            o_win = self.value_window(f["out"], o_img, 5, "out")
            self.play(FadeOut(h_win), FadeOut(h_name), FadeOut(lit_up), run_time=beat.span(0.15))
            self.play(FadeIn(down), FadeIn(o_img, shift=DOWN * GAP.xs), run_time=beat.span(0.8))
            # "The result is added to the residual stream"
            beat.at("residual")
            self.play(FadeIn(o_lab), FadeIn(o_win), run_time=beat.span(0.7))
            # "the two products cost N FLOPs"
            beat.at("flops")
            self.pay("L0.mlp_down", run_time=beat.span(0.9))
        with self.beat("params") as beat:
            self.play(*[FadeOut(m) for m in (x_img, x_lab, up, h_img, counts, down, o_img, o_lab, o_win)],
                      run_time=beat.span(0.15))
            (head, attn_row, mlp_row), ratio = self.param_bars()
            # "The MLP holds N parameters per layer"
            self.play(FadeIn(head), FadeIn(mlp_row[0]), GrowFromEdge(mlp_row[1], LEFT), FadeIn(mlp_row[2:]),
                      run_time=beat.span(0.8))
            # "Attention holds M"
            beat.at("attention")
            self.play(FadeIn(attn_row[0]), GrowFromEdge(attn_row[1], LEFT), FadeIn(attn_row[2:]),
                      run_time=beat.span(0.8))
            # "The MLP is r times the size"
            beat.at("ratio")
            self.play(FadeIn(ratio, shift=UP * GAP.xs), run_time=beat.span(0.4))
            self.play(Swell(ratio, color=S.MLP, scale_factor=1.08), run_time=beat.span(0.8))
            if self.swiglu:      # "three matrices at r × d hold what two hold at 4 × d": the two-matrix bar
                beat.at("gelu")
                two = self.two_matrix_bar(mlp_row, ratio)
                self.play(FadeIn(two[0]), GrowFromEdge(two[1], LEFT), FadeIn(two[2:]), run_time=beat.span(0.5))
                self.play(Swell(two[2], color=S.MLP, scale_factor=1.1), Swell(mlp_row[2], color=S.MLP, scale_factor=1.1),
                          run_time=beat.span(0.8))

    def two_matrix_bar(self, mlp_row, ratio) -> VGroup:
        """Under the gated MLP's bar: what GPT-2's two matrices at 4 × d would hold at this width, to the
        same scale (its length in the MLP bar's units), named and counted, its formula beneath."""
        sw = swiglu_facts(self.bundle, self.ledger)
        d, bar = self.d, mlp_row[1]
        name = label(self.text("params-two"), S.SMALL, S.MUTED)
        two = Rectangle(width=bar.width * sw["two_at_4d"] / sw["three"], height=0.3, stroke_color=S.MLP,
                        stroke_width=2, fill_color=S.MLP, fill_opacity=0.2)
        num = label(N.fmt_int(sw["two_at_4d"]), S.SMALL, S.INK, mono=True)
        form = label(f"2 · {d}·{4 * d}", S.SMALL, S.MUTED, mono=True)
        two.next_to(ratio, DOWN, buff=GAP.m).align_to(bar, LEFT)
        num.next_to(two, RIGHT, buff=GAP.s)
        below(form, two, buff=GAP.xs, aligned=LEFT)      # under its bar, as the other bars' formulas (beside it
        name.next_to(two, LEFT, buff=GAP.m)               # the number, it ran off the frame's edge)
        g = VGroup(name, two, num, form)
        if g.get_bottom()[1] < S.CONTENT.bottom:
            g.shift(UP * (S.CONTENT.bottom - g.get_bottom()[1]))
        return g

    def param_bars(self) -> VGroup:
        p = param_facts(self.bundle)
        d, dff = self.d, self.dff
        rows = VGroup()
        spec = ((self.text("attention"), S.ATTENTION, p["attention"], f"{d}·{3 * d} + {3 * d} + {d}·{d} + {d}"),
                (self.text("mlp"), S.MLP, p["mlp"], f"{d}·{dff} + {dff} + {dff}·{d} + {d}"))
        shape = self.bundle.shape
        if not shape.bias:       # a Llama-style layer: no biases; k and v at the key/value heads' width
            q, kv = shape.n_head * shape.d_head, shape.kv_heads * shape.d_head
            n_mlp = 3 if self.swiglu else 2
            spec = ((self.text("attention"), S.ATTENTION, p["attention"],
                     f"{d}·{q} + 2·{d}·{kv} + {q}·{d}" + (f" + 2·{shape.d_head}" if shape.qk_norm else "")),
                    (self.text("mlp"), S.MLP, p["mlp"], f"{n_mlp} · {d}·{dff}"))
        top = max(p["attention"], p["mlp"])
        for name, colour, n, formula in spec:
            name_t = label(name, S.BODY_SIZE, colour)
            bar = Rectangle(width=7.0 * n / top, height=0.45, stroke_width=0, fill_color=colour, fill_opacity=0.85)
            num = label(N.fmt_int(n), S.BODY_SIZE, S.INK, mono=True)
            form = fit_width(label(formula, S.SMALL, S.MUTED, mono=True), 7.0)
            rows.add(VGroup(name_t, bar, num, form))
        table([(name_t, bar) for name_t, bar, _, _ in rows], "RL", gaps=GAP.m, pitch=1.5)   # a formula under each bar
        for _, bar, num, form in rows:
            num.next_to(bar, RIGHT, buff=GAP.s)
            below(form, bar, buff=GAP.xs, aligned=LEFT)
        first_bar = rows[0][1]
        head = label(self.text("params-head" if self.bundle.shape.bias else "params-head-nobias"), S.SMALL, S.MUTED)
        above(head, rows, buff=GAP.l).align_to(first_bar, LEFT)
        ratio = label(self.text("params-ratio", ratio=N.fmt_ratio(p["ratio"])), S.BODY_SIZE, S.MLP)
        below(ratio, rows, buff=GAP.l).align_to(first_bar, LEFT)
        place_in(VGroup(head, rows, ratio), S.CONTENT)
        return VGroup(head, *rows), ratio


# ---------------------------------------------------------------------------
FLOOR_W, FLOOR_H, FLOOR_PITCH = 4.4, 0.31, 0.40
STACK_CENTER = [-3.7, -0.35, 0]    # the stack stands left; readouts and totals go to its right
PAID_STROKE = 2.5                  # the outline of a floor that is paid for
LIT = 0.85                         # a paid floor's blocks' fill (0.35 before): their words take ink_on it


def floors(n_layer: int, words: dict) -> VGroup:
    """The stack, layer 1 at the bottom: each floor an attention block and an MLP block. `words`: the
    scene's words for it (StackScene.floor_words: each floor's name, the blocks' names, the stream's,
    and "gap": the words of the row that stands for the layers a tall stack leaves out).

    A stack taller than widgets.STACK_ROWS shows its first and last floors with one gap row between
    (widgets.layer_window); `group.layers[k]` is the row layer k is in (a gap row for a hidden layer),
    `group.spans[i]` the layers row i stands for (first, last)."""
    group = VGroup()
    spans = []
    for row in layer_window(n_layer):
        box = Rectangle(width=FLOOR_W, height=FLOOR_H, stroke_color=S.MUTED, stroke_width=1.5,
                        fill_color=S.PANEL, fill_opacity=1)
        if isinstance(row, tuple):       # the hidden layers: one row saying which, in the stack's place
            first, last = row
            box.set_stroke(opacity=0.6).set_fill(opacity=0.35)
            text = fit_width(label(words["gap"](first + 1, last + 1), S.SMALL, S.MUTED), FLOOR_W - GAP.m)
            floor = VGroup(box, text.move_to(box))
            floor.box, floor.attn, floor.mlp = box, None, None
            group.add(floor)
            spans.append(row)
            continue
        l = row
        name = label(words["layers"][l], S.SMALL, S.INK).move_to(box).align_to(box, LEFT).shift(RIGHT * GAP.xs)
        a_t = fit_width(label(words["attn"], S.SMALL, S.INK), FLOOR_W)
        attn_w = max(1.0, a_t.width + 0.05)         # a longer word widens the block (the MLP's gives way)
        attn = Rectangle(width=attn_w, height=FLOOR_H - 0.08, stroke_width=0, fill_color=S.ATTENTION, fill_opacity=0.35)
        mlp = Rectangle(width=1.6 - (attn_w - 1.0), height=FLOOR_H - 0.08, stroke_width=0, fill_color=S.MLP, fill_opacity=0.35)
        VGroup(attn, mlp).arrange(RIGHT, buff=GAP.xxs).move_to(box).align_to(box, RIGHT).shift(LEFT * GAP.xxs)
        a_t = fit_width(a_t, attn_w - 0.05).move_to(attn)
        m_t = fit_width(label(words["mlp"], S.SMALL, S.INK), mlp.width - 0.1).move_to(mlp)
        floor = VGroup(box, attn, mlp, name, a_t, m_t)
        floor.box, floor.attn, floor.mlp = box, attn, mlp
        floor.attn_word, floor.mlp_word = a_t, m_t
        group.add(floor)
        spans.append((l, l))
    group.arrange(UP, buff=FLOOR_PITCH - FLOOR_H)
    group.move_to(STACK_CENTER)
    group.spans = spans
    group.layers = [next(i for i, (a, b) in enumerate(spans) if a <= l <= b) for l in range(n_layer)]
    stream = Arrow(group.get_corner(DOWN + LEFT) + LEFT * GAP.l + DOWN * GAP.s,
                   group.get_corner(UP + LEFT) + LEFT * GAP.l + UP * GAP.s, buff=GAP.none, color=S.RESIDUAL,
                   stroke_width=5, max_tip_length_to_length_ratio=0.04)
    stream_label = label(words["stream"], S.SMALL, S.RESIDUAL).rotate(math.pi / 2)
    stream_label.next_to(stream, LEFT, buff=GAP.xs)
    if stream_label.height > stream.height:
        stream_label.set_opacity(0)   # a two-layer model has no room for it
    group.stream = VGroup(stream, stream_label)
    return group


def lit(floor) -> list:
    """Animations that light one floor (paid for); a gap row lights its outline."""
    if floor.attn is None:
        return [floor.box.animate.set_stroke(S.FLOPS, width=PAID_STROKE, opacity=1)]
    # INK on a lit block read at 2.2:1 (MLP) and 2.7:1 (ATTENTION): the words turn dark with it
    return [floor.box.animate.set_stroke(S.FLOPS, width=PAID_STROKE), floor.attn.animate.set_fill(opacity=LIT),
            floor.mlp.animate.set_fill(opacity=LIT), floor.attn_word.animate.set_color(S.ink_on(S.ATTENTION, LIT)),
            floor.mlp_word.animate.set_color(S.ink_on(S.MLP, LIT))]


def light_now(floor):
    floor.box.set_stroke(S.FLOPS, width=PAID_STROKE, opacity=1)
    if floor.attn is not None:
        floor.attn.set_fill(opacity=LIT)
        floor.mlp.set_fill(opacity=LIT)
        floor.attn_word.set_color(S.ink_on(S.ATTENTION, LIT))
        floor.mlp_word.set_color(S.ink_on(S.MLP, LIT))


class Climb(StackScene):
    """The stack of layers; the meter climbs one floor at a time, faster as it goes (a tall stack's
    gap row pays for the layers it stands for at once)."""

    def layer_note(self, rows, text: str) -> VGroup:
        """A bracket beside some floors of the stack and what they tend to do, to the stack's right."""
        bar = Line(rows[0].box.get_corner(DOWN + RIGHT), rows[-1].box.get_corner(UP + RIGHT), color=S.INK,
                   stroke_width=3).shift(RIGHT * GAP.s)
        note = fit_lines(text, S.SMALL, S.INK, S.RIGHT_EDGE - bar.get_x() - GAP.l)
        note.next_to(bar, RIGHT, buff=GAP.s)
        return VGroup(bar, note)

    def meter_opening(self):
        return self.ledger.after("L0.mlp_down"), ""     # layer 1 is paid for

    def build(self):
        L, led = self.L, self.ledger
        stack = floors(L, self.floor_words())
        # each row's bill beside it: one layer's, or the hidden layers' together on the gap row
        flop_tags = VGroup(*[label("+" + N.fmt_human(sum(led.layer_flops(l) for l in range(a, b + 1))), S.SMALL, S.FLOPS,
                                   mono=True).next_to(row, RIGHT, buff=GAP.s) for row, (a, b) in zip(stack, stack.spans)])
        home = stack.get_center()
        everything = VGroup(stack, stack.stream, flop_tags)
        centred = S.CONTENT.point(np.zeros(3))[0] - everything.get_center()[0]
        everything.shift(RIGHT * centred)       # alone, the stack stands in the middle
        with self.beat("climb") as beat:
            # "Attention plus MLP is one layer"
            light_now(stack[0])
            self.play(FadeIn(stack[0], shift=UP * GAP.xs), run_time=beat.span(0.7))
            # "GPT-2 stacks N of them"
            beat.at("stacks")
            self.play(LaggedStart(*[FadeIn(f, shift=UP * GAP.xxs) for f in stack[1:]], lag_ratio=0.15),
                      run_time=beat.span(0.85))
            # "No layer replaces the stream; each adds its edits to it": the stream, a short arrow from
            # every floor into it
            beat.at("stream")
            x_stream = stack.stream[0].get_x()
            edits = VGroup(*[Arrow(row.box.get_left(), [x_stream, row.get_y(), 0], buff=GAP.xxs, color=S.RESIDUAL,
                                   stroke_width=3, max_tip_length_to_length_ratio=0.35) for row in stack])
            self.play(GrowArrow(stack.stream[0]), FadeIn(stack.stream[1]), run_time=beat.span(0.5))
            self.play(LaggedStart(*[GrowArrow(e) for e in edits], lag_ratio=0.1), run_time=beat.span(0.8))
            # "In a trained model, early layers handle spelling, grammar and nearby words": the lowest floors
            beat.at("early")
            third = max(1, len(stack) // 3)
            early = self.layer_note(stack[:third], self.text("early-layers"))
            late = self.layer_note(stack[-third:], self.text("late-layers"))
            self.play(FadeIn(early, shift=S.START * GAP.xs), run_time=beat.span(0.6))
            # "in the late layers the prediction takes shape": the highest
            beat.at("late")
            self.play(FadeIn(late, shift=S.START * GAP.xs), run_time=beat.span(0.6))
            # "Every layer costs the same N FLOPs": the meter climbs one row at a time, faster as it goes
            # (a gap row pays for all the layers it stands for at once)
            beat.at("cost")
            self.play(FadeOut(early), FadeOut(late), run_time=beat.span(0.1))
            self.play(FadeIn(flop_tags[0], scale=1.6),
                      FadeIn(glow(stack[0], S.FLOPS), rate_func=there_and_back, remover=True), run_time=beat.span(0.25))
            rows = list(range(1, len(stack)))
            weights = [0.85 ** j for j in range(len(rows))]
            budget = max(0.15 * len(rows), beat.span(1.0) - 0.2)     # the rest of the sentence, less 0.2 s
            for i, w in zip(rows, weights):
                a, b = stack.spans[i]
                step = (self.text("climb-step", layer=b + 1, n_layer=L) if a == b
                        else self.text("climb-steps", first=a + 1, last=b + 1, n_layer=L))
                rt = max(0.15, budget * w / sum(weights))
                self.pay(f"L{a}.qkv", *lit(stack[i]), FadeIn(flop_tags[i]), through=f"L{b}.mlp_down",
                         step=step, run_time=rt)     # the whole layer (or the gap's layers) at once
        with self.beat("climb_total") as beat:
            per = led.layer_flops(0)
            total = led.after(f"L{L - 1}.mlp_down")
            spec = [(self.text("total-layer"), per, S.INK), (self.text("attention"), led.attention_flops(0), S.ATTENTION),
                    (self.text("mlp"), led.mlp_flops(0), S.MLP), (self.text("total-layers", count=L), L * per, S.INK)]
            if self.bundle.shape.has_position_table:     # GPT-2's position add, before the stack
                spec.append((self.text("total-positions"), led["positions"].flops, S.MUTED))
            lines = VGroup(*[VGroup(label(name, S.SMALL, colour), label(N.fmt_int(n), S.SMALL, colour, mono=True))
                             for name, n, colour in spec])
            lines.add(VGroup(label(self.text("total-sum", n_layer=L), S.BODY_SIZE, S.FLOPS),
                             label(N.fmt_int(total), S.BODY_SIZE, S.FLOPS, mono=True)))
            # right of the stack: names left-aligned (a layer's two parts indented), numbers flush right
            # (a long prompt's numbers widen their column: no name runs into its number), the sum apart
            side = S.RIGHT_HALF.with_(left=S.RIGHT_HALF.left + GAP.xl)
            table(lines, "LR", gaps=GAP.l, width=side.width, row_gap=GAP.xs, indent={1: GAP.l, 2: GAP.l},
                  space_before={len(lines) - 1: GAP.s}, rtl_aligns="RR")
            place_in(fit_to(lines, side), side)
            # "After layer 12 the meter reads N FLOPs": the stack steps aside for the sum
            self.play(everything.animate.shift((home - stack.get_center()) * RIGHT),
                      run_time=beat.span(0.3))
            self.play(FadeIn(lines[-1], shift=S.START * GAP.xs), Swell(self.meter.counter, color=S.FLOPS,
                                                                    scale_factor=1.1), run_time=beat.span(0.8))
            # "That is 12 layers at N each, plus M for the positions"
            beat.at("each")
            self.play(LaggedStart(*[FadeIn(t, shift=S.START * GAP.xs) for t in lines[:-1]], lag_ratio=0.5),
                      run_time=beat.span(0.9))


class Lens(StackScene):
    """The logit lens: the last token's top guess read off after every layer."""
    meter_start = "unembed"      # every layer paid for, the unembedding not yet

    def build(self):
        b, L = self.bundle, self.L
        rows = lens_facts(b)
        settle = settle_layer(rows)
        stack = floors(L, self.floor_words())
        for f in stack:
            light_now(f)
        self.add(stack, stack.stream)
        top = max(r["prob"] for r in rows) or 1.0
        decimals = N.prob_decimals([r["prob"] for r in rows])
        name_w, bar_w = 2.1, 1.6            # the widest name and the longest bar
        shown = [k for k, (a, b_) in enumerate(stack.spans) if a == b_]     # the rows that are one layer
        cells = VGroup()
        for k in shown:
            r = rows[stack.spans[k][0]]
            final = r["id"] == rows[-1]["id"]
            name = fit_width(label(S.clip_token(r["text"], 12), S.SMALL, S.LOGIT if final else S.INK, mono=True),
                             name_w)
            bar = Rectangle(width=max(0.03, bar_w * r["prob"] / top), height=FLOOR_H - 0.06, stroke_width=0,
                            fill_color=S.LOGIT, fill_opacity=0.85 if final else 0.4)
            pct = label(N.fmt_prob(r["prob"], decimals), S.SMALL, S.INK, mono=True)
            cells.add(VGroup(name, bar, pct))
        # one readout beside each floor: the guess, its probability as a bar and as a number; beside a
        # gap row (the layers a tall stack leaves out) a '⋮'
        table(cells, "LLR", gaps=(GAP.s, GAP.m), widths=(name_w, bar_w), ys=[stack[k].get_y() for k in shown])
        cells.shift((stack.get_right() - cells.get_left()) * RIGHT + RIGHT * GAP.l)
        readouts, by_row = VGroup(), dict(zip(shown, cells))
        for k, row in enumerate(stack):
            if k in by_row:
                readouts.add(by_row[k])
            else:
                dots = label("⋮", S.SMALL, S.MUTED).set_y(row.get_y()).align_to(cells, LEFT)
                readouts.add(VGroup(dots))
        header = fit_lines(self.text("lens-header", token=S.show_token(b.tokens[-1])), S.SMALL, S.LOGIT, 7.6)
        above(header, readouts, buff=GAP.s, aligned=S.START)
        if header.get_top()[1] > S.CONTENT_TOP + 0.2:   # a tall stack: say it beside the floors instead
            header.next_to(readouts, RIGHT, buff=GAP.m).align_to(readouts, DOWN)
        # the guess's path up the floors: a line through the end of each floor's bar
        tips = [by_row[k][1].get_right() for k in shown]
        trace = VMobject(stroke_color=S.LOGIT, stroke_width=3).set_points_as_corners(tips) if len(tips) > 1 else VGroup()
        with self.beat("lens") as beat:
            # "Does the stack build its answer all at once, or bit by bit?": the floors, the question's header
            self.play(FadeIn(header), LaggedStart(*[FadeIn(glow(f, S.LOGIT), rate_func=there_and_back, remover=True)
                                                    for f in stack], lag_ratio=0.08), run_time=beat.span(0.9))
            # "The logit lens reads the stream after each layer ...: after layer 1 the top guess is …"
            beat.at("first")
            pick = SurroundingRectangle(readouts[0], color=S.LOGIT, buff=GAP.xxs, stroke_width=3)
            first = readouts[0]
            self.play(FadeIn(first[0]), GrowFromEdge(first[1], LEFT) if len(first) > 1 else FadeIn(first),
                      *([FadeIn(first[2])] if len(first) > 2 else []), run_time=beat.span(0.5))
            self.play(FadeIn(pick), Swell(first[0], color=S.LOGIT), run_time=beat.span(0.6))
            # "Watch that guess climb the floors": each floor's readout, bottom to top, its bar growing
            beat.at("climb")
            grow = [AnimationGroup(FadeIn(r[0]), GrowFromEdge(r[1], LEFT), FadeIn(r[2])) if len(r) > 1 else FadeIn(r)
                    for r in readouts[1:]]
            self.play(LaggedStart(*grow, lag_ratio=0.35), run_time=beat.span(0.7))
            self.play(Create(trace), run_time=beat.span(0.6))
            if self.bundle.synthetic:    # "these guesses are noise: no real sharpening to see"
                beat.at("noise")
                self.play(LaggedStart(*[Swell(r[0], color=S.WARNING, scale_factor=1.1) for r in readouts],
                                      lag_ratio=0.15), run_time=beat.span(0.9))
            # "After layer L it is …": the top floor's
            beat.at("last")
            self.play(pick.animate.become(SurroundingRectangle(readouts[-1], color=S.LOGIT, buff=GAP.xxs,
                                                               stroke_width=3)),
                      Swell(readouts[-1][0], color=S.LOGIT), run_time=beat.span(0.6))
            if self.bundle.synthetic:    # "trained weights: one guess sharpening floor by floor": up the readouts
                beat.at("floors")
                self.play(LaggedStart(*[Swell(r, color=S.LOGIT, scale_factor=1.05) for r in readouts],
                                      lag_ratio=0.2), run_time=beat.span(0.9))
        with self.beat("lens_settle") as beat:
            agree = VGroup(*readouts[stack.layers[settle]:])     # from the row that holds layer `settle`
            box = SurroundingRectangle(agree, color=S.LOGIT, buff=GAP.xxs, stroke_width=3)
            where = (self.text("settle-layers", first=settle + 1, last=L) if settle < L - 1
                     else self.text("settle-layer", layer=L))
            note = VGroup(label(self.text("settle-note"), S.SMALL, S.LOGIT), label(where, S.SMALL, S.LOGIT))
            note.arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
            room = S.RIGHT_EDGE - box.get_right()[0] - GAP.s
            if S.SMALL * room / note.width < LEGIBLE * S.SMALL:     # would shrink away: each line wraps instead
                note = VGroup(*[fit_lines(t, S.SMALL, S.LOGIT, room) for t in (self.text("settle-note"), where)])
                note.arrange(DOWN, buff=GAP.xs, aligned_edge=S.START)
            fit_width(note, room)
            note.next_to(box, RIGHT, buff=GAP.s)
            if note.get_top()[1] > box.get_top()[1]:      # two lines beside one row rose into the header: hang
                note.align_to(box, UP)                     # from the row's top instead
            self.lens_parts = {"header": header, "box": box, "note": note}      # what tests read of the picture
            # "… is on top from layer k upward"
            # the floors that agree lit (a filled box: a visible step even when only the top floor agrees)
            self.play(pick.animate.become(box), FadeIn(glow(agree, S.LOGIT)), run_time=beat.span(0.35))
            floors_agree = stack[stack.layers[settle]:]      # and the same floors of the stack, pulsed
            self.play(FadeIn(note), LaggedStart(*[Swell(r[0], color=S.LOGIT) for r in agree], lag_ratio=0.2),
                      # each floor lit by a box and back (a Swell would fill the floor and hide its names)
                      LaggedStart(*[FadeIn(glow(f, S.LOGIT), rate_func=there_and_back, remover=True)
                                    for f in floors_agree], lag_ratio=0.2),
                      run_time=beat.span(0.9))
            # "… costs nothing on the meter": the meter's step line says what the lens costs
            beat.at("free")
            self.pay_total(self.meter.value, self.text("lens-step"),
                           Swell(self.meter.counter, color=S.FLOPS, scale_factor=1.1), run_time=beat.span(0.8))


SCENES = [Heads, Mlp, Climb, Lens]
