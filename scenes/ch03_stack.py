"""Chapter 03 — the full stack: twelve heads, the MLP, twelve layers, the logit lens.

Every number comes from the bundle (attention probabilities, MLP activations, lens
tensors) or the ledger (the meter). Dimensions come from the config, so the tiny test
model renders through the same code.
"""
from __future__ import annotations

import math

import numpy as np
from manim import (DOWN, LEFT, RESAMPLING_ALGORITHMS, RIGHT, UP, Arrow, FadeIn, FadeOut, Group, ImageMobject,
                   Indicate, LaggedStart, Polygon, Rectangle, SurroundingRectangle, VGroup)

from data.facts.ch02 import head_facts
from data.facts.ch03 import lens_facts, mlp_facts, param_facts, settle_layer
from data.flops import human
from scenes import style as S
from scenes.base import ChapterScene
from scenes.widgets import NumberGrid, below, fit_width, label, place_in, window


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
        cfg = self.bundle.config
        self.L, self.H, self.d = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
        self.dh = self.d // self.H
        self.dff = cfg.get("n_inner") or 4 * self.d


# ---------------------------------------------------------------------------
class Heads(StackScene):
    """Layer 1's heads as small patterns side by side; the width split d = H x d_head."""
    meter_start = "L0.mlp_up"
    show_title = True

    def panels(self) -> tuple[Group, dict]:
        b, H, T = self.bundle, self.H, self.bundle.T
        featured = head_facts(b)["head_index"]
        cols = min(H, 6)
        n_rows = math.ceil(H / cols)
        gap, title_h = 0.32, 0.4
        size = min(1.9, (11.6 - (cols - 1) * gap) / cols, (4.2 - n_rows * title_h - (n_rows - 1) * 0.2) / n_rows)
        show_labels = size / T >= 0.27     # a row label per token only when a cell is tall enough
        group, parts = Group(), {"frames": [], "titles": [], "featured": None}
        for h in range(H):
            img = rgb_image(pattern_colours(b["probs"][0, h]), height=size)
            frame = Rectangle(width=size, height=size, stroke_color=S.MUTED, stroke_width=1.5).move_to(img)
            title = label(f"head {h + 1}", S.SMALL, S.TOKEN if h == featured else S.MUTED)
            title.next_to(frame, UP, buff=0.1)
            cell = Group(img, frame, title)
            cell.frame, cell.img = frame, img
            group.add(cell)
            parts["frames"].append(frame)
            parts["titles"].append(title)
        group.arrange_in_grid(rows=n_rows, cols=cols, buff=(gap, 0.2))
        if show_labels:
            for r in range(n_rows):
                first = group[r * cols].frame
                step = first.height / T
                for i, tok in enumerate(b.tokens):
                    t = fit_width(label(S.clip_token(tok, 8), S.SMALL, S.TOKEN, mono=True), 1.4)
                    t.move_to([first.get_left()[0] - 0.12, first.get_top()[1] - (i + 0.5) * step, 0],
                              aligned_edge=RIGHT)
                    group.add(t)
        group.move_to(UP * 0.3)
        parts["featured"] = featured
        parts["show_labels"] = show_labels
        parts["cells"] = group
        return group, parts

    def build(self):
        b = self.bundle
        with self.beat("heads") as beat:
            group, parts = self.panels()
            f = parts["featured"]
            order = "" if parts["show_labels"] else f" (all {b.T} tokens, in prompt order)"
            key = fit_width(label(f"row: the token reading · column: the token it reads{order}",
                                  S.SMALL, S.MUTED), S.TEXT_W)
            place_in(key, S.CONTENT, DOWN)
            mark = SurroundingRectangle(parts["frames"][f], color=S.TOKEN, buff=0.05, stroke_width=4)
            note = label(f"head {f + 1}: followed in chapter 02", S.SMALL, S.TOKEN)
            legend = self.sequential_legend()
            foot = VGroup(note, legend).arrange(RIGHT, buff=0.8).next_to(key, UP, buff=0.15)
            fit_width(foot, S.TEXT_W)
            cells = [c for c in group if isinstance(c, Group)]
            labels = [m for m in group if not isinstance(m, Group)]
            self.play(LaggedStart(*[FadeIn(c, shift=UP * 0.1) for c in cells], lag_ratio=0.08),
                      *[FadeIn(t) for t in labels], run_time=beat.share(0.45))
            self.play(FadeIn(key), FadeIn(legend), run_time=beat.share(0.1))
            self.play(FadeIn(mark), FadeIn(note), run_time=beat.share(0.15))
        with self.beat("split") as beat:
            # titles and token labels would shrink below legible size: the slices below name the heads
            small_text = VGroup(*parts["titles"], *labels)
            panels = Group(*[Group(c.img, c.frame) for c in cells], mark)
            self.play(FadeOut(key), FadeOut(foot), FadeOut(small_text), run_time=beat.share(0.08))
            everything = panels
            self.play(everything.animate.scale(min(1.0, 2.3 / panels.height)).move_to(UP * 1.05),
                      run_time=beat.share(0.15))
            split = self.width_split(f)
            split.next_to(everything, DOWN, buff=0.35)
            self.play(FadeIn(split[0]), run_time=beat.share(0.1))
            self.play(LaggedStart(*[FadeIn(s) for s in split[1]], lag_ratio=0.05), run_time=beat.share(0.25))
            self.play(FadeIn(split[2], shift=UP * 0.1), run_time=beat.share(0.12))

    def sequential_legend(self) -> VGroup:
        n = 24
        bar = VGroup(*[Rectangle(width=0.1, height=0.16, stroke_width=0, fill_color=S.sequential(i / (n - 1)),
                                 fill_opacity=1) for i in range(n)]).arrange(RIGHT, buff=0)
        lo = label(S.fmt_pct(0.0), S.SMALL, S.MUTED, mono=True).next_to(bar, LEFT, buff=0.1)
        hi = label(S.fmt_pct(1.0), S.SMALL, S.MUTED, mono=True).next_to(bar, RIGHT, buff=0.1)
        return VGroup(lo, bar, hi)

    def width_split(self, featured: int) -> VGroup:
        """d numbers as H slices of d_head: one slice per head, the followed one lit."""
        H, d, dh = self.H, self.d, self.dh
        total_w = 12.0
        seg_w = total_w / H
        title = label(f"d = {d} = {H} heads × {dh}", S.BODY_SIZE, S.INK)
        segs = VGroup()
        for h in range(H):
            box = Rectangle(width=seg_w, height=0.5, stroke_color=S.BACKGROUND, stroke_width=2,
                            fill_color=S.ATTENTION, fill_opacity=0.85 if h == featured else 0.3)
            txt = fit_width(label(str(dh), S.SMALL, S.INK, mono=True), seg_w - 0.1).move_to(box)
            num = fit_width(label(str(h + 1), S.SMALL, S.TOKEN if h == featured else S.MUTED, mono=True),
                            seg_w - 0.05).next_to(box, DOWN, buff=0.08)
            segs.add(VGroup(box, txt, num))
        segs.arrange(RIGHT, buff=0)
        title.next_to(segs, UP, buff=0.15)
        after = fit_width(label(f"outputs side by side again: {H} × {dh} = {d} → output projection "
                                "(already on the meter)", S.SMALL, S.MUTED), S.TEXT_W)
        below(after, segs, buff=0.45)
        return VGroup(title, segs, after)


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
        g = VGroup(*[label(text, S.SMALL, colour) for text, colour in lines]).arrange(DOWN, buff=0.08,
                                                                                       aligned_edge=RIGHT)
        fit_width(g, 4.6)
        return g.next_to(block, LEFT, buff=0.35)

    def value_window(self, values, block, n: int, name: str) -> VGroup:
        shown = len(window(len(values), n)[0])
        g = NumberGrid(np.asarray(values)[None, :], max_cols=n,
                       shape_text=f"{name}: first {shown} of {len(values):,}")
        return fit_width(g, 5.0).next_to(block, RIGHT, buff=0.45)

    def build(self):
        b, d, dff = self.bundle, self.d, self.dff
        f = mlp_facts(b)
        tok = S.show_token(b.tokens[f["token"]])
        x_img, h_img, o_img = self.blocks(f)
        x_img.move_to(UP * 1.7)
        h_img.move_to(UP * 0.1)
        o_img.move_to(DOWN * 1.5)
        with self.beat("mlp_in") as beat:
            x_lab = self.side_label(x_img, [(f"layer 1 MLP · token {tok}", S.TOKEN),
                                            (f"LayerNorm(x): 1 × {d}", S.INK)])
            x_win = self.value_window(f["x"], x_img, 5, "x")
            self.play(FadeIn(x_img), FadeIn(x_lab), run_time=beat.share(0.3))
            self.play(FadeIn(x_win), run_time=beat.share(0.3))
        with self.beat("mlp_up") as beat:
            up = self.fan(x_img, h_img, f"× W_up ({d} × {dff:,}), then GELU")
            shown = len(window(dff, 9)[0])
            h_win = NumberGrid(f["hidden"][None, :], max_cols=9,
                               shape_text=f"hidden after GELU: first {shown} of {dff:,}")
            fit_width(h_win, 10.0).move_to(o_img).shift(RIGHT * 0.3)
            h_name = label("hidden", S.SMALL, S.MLP).next_to(h_win.cell_group, LEFT, buff=0.3)
            counts = VGroup(label(f"{S.fmt_int(f['n_pos'])} positive", S.SMALL, S.POSITIVE, mono=True),
                            label(f"{S.fmt_int(f['n_neg'])} negative", S.SMALL, S.NEGATIVE, mono=True),
                            label(f"of {dff:,}  ·  min {S.fmt_signed(f['min'], 2)}  ·  max "
                                  f"{S.fmt_signed(f['max'], 2)}", S.SMALL, S.MUTED, mono=True))
            counts.arrange(RIGHT, buff=0.35)
            fit_width(counts, S.TEXT_W).move_to(UP * S.FOOTER_Y)
            self.play(FadeOut(x_win), FadeIn(up), run_time=beat.share(0.15))
            self.play(FadeIn(h_img, shift=DOWN * 0.1), run_time=beat.share(0.15))
            self.play(FadeIn(h_win), FadeIn(h_name), run_time=beat.share(0.15))
            self.pay("L0.mlp_up", run_time=beat.share(0.15))
            self.play(LaggedStart(*[FadeIn(c) for c in counts], lag_ratio=0.3), run_time=beat.share(0.2))
        with self.beat("mlp_down") as beat:
            down = self.fan(h_img, o_img, f"× W_down ({dff:,} × {d})")
            o_lab = self.side_label(o_img, [(f"MLP output: 1 × {d}", S.INK), ("→ added to the residual", S.RESIDUAL)])
            o_win = self.value_window(f["out"], o_img, 5, "out")
            self.play(FadeOut(h_win), FadeOut(h_name), run_time=beat.share(0.1))
            self.play(FadeIn(down), FadeIn(o_img, shift=DOWN * 0.1), FadeIn(o_lab), run_time=beat.share(0.2))
            self.play(FadeIn(o_win), run_time=beat.share(0.15))
            self.pay("L0.mlp_down", run_time=beat.share(0.2))
        with self.beat("params") as beat:
            self.play(*[FadeOut(m) for m in (x_img, x_lab, up, h_img, counts, down, o_img, o_lab, o_win)],
                      run_time=beat.share(0.12))
            bars = self.param_bars()
            self.play(LaggedStart(*[FadeIn(r, shift=RIGHT * 0.2) for r in bars[0]], lag_ratio=0.4),
                      run_time=beat.share(0.4))
            self.play(FadeIn(bars[1], shift=UP * 0.1), run_time=beat.share(0.15))

    def param_bars(self) -> VGroup:
        p = param_facts(self.bundle)
        d, dff = self.d, self.dff
        rows = VGroup()
        spec = (("attention", S.ATTENTION, p["attention"], f"{d}·{3 * d} + {3 * d} + {d}·{d} + {d}"),
                ("MLP", S.MLP, p["mlp"], f"{d}·{dff} + {dff} + {dff}·{d} + {d}"))
        top = max(p["attention"], p["mlp"])
        for name, colour, n, formula in spec:
            name_t = label(name, S.BODY_SIZE, colour)
            bar = Rectangle(width=7.0 * n / top, height=0.45, stroke_width=0, fill_color=colour, fill_opacity=0.85)
            num = label(S.fmt_int(n), S.BODY_SIZE, S.INK, mono=True)
            form = fit_width(label(formula, S.SMALL, S.MUTED, mono=True), 7.0)
            rows.add(VGroup(name_t, bar, num, form))
        y = 1.2
        for r in rows:
            r[0].move_to([-4.6, y, 0], aligned_edge=RIGHT)
            r[1].move_to([-4.3, y, 0], aligned_edge=LEFT)
            r[2].next_to(r[1], RIGHT, buff=0.2)
            below(r[3], r[1], buff=0.12, aligned=LEFT)
            y -= 1.5
        head = label("parameters in one layer (weights + biases)", S.SMALL, S.MUTED)
        head.next_to(rows, UP, buff=0.35).align_to(rows[0][1], LEFT)
        ratio = label(f"MLP = {p['ratio']:.1f} × attention", S.BODY_SIZE, S.MLP)
        below(ratio, rows, buff=0.45).align_to(rows[0][1], LEFT)
        return VGroup(VGroup(head, *rows), ratio)


