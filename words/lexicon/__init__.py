"""Pronunciation as data: per language, the terms its voice reads wrongly and what it is given instead.

    words/lexicon/<lang>.tsv    term<TAB>say<TAB>heard: `term` as the film writes it, `say` the
                                respelling the voice reads right, `heard` how the voice read the
                                term before (espeak-ng's phonemes, `espeak-ng -x -v <lang> "term"`)

`for_voice(text, lang)` is the text handed to the voice: the lexicon's respellings, then the numbers
as the language says them (onepass.words.numbers.voice_numbers). It is applied by the speech service
(voiceover/services.py), sentence by sentence, to what it synthesises, and nowhere else: captions,
the screen, handouts and descriptions keep the film's own spelling. A clip's cache key holds the
voiced text where it differs from the line, so editing a lexicon entry re-synthesises exactly the
lines that use it.

A term is matched as written (case and all), as a whole word where it begins or ends with a
letter or digit ('logit' is not respelled inside 'logits' by the wrong entry: the longest term
wins); a symbol ('×', '√', 'e^') is matched wherever it is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Entry:
    term: str
    say: str
    heard: str = ""


def base_language(lang: str | None) -> str:
    """The lexicon a voice language reads: en-us -> en, es-419 -> es; the pseudo-language qps is English."""
    code = (lang or "").replace("_", "-").split("-")[0].lower()
    return "en" if code == "qps" else code


@lru_cache(maxsize=16)
def entries(lang: str | None) -> tuple[Entry, ...]:
    """The lexicon of a language (none for a language without a file)."""
    path = HERE / f"{base_language(lang)}.tsv"
    if not path.is_file():
        return ()
    out, header = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        row = dict(zip(header, cells))
        out.append(Entry(row["term"], row["say"], row.get("heard", "")))
    return tuple(out)


@lru_cache(maxsize=16)
def _pattern(lang: str | None) -> re.Pattern | None:
    found = sorted(entries(lang), key=lambda e: -len(e.term))
    if not found:
        return None
    parts = []
    for e in found:
        left = r"(?<![\w])" if re.match(r"\w", e.term[0]) else ""
        right = r"(?![\w])" if re.match(r"\w", e.term[-1]) else ""
        parts.append(left + re.escape(e.term) + right)
    return re.compile("|".join(parts))


def respell(text: str, lang: str | None) -> tuple[str, tuple[Entry, ...]]:
    """(the text with the lexicon's respellings, the entries used, in order of first use)."""
    pattern = _pattern(lang)
    if pattern is None:
        return text, ()
    table = {e.term: e for e in entries(lang)}
    used: dict[str, Entry] = {}

    def one(m: re.Match) -> str:
        e = table[m.group(0)]
        used.setdefault(e.term, e)
        return e.say

    out = pattern.sub(one, text)
    return re.sub(r"[ \t]{2,}", " ", out), tuple(used.values())


@lru_cache(maxsize=16)
def _words(lang: str):
    """The film-wide words (film.po: number words, ordinals) a voice language says them with, English
    beneath; None for a language with no catalog. Only film.po is read: a voice's cache key is
    worked out on every build, and the chapters' catalogs are not needed for it."""
    from onepass.words import catalog
    code = base_language(lang)
    own = catalog.CATALOGS / code / "film.po"
    if not own.is_file():
        return None
    base, rule = catalog.read_po(catalog.CATALOGS / catalog.SOURCE / "film.po", source=True)
    if code != catalog.SOURCE:
        found, rule = catalog.read_po(own, source=False)
        base = {**base, **found}
    return catalog.Words(code, base, catalog.plural_rule(rule))


def for_voice(text: str, lang: str | None) -> str:
    """What the voice is given for `text` (a sentence or a line) in `lang` (a voice's language:
    en-us, es, ur): respelled by the lexicon, its numbers as the language says them. A language
    without a catalog (or None: a voice that speaks anything) gets the text as it is."""
    words = _words(lang) if lang else None
    if words is None:
        return text
    from onepass.words import numbers
    said, _ = respell(text, lang)
    return numbers.voice_numbers(said, words)
