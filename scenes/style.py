"""One visual language for the whole film: palette, fonts, sizes, value -> colour."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from manim import ManimColor, interpolate_color

from onepass.data import tokenizer
from onepass.data.visible import show_token  # noqa: F401 (a token made visible; manim-free, the tables use it too)
from onepass.words.catalog import is_rtl

BACKGROUND = ManimColor("#0E1117")
INK = ManimColor("#E8E8E8")          # body text
# secondary text, shapes, "…": 6.8:1 on BACKGROUND, 5.8:1 on PANEL (#8A8F98 before: its small
# digits measured 4.1-4.4:1 on 480p frames, where thin strokes never reach their full colour)
MUTED = ManimColor("#969BA4")
PANEL = ManimColor("#1B2030")        # cell / chip backgrounds

# one accent per concept, used in every chapter. Concepts one chapter shows together stay apart
# under simulated protanopia, deuteranopia and tritanopia (CIEDE2000 ≥ 4, normal vision ≥ 8;
# bench/accessibility.py palette, tests/test_accessibility.py): QUERY is pinker than the signed
# scale's POSITIVE (tritanopia saw them as one red) and ATTENTION bluer and lighter than NEGATIVE
# (protanopia saw them as one blue); as text each reads at 4.5:1 or more on BACKGROUND and PANEL
TOKEN = ManimColor("#FFD166")        # tokens and ids
QUERY = ManimColor("#F5528F")
KEY = ManimColor("#06D6A0")
VALUE = ManimColor("#4CC9F0")
ATTENTION = ManimColor("#B48CFF")    # attention weights
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
# the face for right-to-left text (Urdu, Arabic, Persian): Naskh rather than Nastaliq, because its
# lines keep to the height of DejaVu's at the same size (Nastaliq's slanted words need about twice
# it, and its stacked letters blur at 480p); installed by `make` (Debian's fonts-noto-core)
RTL_FACE = "Noto Naskh Arabic"

# the film's reading direction, set per language by the scene (set_direction): right-to-left
# films place sentences, headings and notes from the right, where their reader starts. START is
# the side a line of the film's own words begins on, END the other; GPT-2's own strings (tokens,
# ids, the prompt) and matrices keep their own order whatever the film's direction.
RTL = False
START, END = np.array([-1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])     # LEFT, RIGHT
def set_direction(lang: str):
    """Reading direction for `lang` (one scene process draws one language)."""
    global RTL, START, END
    RTL = is_rtl(lang)
    left, right = np.array([-1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])
    START, END = (right, left) if RTL else (left, right)

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


# -- named layout ------------------------------------------------------------------------------
# Top to bottom the frame holds the furniture row (chapter heading top-left, Σ meter top-right),
# the content box (CONTENT_TOP .. CAPTION_TOP) and the caption band (below CAPTION_TOP: always
# free). Scenes place things in these regions by name (onepass.scenes.layout.place_in / fit_to / below)
# instead of writing coordinates.
@dataclass(frozen=True)
class Region:
    """A box of the frame, in manim units."""
    left: float
    right: float
    bottom: float
    top: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.top - self.bottom

    @property
    def x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def y(self) -> float:
        return (self.bottom + self.top) / 2

    def point(self, direction=(0, 0, 0)) -> np.ndarray:
        """The centre (no direction), an edge's midpoint (LEFT, UP, …) or a corner (UL, DR, …)."""
        dx, dy = np.sign(direction[0]), np.sign(direction[1])
        x = self.left if dx < 0 else self.right if dx > 0 else self.x
        y = self.bottom if dy < 0 else self.top if dy > 0 else self.y
        return np.array([x, y, 0.0])

    def with_(self, **edges: float) -> "Region":
        """The same box with some edges moved, e.g. CONTENT.with_(top=1.0)."""
        return replace(self, **edges)


