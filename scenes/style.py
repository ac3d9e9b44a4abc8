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

# fixed decimals per kind of number
DECIMALS = {"score": 2, "vector": 2, "prob_pct": 1}


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
    """Fixed decimals with a real minus sign; -inf as −∞."""
    if np.isneginf(x):
        return "−∞"
    return f"{x:.{decimals}f}".replace("-", "−")


def fmt_pct(p: float, decimals: int = 1) -> str:
    return f"{100 * p:.{decimals}f}%"


def fmt_int(n: int) -> str:
    return f"{n:,}"


def show_token(text: str) -> str:
    """A token's text made visible: leading space as '·', newline/tab as symbols."""
    return text.replace(" ", "·").replace("\n", "↵").replace("\t", "⇥") or "∅"
