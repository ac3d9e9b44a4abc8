"""One term for one concept: the film's technical terms per language (words/glossary.tsv) and the
spellings a translation must not use for them (words/glossary-avoid.tsv).

    words/glossary.tsv         en<TAB>es<TAB>ur, one concept a row; a cell may list the forms a
                               translation may use, separated by '|' (the first is the term:
                               'puntuación|puntuaciones'); a form is found inside a longer word
                               (ٹوکن in ٹوکنز, capa in capas)
    words/glossary-avoid.tsv   lang<TAB>avoid<TAB>use<TAB>why: a spelling of a concept that the
                               glossary replaced (another spelling, another gender, a spelling that
                               is also a common function word), found as a whole word

`violations(lang, messages)` compares a catalog's messages with English's: a message whose English
names a term must name the language's term, and no message may use an avoided spelling. Checked
on the kit's and the film's words by tests/test_spoken_forms.py; a chapter's translators run it on
their catalog (`python -m onepass.words.glossary es ch02.po`).
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from onepass.words import markup

HERE = Path(__file__).resolve().parent
GLOSSARY = HERE / "glossary.tsv"
AVOID = HERE / "glossary-avoid.tsv"


@dataclass(frozen=True)
class Term:
    en: str
    forms: dict[str, tuple[str, ...]]     # lang -> the forms a translation may use (first: the term)

    def english(self) -> re.Pattern:
        """The English term as a word, with its plural ('keys', 'probabilities'), in any case."""
        t = re.escape(self.en)
        plural = (t[:-1] + "ies|" if self.en.endswith("y") else "") + t + "s|" + t + "es|" + t
        return re.compile(rf"(?<![\w-])(?:{plural})(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class Avoid:
    lang: str
    avoid: str
    use: str
    why: str

    def pattern(self) -> re.Pattern:
        return re.compile(rf"(?<![\w\u0620-\u065f\u066e-\u06d3]){re.escape(self.avoid)}(?![\w\u0620-\u065f\u066e-\u06d3])")


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    head = lines[0].split("\t")
    return head, [ln.split("\t") for ln in lines[1:]]


@lru_cache(maxsize=1)
def terms() -> tuple[Term, ...]:
    head, rows = _rows(GLOSSARY)
    out = []
    for r in rows:
        cells = dict(zip(head, r))
        out.append(Term(cells["en"], {lang: tuple(f.strip() for f in cells[lang].split("|"))
                                      for lang in head[1:] if cells.get(lang)}))
    return tuple(out)


@lru_cache(maxsize=1)
def avoided() -> tuple[Avoid, ...]:
    _, rows = _rows(AVOID)
    return tuple(Avoid(*(r + ["", "", "", ""])[:4]) for r in rows)


def term(en: str, lang: str) -> str:
    """The language's term for an English one ('key', 'ur' -> 'کلید')."""
    for t in terms():
        if t.en.lower() == en.lower():
            return t.forms[lang][0]
    raise KeyError(en)


def _plain(text: str) -> str:
    """A message's words: markers and {placeholders} out."""
    return re.sub(r"\{[A-Za-z_][A-Za-z0-9_]*\}", " ", markup.MARK.sub(" ", text))


def violations(lang: str, messages: dict[str, tuple[str, str]], strict: bool = True) -> list[str]:
    """messages: id -> (English text, translated text). Each problem as 'id: ...': a spelling the
    glossary replaced; and (strict) a message whose English names a term its translation lacks
    (prose may say a term another way, so chapters are held to the avoided spellings only)."""
    out = []
    for mid, (english, translated) in sorted(messages.items()):
        en, tr = _plain(english), _plain(translated)
        for t in terms():
            forms = t.forms.get(lang)
            if not strict or not forms or not t.english().search(en):
                continue
            if not any(f.lower() in tr.lower() for f in forms):
                out.append(f"{mid}: English says {t.en!r}; the {lang} glossary term is {forms[0]!r}")
        for a in avoided():
            if a.lang == lang and a.pattern().search(tr):
                out.append(f"{mid}: {a.avoid!r} -> {a.use!r} ({a.why})")
    return out


def catalog_messages(lang: str, name: str, root: Path | None = None) -> dict[str, tuple[str, str]]:
    """id -> (English, translation) of one catalog file (kit.po, film.po, ch02.po), every plural form joined."""
    import polib
    base = root or HERE / "catalogs"
    en = {e.msgctxt: e for e in polib.pofile(str(base / "en" / name))}
    out = {}
    for e in polib.pofile(str(base / lang / name)):
        if e.obsolete or not e.msgctxt or e.msgctxt not in en:
            continue
        src = en[e.msgctxt]
        english = " ".join([src.msgid, src.msgid_plural or ""])
        text = " ".join(v for v in e.msgstr_plural.values()) if e.msgstr_plural else e.msgstr
        if text:
            out[e.msgctxt] = (english, text)
    return out


if __name__ == "__main__":          # python -m onepass.words.glossary es ch02.po [...]
    lang, names = sys.argv[1], sys.argv[2:]
    wrong = {f"{n}: {v}" for n in names for v in violations(lang, catalog_messages(lang, n), strict=False)}
    found = [f"{n}: {v}" for n in names for v in violations(lang, catalog_messages(lang, n))]
    print("\n".join(v if v in wrong else v + " (check: said another way?)" for v in found) or "no violations")
    sys.exit(1 if wrong else 0)