LEFT_EDGE = -FRAME_W / 2 + MARGIN    # -6.76: the heading's left edge; nothing starts further left
RIGHT_EDGE = FRAME_W / 2 - MARGIN    #  6.76: the meter's right edge; nothing reaches further right
# margin to margin, furniture row to caption band
FULL = Region(LEFT_EDGE, RIGHT_EDGE, CAPTION_TOP, CONTENT_TOP)
# the content box: centred, a little air inside FULL on every side (y from -2.8 to 2.3)
CONTENT = Region(-(FULL.width - 0.4) / 2, (FULL.width - 0.4) / 2, CAPTION_TOP + 0.1, CONTENT_TOP - 0.1)
# lines of text and tables, centred: the width a sentence at S.SMALL or a ledger table is fitted to
TEXT = Region(-6.3, 6.3, CAPTION_TOP, CONTENT_TOP)
# two halves side by side (prefill | decode, encoder | decoder)
LEFT_HALF, RIGHT_HALF = FULL.with_(right=0.0), FULL.with_(left=0.0)
# a list on the left (chapter 04's probability bars, hung below a one-line header) and a side
# panel on the right that explains it (a plot's axis labels may hang left of it, into the gap)
SIDE_PANEL = FULL.with_(left=1.3)
LEFT_COLUMN = FULL.with_(right=SIDE_PANEL.left, top=1.75)

FULL_W = FULL.width                  # 13.52
CONTENT_W = CONTENT.width            # 13.12
CONTENT_H = CONTENT.height           # 5.1
CONTENT_Y = CONTENT.y                # -0.25
TEXT_W = TEXT.width                  # 12.6
HEADLINE_Y = CONTENT_TOP - 0.45      # 1.95: a beat's one-line title, at the top of the content box
TOP_LINE_Y = 2.62                    # a scene title in the furniture row, between heading and meter
FOOTER_Y = CAPTION_TOP + 0.35        # -2.55: a one-line note just above the caption band


def diverging(value: float, vmax: float) -> ManimColor:
    """Signed value on the shared negative/zero/positive scale."""
    if not np.isfinite(value):
        return PANEL
    t = float(np.clip(value / vmax, -1.0, 1.0)) if vmax > 0 else 0.0
    return interpolate_color(ZERO, POSITIVE if t >= 0 else NEGATIVE, abs(t))


def sequential(p: float, hue: ManimColor = ATTENTION) -> ManimColor:
    """Probability in [0, 1] on the shared sequential scale."""
    return interpolate_color(ZERO, hue, float(np.clip(p, 0.0, 1.0)) ** 0.6)


def _luminance(colour: ManimColor) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour."""
    rgb = np.asarray(colour.to_rgb(), dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def ink_on(fill: ManimColor, opacity: float = 1.0) -> ManimColor:
    """The colour of a number written on a cell of colour `fill`: INK where it reads at 4.5:1 or more,
    else BACKGROUND's near-black (the light end of a scale: a full POSITIVE or ATTENTION cell, where
    INK read at 2.1-2.5:1), else, on the few fills between, pure white or black, whichever contrasts
    more (at least 4.58:1 on any fill; WCAG 1.4.3, bench/accessibility.py measures it on frames).
    A fill drawn at `opacity` over the background is taken as the colour it makes there."""
    fill_l = _luminance(interpolate_color(BACKGROUND, fill, opacity))

    def ratio(c: ManimColor) -> float:
        return (max(_luminance(c), fill_l) + 0.05) / (min(_luminance(c), fill_l) + 0.05)
    for ink in (INK, BACKGROUND):
        if ratio(ink) >= 4.5:
            return ink
    return max((ManimColor("#FFFFFF"), ManimColor("#000000")), key=ratio)


def clip_token(token: str | int | bytes, max_chars: int = 11) -> str:
    """show_token cut to max_chars with '…': long tokens keep a legible size instead of shrinking
    (a <D8> byte is never cut in half)."""
    shown = show_token(token)
    if len(shown) <= max_chars:
        return shown
    cut = shown[:max_chars - 1]
    if "<" in cut[-3:] and ">" not in cut[cut.rindex("<"):]:
        cut = cut[:cut.rindex("<")]
    return cut + "…"


visible_bytes = tokenizer.visible_bytes   # whole characters as themselves, stray bytes as <D8>

