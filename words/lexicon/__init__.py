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

Words in the model's language: GPT-2 reads English, and a line quotes its tokens (" the", " cat",
the prompt) as they are. A voice of another language reads them with its own letters (espeak-ng's
Spanish voice says "te" for " the" and "parenti" for "parency"). `voice_parts(text, lang)` splits a
line into its own words and the model's: a quoted span (the marks of the language's film:quoted,
«…» in Spanish and Urdu) is the model's language unless the language's catalogs write that
quotation themselves (a phrase quoted in Spanish, «aprendido», whose English msgid does not hold
it). Only the voice's own words are respelled and have their numbers said; a voice that can switch
language mid-sentence (espeak-ng, through SSML: voiceover/services.py) reads the model's words in
English, any other voice gets the plain text.

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


MODEL_LANGUAGE = "en"        # the language of the model's tokens (GPT-2 reads English)


@lru_cache(maxsize=16)
def _quote_marks(lang: str, root: str) -> tuple[str, str] | None:
    """(open, close) of a language's film:quoted ('«', '»'), None without a catalog."""
    words = _words(lang)
    if words is None or not words.has("film:quoted"):
        return None
    before, _, after = words.template("film:quoted").partition("{token}")
    return (before, after) if before and after else None


_PLACEHOLDER = re.compile(r"\{[A-Za-z_]\w*\}")


@lru_cache(maxsize=16)
def _own_quotations(lang: str, root: str) -> re.Pattern | None:
    """What a language's catalogs quote in their own words, as one pattern: each quotation the
    English msgid does not hold («aprendido» for "learned"; «the» stays the model's) and that has
    words of its own besides placeholders («id {row_id} → fila {row_id}»; «{token}» is the model's)."""
    from onepass.words import catalog
    marks = _quote_marks(lang, root)
    folder = Path(root) / base_language(lang)
    if marks is None or not folder.is_dir():
        return None
    pattern = re.compile(re.escape(marks[0]) + "(.+?)" + re.escape(marks[1]))
    own = set()
    for path in sorted(folder.glob("*.po")):
        for msg in catalog.read_po(path, source=False)[0].values():
            for form in msg.forms:
                own.update(q for q in pattern.findall(form)
                           if q not in msg.english and re.search(r"[^\W\d_]", _PLACEHOLDER.sub("", q)))
    if not own:
        return None
    return re.compile("|".join(".+?".join(map(re.escape, _PLACEHOLDER.split(q))) for q in sorted(own)))


def model_spans(text: str, lang: str | None) -> list[tuple[int, int]]:
    """(start, end) of each stretch of `text` in the model's language (MODEL_LANGUAGE): the tokens
    a line quotes, inside the quotation marks; none in the model's own language."""
    code = base_language(lang)
    if not code or code == MODEL_LANGUAGE or _words(lang) is None:
        return []
    from onepass.words import catalog
    root = str(catalog.CATALOGS)
    marks = _quote_marks(code, root)
    if marks is None:
        return []
    own = _own_quotations(code, root)
    pattern = re.escape(marks[0]) + "([^" + re.escape(marks[1]) + "]+)" + re.escape(marks[1])
    return [m.span(1) for m in re.finditer(pattern, text)
            if m.group(1).strip() and not (own and own.fullmatch(m.group(1)))]


def voice_parts(text: str, lang: str | None) -> list[tuple[str, str | None]]:
    """`text` as the voice is given it, in parts: (words, None) in the voice's own language, respelled
    and with their numbers said (for_voice); (words, MODEL_LANGUAGE) the model's tokens, as written."""
    spans = model_spans(text, lang)
    out, at = [], 0
    for start, end in spans:
        if start > at:
            out.append((for_voice(text[at:start], lang), None))
        out.append((text[start:end], MODEL_LANGUAGE))
        at = end
    if at < len(text) or not out:
        out.append((for_voice(text[at:], lang), None))
    return out
