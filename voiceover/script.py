"""Narration as data: per chapter, the lines of the catalog (words/catalogs/<lang>/chNN.po), in
order, filled with values computed from the bundle.

A line's id is `chNN-<beat>` (its wording for random weights `chNN-<beat>.synthetic`); the beats a
chapter speaks are its English catalog's line ids, in catalog order. A chapter's script module
(voiceover/scripts/chNN.py) holds only
    values(bundle, ledger, words) -> dict of the values its lines name
each a string formatted by words/numbers.py (or a whole number). A name a line uses that the
values lack fails loudly, naming the line.
"""
from __future__ import annotations

import importlib
import re
import unicodedata

from onepass.data.errors import OnepassError
from onepass.words.catalog import DESCRIBE, STILL, Words, english, is_narration
from onepass.words import numbers
from onepass.words.markup import Filled

WORDS_PER_SECOND = 2.6   # an unhurried narrator; used to time the silent ('none') voice


class ScriptError(OnepassError, RuntimeError):
    """A narration script that cannot be used (a line missing, a value it names unknown); the message says which."""


def line_id(chapter: str, beat: str) -> str:
    """The id a line is known by: its catalog id, and the name of its recorded clip ('<id>.wav')."""
    return f"ch{chapter}-{beat}"


def beats(chapter: str) -> list[str]:
    """The beats chapter `chapter` narrates, in catalog order (the title line first)."""
    prefix = f"ch{chapter}-"
    out = [mid[len(prefix):] for mid in english() if mid.startswith(prefix) and is_narration(mid)]
    return (["title"] if "title" not in out else []) + out


def chapter_values(chapter: str, bundle, ledger, words: Words) -> dict:
    module = importlib.import_module(f"onepass.voiceover.scripts.ch{chapter}")
    return module.values(bundle, ledger, words)


def chapter_lines(chapter: str, bundle, ledger, words: Words | None = None) -> dict[str, Filled]:
    """beat -> the line as spoken (text and markers), for one chapter, language (default English)
    and bundle.

    Every chapter also gets a "title" line, read over its title card, unless its catalog
    writes its own (chNN-title)."""
    words = words or Words.load()
    with numbers.language(words.lang):       # values written as this language writes numbers
        values = chapter_values(chapter, bundle, ledger, words)
    out = {}
    for beat in beats(chapter):
        mid = line_id(chapter, beat)
        if beat == "title" and not words.has(mid):
            title = words.text(f"chapter-{chapter}")
            out[beat] = words.line("film:title-line", {"number": int(chapter), "title": title})
        else:
            try:
                out[beat] = words.line(mid, values, bundle.synthetic, bundle.shape.component_tags())
            except (KeyError, IndexError) as exc:
                raise ScriptError(f"{words.lang}: line {mid}: {exc!r}") from None
    return out


def description_id(chapter: str, beat: str) -> str:
    """The id of a beat's audio description: `chNN-<beat>.describe`."""
    return line_id(chapter, beat) + DESCRIBE


def chapter_descriptions(chapter: str, bundle, ledger, words: Words | None = None,
                         still: bool = False) -> dict[str, Filled]:
    """beat -> its audio description (text and markers), for the beats of chapter_lines that have
    one (every narrated beat of a chapter onepass.words.catalog.described; `title` where written), in
    beat order. Its values are the chapter's (voiceover/scripts/chNN.py values()); one the
    description names that the values lack fails naming the description. `still`: each in its
    wording for the beat's settled frame (`chNN-<beat>.describe.still`, the model's variant's
    where written; the description where it narrates no motion), the handout's alternative text."""
    words = words or Words.load()
    with numbers.language(words.lang):
        values = chapter_values(chapter, bundle, ledger, words)
    out = {}
    for beat in beats(chapter):
        mid = description_id(chapter, beat)
        if not words.has(mid):
            continue
        try:
            out[beat] = words.line(mid + STILL if still else mid, values, variants=bundle.shape.component_tags())
        except (KeyError, IndexError) as exc:
            raise ScriptError(f"{words.lang}: description {mid}: {exc!r}") from None
    return out


def estimated_seconds(text: str) -> float:
    return max(1.5, len(text.split()) / WORDS_PER_SECOND + 0.4)


# a sentence ends at . ! ? … (and Urdu's ۔ ؟), closing quotes or brackets after it, then a space
_SENTENCE_END = re.compile(r"[.!?…۔؟][\"”’)»]*\s+")
_QUOTES = "\"“‘(«"


def _starts_sentence(rest: str) -> bool:
    """A next sentence starts with a capital, a digit, Spanish ¿ or ¡, or a letter of a script
    without case (Urdu, Hindi, Chinese), after an opening quote or bracket if any; a small letter
    means the full stop was not a sentence's end ("e.g. the")."""
    ch = rest[1:2] if rest[:1] in _QUOTES else rest[:1]
    return bool(ch) and (ch.isupper() or ch.isdigit() or ch in "¿¡" or unicodedata.category(ch) == "Lo")


def split_sentences(text: str) -> list[str]:
    """A line's sentences, in order (one caption and one synthesis call each), in any language."""
    text = " ".join(text.split())
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if _starts_sentence(text[m.end():m.end() + 2]):
            out.append(text[start:m.end()].strip())
            start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s] or [text]


def sentence_starts(text: str, sentences: list[str]) -> list[int]:
    """Where each of a line's sentences starts in its (whitespace-collapsed) text."""
    starts, cursor = [], 0
    for s in sentences:
        k = text.find(s, cursor)
        starts.append(k if k >= 0 else cursor)
        cursor = starts[-1] + len(s)
    return starts


def sentence_marks(text: str, sentences: list[str], offsets: list[int]) -> list[tuple[int, int]]:
    """Each character offset of `text` as (the sentence it falls in, its offset in that sentence)."""
    starts = sentence_starts(text, sentences)
    out = []
    for k in offsets:
        i = max([j for j, a in enumerate(starts) if a <= k] or [0])
        out.append((i, k - starts[i]))
    return out
