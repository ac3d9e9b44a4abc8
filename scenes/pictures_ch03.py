"""Chapter 03's teaching pictures, built from the bundle's numbers (data/facts/ch03.py):

* `token_paths`: the MLP as per-token work: each token's own row through the same W_up and W_down
  (its real row in, its real hidden activations, its real row out), no line between the rows; before
  it, attention's lines between the same tokens (what moved between them), which the MLP does not have.
* `norm_picture`: LayerNorm on a real row (a histogram of its numbers, then of the same numbers
  normalised, on one axis) and why it is there (the stream's spread entering each layer grows; what
  each layer reads after LayerNorm keeps one size). For RMSNorm (`rms_facts`) the same picture
  divides by the row's root mean square, no mean taken off: the histogram widens but stays where its
  mean was; the charts are the bundle's rms1 per layer and the rms each layer reads (1), and a line of
  every token's rms entering layer 1 (`tokens`).

Every word comes from the chapter's catalog through `scene.text(...)`; every number from the facts.
"""
from __future__ import annotations

import math

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RESAMPLING_ALGORITHMS,
    RIGHT,
    UP,
    ArcBetweenPoints,
    Arrow,
    Group,
    ImageMobject,
    Line,
    Rectangle,
    VGroup,
)

from onepass.data.facts.ch03 import histogram
from onepass.scenes import style as S
from onepass.scenes.layout import GAP, above, below, place_in
from onepass.scenes.text import fit_lines, fit_width, label
from onepass.scenes.widgets import TokenChip
from onepass.words import numbers as N

STRIP_H = 0.4          # a token's row of numbers, drawn as a strip of coloured cells
STRIP_FOLD = 3          # the strip's numbers folded into this many lines of cells
IN_W = 1.5              # the width of a d-wide strip (the hidden one is d_ff / d times wider, capped)
HIDDEN_W = 4.8
ARROW_W = 0.75


def strip(values: np.ndarray, vmax: float, width: float) -> ImageMobject:
    """A row of numbers as cells on the shared diverging scale, folded into STRIP_FOLD lines."""
    n = len(values)
    cols = math.ceil(n / STRIP_FOLD)
    out = np.tile(np.array(S.BACKGROUND.to_rgb()), (STRIP_FOLD * cols, 1))
    out[:n] = [S.diverging(float(v), vmax).to_rgb() for v in values]
    img = ImageMobject(np.clip(np.round(out.reshape(STRIP_FOLD, cols, 3) * 255), 0, 255).astype(np.uint8))
    img.set_resampling_algorithm(RESAMPLING_ALGORITHMS["nearest"])
    img.stretch_to_fit_width(width)
    img.stretch_to_fit_height(STRIP_H)
    return img


