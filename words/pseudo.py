"""The pseudo-language `qps`: English made longer and foreign-looking, as translators' tools do.

Every message is wrapped in ⟦ ⟧ (a string on screen without them escaped the catalogs), every
letter gets an accent, and each word is lengthened by about 40% (vowels doubled) so layouts meet
longer text. Placeholders and markers are kept exactly: they are names, not words.
"""
from __future__ import annotations

import re
from dataclasses import replace

from onepass.words.markup import MARK

OPEN, CLOSE = "⟦", "⟧"
_ACCENTS = str.maketrans(
    "abcdeghijklnorstuwyzABCDEGHIJKLNORSTUWYZ",
    "àƀçđéĝĥíĵķļñöŕšţûŵýžÀƁÇĐÉĜĤÍĴĶĻÑÖŔŠŢÛŴÝŽ")
# what is kept as it is: markers, a literal brace ({{ and }}, str.format's escapes: never
# lengthened into {{{, which no longer formats), {placeholders}, and runs without letters
_KEEP = re.compile(MARK.pattern + r"|\{\{|\}\}|\{[^{}]*\}|[^A-Za-z{}<]+")
_VOWELS = "aeiouyAEIOUY"


def _longer(word: str) -> str:
    """A word about 40% longer: its vowels doubled from the first on, as many as needed."""
    extra = round(0.4 * len(word))
    out = []
    for ch in word:
        out.append(ch)
        if extra and ch in _VOWELS:
            out.append(ch)
            extra -= 1
    if extra:
        out.append(out[-1] * extra)
    return "".join(out).translate(_ACCENTS)


def pseudo(template: str) -> str:
    """One template in the pseudo-language (its line breaks, markers and placeholders kept)."""
    if not template.strip():
        return template
    out, at = [], 0
    for m in _KEEP.finditer(template):
        if m.start() > at:
            out.append(_longer(template[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    if at < len(template):
        out.append(_longer(template[at:]))
    return OPEN + "".join(out) + CLOSE


def pseudo_message(msg):
    """A catalog Message in the pseudo-language."""
    return replace(msg, forms=tuple(pseudo(f) for f in msg.forms))
