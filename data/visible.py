"""What of a bundle the pictures and the tables beside them show, without manim: a token made
visible (`·sat`, `↵`, `<D8>`) and which items of a long prompt fit (the first ones with '…', or the
last rows, the ones that predict). The scenes draw with these and film/kit/tables.py writes its
tables with them, so a table names and windows its rows exactly as its picture does."""
from __future__ import annotations

import unicodedata

import numpy as np

from onepass.data import tokenizer


def show_token(token: str | int | bytes) -> str:
    """A token made visible: leading space as '·', newline/tab as symbols, and a token that is
    part of a character as its bytes (<D8>). Pass the token's id (or its bytes) wherever the id is
    known: its decoded text alone has already lost those bytes to U+FFFD."""
    if isinstance(token, (int, np.integer)):
        token = tokenizer.readable(int(token))
    if isinstance(token, bytes):
        token = tokenizer.visible_bytes(token)
    return "".join(_visible_char(ch) for ch in token) or "∅"


def _visible_char(ch: str) -> str:
    """A character that draws something: space, newline and tab as symbols, other spaces (no-break,
    ideographic, ...) as '␣', and invisible format characters (zero-width joiner, ...) by code point,
    so no token is ever drawn as nothing (an empty Text has no size to place)."""
    if ch in _SHOWN:
        return _SHOWN[ch]
    kind = unicodedata.category(ch)
    if kind in ("Zs", "Zl", "Zp"):
        return "␣"
    if kind in ("Cf", "Cc"):
        return f"U+{ord(ch):04X}"
    return ch


_SHOWN = {" ": "·", "\n": "↵", "\t": "⇥"}


def window(n: int, limit: int) -> tuple[list[int], bool]:
    """Indices to show of n items when at most `limit` fit: the first ones, then '…'."""
    if n <= limit:
        return list(range(n)), False
    return list(range(limit - 1)), True


GRID_TOKENS = 8   # at most this many tokens as rows (and columns) of a T x something grid at 480p


def token_window(T: int, limit: int = GRID_TOKENS) -> list[int]:
    """The last `limit` token positions: the last row is the one that predicts."""
    return list(range(max(0, T - limit), T))