# ---------------------------------------------------------------------------
FLOOR_W, FLOOR_H, FLOOR_PITCH = 4.4, 0.31, 0.40
STACK_CENTER = [-3.7, -0.35, 0]    # the stack stands left; readouts and totals go to its right


def floors(n_layer: int) -> VGroup:
    """The stack, layer 1 at the bottom: each floor an attention block and an MLP block."""
    group = VGroup()
    for l in range(n_layer):
        box = Rectangle(width=FLOOR_W, height=FLOOR_H, stroke_color=S.MUTED, stroke_width=1.5,
                        fill_color=S.PANEL, fill_opacity=1)
        name = label(f"layer {l + 1}", S.SMALL, S.INK).move_to(box).align_to(box, LEFT).shift(RIGHT * 0.12)
        attn = Rectangle(width=1.0, height=FLOOR_H - 0.08, stroke_width=0, fill_color=S.ATTENTION, fill_opacity=0.35)
        mlp = Rectangle(width=1.6, height=FLOOR_H - 0.08, stroke_width=0, fill_color=S.MLP, fill_opacity=0.35)
        VGroup(attn, mlp).arrange(RIGHT, buff=0.06).move_to(box).align_to(box, RIGHT).shift(LEFT * 0.05)
        a_t = fit_width(label("attn", S.SMALL, S.INK), 0.95).move_to(attn)
        m_t = fit_width(label("MLP", S.SMALL, S.INK), 1.5).move_to(mlp)
        floor = VGroup(box, attn, mlp, name, a_t, m_t)
        floor.box, floor.attn, floor.mlp = box, attn, mlp
        group.add(floor)
    group.arrange(UP, buff=FLOOR_PITCH - FLOOR_H)
    group.move_to(STACK_CENTER)
    stream = Arrow(group.get_corner(DOWN + LEFT) + LEFT * 0.35 + DOWN * 0.15,
                   group.get_corner(UP + LEFT) + LEFT * 0.35 + UP * 0.15, buff=0, color=S.RESIDUAL,
                   stroke_width=5, max_tip_length_to_length_ratio=0.04)
    stream_label = label("residual stream", S.SMALL, S.RESIDUAL).rotate(math.pi / 2)
    stream_label.next_to(stream, LEFT, buff=0.1)
    if stream_label.height > stream.height:
        stream_label.set_opacity(0)   # a two-layer model has no room for it
    group.stream = VGroup(stream, stream_label)
    return group