def token_paths(scene, f: dict) -> Group:
    """One line per shown token: its chip, its row in (d), W_up, its hidden activations (d_ff), W_down,
    its row out (d); the column heads name the stages and the shared matrices. Attributes: `rows` (each
    with .chip, .x, .up, .h, .down, .out), `mix` (attention's lines between the chips), `heads`
    (the stage names), `weights` (W_up and W_down's names over their arrows), `same` (the note)."""
    b = scene.bundle
    d, dff = scene.d, scene.dff
    swiglu = b.shape.mlp == "swiglu"
    hidden_w = min(HIDDEN_W, IN_W * dff / d)
    rows = Group()
    for k, i in enumerate(f["tokens"]):
        chip = TokenChip(S.clip_token(b.tokens[i], 8), color=S.TOKEN, size=S.SMALL, max_text_width=1.5)
        x = strip(f["x"][k], f["vmax"]["x"], IN_W)
        h = strip(f["hidden"][k], f["vmax"]["hidden"], hidden_w)
        out = strip(f["out"][k], f["vmax"]["out"], IN_W)
        x.next_to(chip, RIGHT, buff=GAP.m)
        up = Arrow(LEFT * ARROW_W / 2, RIGHT * ARROW_W / 2, buff=GAP.none, color=S.MLP, stroke_width=4,
                   max_tip_length_to_length_ratio=0.3).next_to(x, RIGHT, buff=GAP.xs)
        h.next_to(up, RIGHT, buff=GAP.xs)
        down = up.copy().next_to(h, RIGHT, buff=GAP.xs)
        out.next_to(down, RIGHT, buff=GAP.xs)
        row = Group(chip, x, up, h, down, out)
        row.chip, row.x, row.up, row.h, row.down, row.out = chip, x, up, h, down, out
        rows.add(row)
    # the strips line up in columns whatever each chip's width: each row's chip ends at one x
    right = max(r.chip.get_right()[0] for r in rows)
    for r in rows:
        Group(r.x, r.up, r.h, r.down, r.out).shift(RIGHT * (right - r.chip.get_right()[0]))
    rows.arrange(DOWN, buff=GAP.xs, aligned_edge=RIGHT)
    first = rows[0]
    heads = VGroup(*[fit_lines(text, S.SMALL, colour, width + ARROW_W).next_to(strip_, UP, buff=GAP.s)
                     for text, colour, strip_, width in (
                         (scene.text("path-in", d=d), S.INK, first.x, IN_W),
                         (scene.text("path-hidden-swiglu" if swiglu else "path-hidden", dff=N.fmt_int(dff)), S.MLP,
                          first.h, hidden_w),
                         (scene.text("path-out", d=d), S.INK, first.out, IN_W))])
    weights = VGroup(*[label(name, S.SMALL, S.MLP).next_to(arrow, UP, buff=GAP.s)
                       for name, arrow in ((scene.text("w-gate-up" if swiglu else "w-up"), first.up),
                                           (scene.text("w-down"), first.down))])
    # the same matrices for every row: one bracket line down each arrow column
    for w, key in zip(weights, ("up", "down")):
        col = [getattr(r, key) for r in rows]
        w.bar = Line(col[0].get_top() + UP * GAP.xxs, col[-1].get_bottom() + DOWN * GAP.xxs,
                     color=S.MLP, stroke_width=2, stroke_opacity=0.6).next_to(Group(*col), LEFT, buff=GAP.xxs)
    # the heads and weights over the first row must not collide: weights above the heads' line
    top_heads = max(h.get_top()[1] for h in heads)
    for w in weights:
        w.set_y(top_heads + GAP.xs + w.height / 2)
    mix = VGroup()
    left = min(r.chip.get_left()[0] for r in rows) - GAP.xs
    m = f["mix"]
    n = len(rows)
    for a in range(n):
        for c in range(a):
            if m[a, c] <= 0:
                continue
            start = np.array([left, rows[a].chip.get_y(), 0])
            end = np.array([left, rows[c].chip.get_y(), 0])
            mix.add(ArcBetweenPoints(start, end, angle=-math.pi * 0.6, color=S.ATTENTION,
                                     stroke_width=2 + 10 * float(m[a, c]), stroke_opacity=0.9))
    picture = Group(mix, rows, heads, weights, *[w.bar for w in weights])
    same = fit_lines(scene.text("path-same-swiglu" if swiglu else "path-same"), S.SMALL, S.MLP, S.TEXT_W)
    below(same, rows, buff=GAP.l)
    group = Group(picture, same)
    fit_width(group, S.TEXT_W)
    place_in(group, S.CONTENT)
    group.rows, group.mix, group.heads, group.weights, group.same = rows, mix, heads, weights, same
    return group


# ---------------------------------------------------------------------------
HIST_BINS = 41
HIST_W = 8.0
HIST_H = 1.3
BAR_CHART_W = 4.2
BAR_CHART_H = 1.1


def hist_bars(counts: list[int], top: int, colour) -> VGroup:
    """A histogram's bars, bottoms level, on HIST_W (a bar of 0 keeps a hairline: the bars stay paired)."""
    w = HIST_W / len(counts)
    bars = VGroup(*[Rectangle(width=w * 0.9, height=max(0.01, HIST_H * c / top), stroke_width=0,
                              fill_color=colour, fill_opacity=0.85) for c in counts])
    bars.arrange(RIGHT, buff=w * 0.1, aligned_edge=DOWN)
    return bars


def spread_chart(values: list[float], colour, title: str, layer_names: tuple[str, str], decimals: int = 2) -> VGroup:
    """One bar per layer (layer 1 left), heights on the chart's own scale; the first and last value named."""
    n = len(values)
    top = max(values) or 1.0
    w = BAR_CHART_W / n
    bars = VGroup(*[Rectangle(width=w * 0.8, height=max(0.01, BAR_CHART_H * v / top), stroke_width=0,
                              fill_color=colour, fill_opacity=0.85) for v in values])
    bars.arrange(RIGHT, buff=w * 0.2, aligned_edge=DOWN)
    base = Line(bars.get_corner(DOWN + LEFT), bars.get_corner(DOWN + RIGHT), color=S.MUTED, stroke_width=1.5)
    # the first value left of the chart at its bar's height, the last right of the chart at its bar's top
    first = label(N.fmt_fixed(values[0], decimals), S.SMALL, S.INK, mono=True).next_to(bars[0], LEFT, buff=GAP.xs)
    first.align_to(bars[0], DOWN)
    last = label(N.fmt_fixed(values[-1], decimals), S.SMALL, S.INK, mono=True).next_to(bars[-1], RIGHT, buff=GAP.xs)
    last.align_to(bars[-1], UP)
    # which bar is which layer: the first and the last named under the baseline
    names = VGroup(*[fit_width(label(layer_name, S.SMALL, S.MUTED), BAR_CHART_W / 2 - GAP.s).next_to(bar, DOWN, buff=GAP.xs)
                     for layer_name, bar in zip(layer_names, (bars[0], bars[-1]))])
    names[0].align_to(bars[0], LEFT)
    names[1].align_to(bars[-1], RIGHT)
    head = fit_lines(title, S.SMALL, colour, BAR_CHART_W + GAP.xl, max_lines=2)
    above(head, VGroup(bars, first, last), buff=GAP.s)
    chart = VGroup(head, base, bars, first, last, names)
    chart.bars, chart.head, chart.ends = bars, head, VGroup(first, last, names)
    return chart


