"""Numbers and tokens as a narrator says them."""
from __future__ import annotations


def spoken_count(n: int) -> str:
    """23669760 -> '23.7 million'; small numbers stay exact with separators."""
    for word, size in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6)):
        if abs(n) >= size:
            return f"{n / size:.3g} {word}"
    return f"{n:,}"


def spoken_pct(p: float) -> str:
    return f"{100 * p:.1f} percent"


def spoken_token(text: str) -> str:
    """A token quoted for speech and captions: ' the' -> '"the"'."""
    return f"“{text.strip() or text}”"


def spoken_prob(p: float) -> str:
    """Probabilities as said aloud, with enough digits that random weights' tiny values do not read 0."""
    pct = 100 * p
    if pct >= 0.05 or pct == 0:
        return f"{pct:.1f} percent"
    return f"{pct:.2g} percent"