def lit(floor) -> list:
    """Animations that light one floor (paid for)."""
    return [floor.box.animate.set_stroke(S.FLOPS, width=2.5), floor.attn.animate.set_fill(opacity=0.85),
            floor.mlp.animate.set_fill(opacity=0.85)]


def light_now(floor):
    floor.box.set_stroke(S.FLOPS, width=2.5)
    floor.attn.set_fill(opacity=0.85)
    floor.mlp.set_fill(opacity=0.85)


class Climb(StackScene):
    """Twelve layers; the meter climbs one layer at a time, faster as it goes."""

    def meter_opening(self):
        return self.ledger.after("L0.mlp_down"), ""     # layer 1 is paid for

    def build(self):
        L, led = self.L, self.ledger
        stack = floors(L)
        flop_tags = VGroup(*[label(f"+{human(led.layer_flops(l))}", S.SMALL, S.FLOPS, mono=True)
                             .next_to(stack[l], RIGHT, buff=0.2) for l in range(L)])
        with self.beat("climb") as beat:
            light_now(stack[0])
            self.play(FadeIn(stack.stream), LaggedStart(*[FadeIn(f, shift=UP * 0.05) for f in stack],
                                                        lag_ratio=0.08), run_time=beat.share(0.25))
            self.play(FadeIn(flop_tags[0]), run_time=beat.share(0.05))
            # one layer at a time, each step shorter than the last
            weights = [0.8 ** i for i in range(L - 1)]
            budget = 0.6 * beat.duration
            for l, w in zip(range(1, L), weights):
                rt = max(0.15, budget * w / sum(weights))
                target = led.after(f"L{l}.mlp_down")
                self.play(*self.meter.pay(target, f"layer {l + 1} of {L}", run_time=rt), *lit(stack[l]),
                          FadeIn(flop_tags[l]), run_time=rt)
        with self.beat("climb_total") as beat:
            per = led.layer_flops(0)
            total = led.after(f"L{L - 1}.mlp_down")
            spec = [("one layer", per, S.INK, 0.0), ("attention", led.attention_flops(0), S.ATTENTION, 0.35),
                    ("MLP", led.mlp_flops(0), S.MLP, 0.35), (f"× {L} layers", L * per, S.INK, 0.0),
                    ("+ positions", led["positions"].flops, S.MUTED, 0.0)]
            lines, y = VGroup(), 0.0
            for name, n, colour, indent in spec:      # names left-aligned, numbers right-aligned
                left = label(name, S.SMALL, colour).move_to([indent, y, 0], aligned_edge=LEFT)
                right = label(S.fmt_int(n), S.SMALL, colour, mono=True).move_to([5.6, y, 0], aligned_edge=RIGHT)
                lines.add(VGroup(left, right))
                y -= 0.45
            y -= 0.15
            lines.add(VGroup(label(f"Σ after layer {L}", S.BODY_SIZE, S.FLOPS).move_to([0, y, 0], aligned_edge=LEFT),
                             label(S.fmt_int(total), S.BODY_SIZE, S.FLOPS, mono=True).move_to([5.6, y, 0],
                                                                                               aligned_edge=RIGHT)))
            # long prompts: widen the number column so no name runs into its number
            push = max(0.0, max(left.get_right()[0] + 0.4 + right.width for left, right in lines) - 5.6)
            for _, right in lines:
                right.shift(RIGHT * push)
            fit_width(lines, 6.4).move_to([3.6, -0.2, 0])
            self.play(LaggedStart(*[FadeIn(t, shift=LEFT * 0.1) for t in lines], lag_ratio=0.2),
                      run_time=beat.share(0.6))