def norm_picture(scene, f: dict) -> Group:
    """The row's numbers as a histogram on one axis (`raw`), the normalised numbers' histogram on the
    same axis (`normed`, to transform into), their mean and spread as words (`raw_note`, `normed_note`);
    under them the two spread charts (`charts`: the stream's spread entering each layer, and after
    LayerNorm)."""
    b = scene.bundle
    rms = "rms" in f                                       # RMSNorm's facts (rms_facts), else LayerNorm's
    reach = 3.0 * max(1.0, f["rms"] if rms else f["std"])  # the axis holds 3 spreads of the wider row
    # each histogram on its own height scale (a row packed into one bin would flatten the other)
    raw_counts = histogram(f["x"], -reach, reach, HIST_BINS)
    normed_counts = histogram(f["normed"], -reach, reach, HIST_BINS)
    raw = hist_bars(raw_counts, max(raw_counts) or 1, S.RESIDUAL)
    normed = hist_bars(normed_counts, max(normed_counts) or 1, S.RESIDUAL)
    axis = Line(LEFT * HIST_W / 2, RIGHT * HIST_W / 2, color=S.MUTED, stroke_width=2)
    ticks = VGroup()
    for v in (-reach, 0.0, reach):
        x = HIST_W / 2 * v / reach
        t = label(N.fmt_signed(v, 0) if v else N.fmt_fixed(0, 0), S.SMALL, S.MUTED, mono=True)
        ticks.add(t.next_to(axis.point_from_proportion(0.5) + RIGHT * x, DOWN, buff=GAP.xs))
    raw.next_to(axis, UP, buff=GAP.none)
    normed.next_to(axis, UP, buff=GAP.none)
    # each histogram sits where its numbers are on the axis: bars are laid out over the whole axis
    tok = S.show_token(b.tokens[f["token"]])
    if rms:      # RMSNorm: divided by the root mean square; the mean stays where it was
        raw_note = label(scene.text("rms-raw", token=tok, mean=N.fmt_signed(f["mean"], 2), rms=N.fmt_fixed(f["rms"], 2)),
                         S.SMALL, S.RESIDUAL)
        normed_note = label(scene.text("rms-after", mean=N.fmt_signed(f["normed_mean"], 2),
                                       rms=N.fmt_fixed(f["normed_rms"], 2)), S.SMALL, S.INK)
    else:
        raw_note = label(scene.text("norm-raw", token=tok, mean=N.fmt_signed(f["mean"], 2), std=N.fmt_fixed(f["std"], 2)),
                         S.SMALL, S.RESIDUAL)
        n_mean, n_std = float(f["normed"].mean()), float(f["normed"].std())
        normed_note = label(scene.text("norm-after", mean=N.fmt_fixed(abs(n_mean), 2), std=N.fmt_fixed(n_std, 2)),
                            S.SMALL, S.INK)
    hist = VGroup(axis, ticks, raw)
    above(raw_note, raw, buff=GAP.s)
    raw_note.match_x(axis)
    normed_note.move_to(raw_note)
    tokens = VGroup()
    if rms:
        ends = (scene.text("floor-name", layer=1), scene.text("floor-name", layer=len(f["stream"])))
        stream = spread_chart(f["stream"], S.RESIDUAL, scene.text("rms-stream"), ends)
        after = spread_chart(f["reads"], S.INK, scene.text("rms-read"), ends)
        # every token's rms entering layer 1 (the bundle's rms1): each row is divided by its own
        per = "  ·  ".join(f"{S.clip_token(t, 8)} {N.fmt_fixed(v, 2)}" for t, v in zip(b.tokens, f["per_token"]))
        tokens = fit_lines(scene.text("rms-tokens", values=per), S.SMALL, S.RESIDUAL, S.TEXT_W)
    else:
        ends = (scene.text("floor-name", layer=1), scene.text("floor-name", layer=len(f["spread"])))
        stream = spread_chart(f["spread"], S.RESIDUAL, scene.text("norm-stream"), ends)
        after = spread_chart(f["ln_spread"], S.INK, scene.text("norm-read"), ends)
    charts = VGroup(stream, after).arrange(RIGHT, buff=GAP.xl * 2, aligned_edge=DOWN)
    if rms:
        above(tokens, raw_note, buff=GAP.s)
    top_part = VGroup(tokens, raw_note, hist) if rms else VGroup(raw_note, hist)
    below(charts, top_part, buff=GAP.xl)
    whole = Group(top_part, normed, normed_note, charts)
    fit_width(whole, S.TEXT_W)
    if whole.height > S.CONTENT_H:
        whole.scale(S.CONTENT_H / whole.height)
    place_in(whole, S.CONTENT)
    whole.raw, whole.normed, whole.axis, whole.ticks = raw, normed, axis, ticks
    whole.raw_note, whole.normed_note, whole.charts, whole.tokens = raw_note, normed_note, charts, tokens
    return whole
