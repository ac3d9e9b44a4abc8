"""One visual language for the whole film: palette, fonts, sizes, value -> colour."""
from __future__ import annotations

import numpy as np
from manim import ManimColor, interpolate_color

BACKGROUND = ManimColor("#0E1117")
INK = ManimColor("#E8E8E8")          # body text
MUTED = ManimColor("#8A8F98")        # secondary text, shapes, "…"
PANEL = ManimColor("#1B2030")        # cell / chip backgrounds

# one accent per concept, used in every chapter
TOKEN = ManimColor("#FFD166")        # tokens and ids
QUERY = ManimColor("#EF476F")
KEY = ManimColor("#06D6A0")
VALUE = ManimColor("#4CC9F0")
ATTENTION = ManimColor("#C77DFF")    # attention weights
MLP = ManimColor("#F4A261")
LOGIT = ManimColor("#80ED99")        # logits and next-token probabilities
RESIDUAL = ManimColor("#A8DADC")     # the residual stream
FLOPS = ManimColor("#FFB703")        # the meter
WARNING = ManimColor("#FF6B6B")      # the random-weights mark

# signed values: negative / zero / positive
NEGATIVE = ManimColor("#3A86FF")
ZERO = ManimColor("#2A2F3A")
POSITIVE = ManimColor("#FF5E3A")

SANS = "DejaVu Sans"
MONO = "DejaVu Sans Mono"

# sizes: nothing smaller than SMALL, which still reads on an 854x480 frame
TITLE_SIZE = 34
BODY_SIZE = 26
NUMBER_SIZE = 22
SMALL = 20

# frame furniture (manim units; the frame is 14.22 x 8)
FRAME_W, FRAME_H = 14.22, 8.0
CAPTION_TOP = -2.9                   # the bottom band below this stays free for captions
CONTENT_TOP = 2.4                    # below the title / meter row
MARGIN = 0.35


def diverging(value: float, vmax: float) -> ManimColor:
    """Signed value on the shared negative/zero/positive scale."""
    if not np.isfinite(value):
        return PANEL
    t = float(np.clip(value / vmax, -1.0, 1.0)) if vmax > 0 else 0.0
    return interpolate_color(ZERO, POSITIVE if t >= 0 else NEGATIVE, abs(t))


def sequential(p: float, hue: ManimColor = ATTENTION) -> ManimColor:
    """Probability in [0, 1] on the shared sequential scale."""
    return interpolate_color(ZERO, hue, float(np.clip(p, 0.0, 1.0)) ** 0.6)


def fmt_signed(x: float, decimals: int) -> str:
    """Fixed decimals with a real minus sign; -inf as −∞; no "−0.00" for values that round to zero."""
    if np.isneginf(x):
        return "−∞"
    text = f"{x:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−")


def fmt_pct(p: float, decimals: int = 1) -> str:
    return f"{100 * p:.{decimals}f}%"


def prob_decimals(probs) -> int | None:
    """Decimals for a column of percentages: 1, or enough that the smallest keeps 2 significant digits;
    None (format each value on its own) when the column spans more than two orders of magnitude."""
    pcts = [100 * float(p) for p in probs if p > 0]
    small, big = min(pcts, default=100.0), max(pcts, default=100.0)
    if small >= 0.05:
        return 1
    if big / small > 100 or small < 1e-4:
        return None
    return int(max(1, -np.floor(np.log10(small)) + 1))


def fmt_prob(p: float, decimals: int | None = None) -> str:
    """A probability as a percentage: 1 decimal, or 2 significant digits when that would read 0.0%
    (random weights spread the vote so thin that every candidate is a few thousandths of a percent).
    `decimals` fixes the decimals, for a column (see prob_decimals)."""
    pct = 100 * float(p)
    if decimals is not None:
        return f"{pct:.{decimals}f}%"
    if pct >= 0.05 or pct == 0:
        return f"{pct:.1f}%"
    if pct < 1e-4:
        return "<0.0001%"
    return f"{pct:.2g}%"


def fmt_int(n: int) -> str:
    return f"{n:,}"


def fmt_ratio(x: float) -> str:
    """A ratio such as characters per token: one decimal."""
    return f"{x:.1f}"


def fmt_cos(c: float) -> str:
    """A cosine similarity: two decimals, with a real minus sign."""
    return f"{c:.2f}".replace("-", "−")


def clip_token(text: str, max_chars: int = 11) -> str:
    """show_token cut to max_chars with '…': long tokens keep a legible size instead of shrinking."""
    shown = show_token(text)
    return shown if len(shown) <= max_chars else shown[:max_chars - 1] + "…"


def show_token(text: str) -> str:
    """A token's text made visible: leading space as '·', newline/tab as symbols."""
    return text.replace(" ", "·").replace("\n", "↵").replace("\t", "⇥") or "∅"