class Lens(StackScene):
    """The logit lens: the last token's top guess read off after every layer."""
    meter_start = "unembed"      # every layer paid for, the unembedding not yet

    def build(self):
        b, L = self.bundle, self.L
        rows = lens_facts(b)
        settle = settle_layer(rows)
        stack = floors(L)
        for f in stack:
            light_now(f)
        self.add(stack, stack.stream)
        top = max(r["prob"] for r in rows) or 1.0
        decimals = S.prob_decimals([r["prob"] for r in rows])
        pct_right = 1.25 + 1.6 + 0.12 + max(label(S.fmt_prob(r["prob"], decimals), S.SMALL, mono=True).width
                                             for r in rows)
        readouts = VGroup()
        for r, floor in zip(rows, stack):
            final = r["id"] == rows[-1]["id"]
            name = fit_width(label(S.clip_token(r["text"], 12), S.SMALL, S.LOGIT if final else S.INK, mono=True),
                             2.1)
            bar = Rectangle(width=max(0.03, 1.6 * r["prob"] / top), height=FLOOR_H - 0.06, stroke_width=0,
                            fill_color=S.LOGIT, fill_opacity=0.85 if final else 0.4)
            pct = label(S.fmt_prob(r["prob"], decimals), S.SMALL, S.INK, mono=True)
            y = floor.get_center()[1]
            name.move_to([-1.05, y, 0], aligned_edge=LEFT)
            bar.move_to([1.25, y, 0], aligned_edge=LEFT)
            pct.move_to([pct_right, y, 0], aligned_edge=RIGHT)
            readouts.add(VGroup(name, bar, pct))
        header = fit_width(label(f"logit lens: the top guess for {S.show_token(b.tokens[-1])}'s next token",
                                 S.SMALL, S.LOGIT), 7.6)
        header.next_to(readouts, UP, buff=0.2).align_to(readouts, LEFT)
        if header.get_top()[1] > S.CONTENT_TOP + 0.2:   # a tall stack: say it beside the floors instead
            header.next_to(readouts, RIGHT, buff=0.3).align_to(readouts, DOWN)
        with self.beat("lens") as beat:
            self.play(FadeIn(header), run_time=beat.share(0.1))
            self.play(LaggedStart(*[FadeIn(r, shift=RIGHT * 0.15) for r in readouts], lag_ratio=0.25),
                      run_time=beat.share(0.6))
        with self.beat("lens_settle") as beat:
            agree = VGroup(*readouts[settle:])
            box = SurroundingRectangle(agree, color=S.LOGIT, buff=0.06, stroke_width=3)
            where = f"layers {settle + 1}–{L}" if settle < L - 1 else f"layer {L}"
            note = VGroup(label("= final answer", S.SMALL, S.LOGIT), label(where, S.SMALL, S.LOGIT))
            note.arrange(DOWN, buff=0.08, aligned_edge=LEFT)
            fit_width(note, S.RIGHT_EDGE - box.get_right()[0] - 0.15)
            note.next_to(box, RIGHT, buff=0.15)
            self.play(FadeIn(box), FadeIn(note), run_time=beat.share(0.3))
            self.wait(beat.share(0.2))
            # the meter's step line says what the lens costs: nothing (it is a look inside)
            self.play(*self.meter.pay(self.meter.value, "logit lens: a look inside, +0"),
                      Indicate(self.meter.counter, color=S.FLOPS, scale_factor=1.1), run_time=beat.share(0.2))


SCENES = [Heads, Mlp, Climb, Lens]
