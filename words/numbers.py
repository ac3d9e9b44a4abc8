"""Numbers as the film writes and says them: the one formatting layer.

Every number on screen or in the narration is formatted here (scenes call the screen forms,
narration scripts the spoken ones), so a locale changes them in one place. The spoken forms
take their words ("million", "percent", quotes) from the catalog (`words`: a words.Words).

Written forms follow the language's locale (CLDR data through Babel): its decimal and group
separators and where its percent sign goes (English 41.2%, Spanish 41,2 %). The digits are
Python's own (the same rounding in every language, so no language shows another digit), then
the separators are swapped in. Every language writes Western digits (0-9): technical Urdu
commonly does, and espeak-ng's Urdu voice reads them, where it cannot read Extended
Arabic-Indic digits. Screen forms use the language set for the process (`set_language`, done
by the scene and the narration builder); spoken forms use the language of the `words` given.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from babel import Locale, UnknownLocaleError
from babel.numbers import format_decimal

from onepass.data.flops import human
from onepass.words.catalog import PSEUDO, SOURCE, Words
from onepass.words.grammar import ES_NOT_NOUN as _ES_NOT_NOUN
from onepass.words.grammar import es_de as _es_de
from onepass.words.grammar import written_grammar  # noqa: F401  (part of this module's interface)

_LANG: ContextVar[str] = ContextVar("onepass_numbers_language", default=SOURCE)


def set_language(lang: str):
    """The language screen numbers are written in from now on (one scene process, one language)."""
    _LANG.set(lang)


@contextmanager
def language(lang: str):
    """Screen numbers in `lang` inside the block (the narration builder, tests)."""
    token = _LANG.set(lang)
    try:
        yield
    finally:
        _LANG.reset(token)


@dataclass(frozen=True)
class NumberStyle:
    """How one locale writes numbers: its separators and the text around a percentage."""
    locale: str
    decimal: str
    group: str
    percent_prefix: str
    percent_suffix: str

    def local(self, text: str) -> str:
        """A number written the Python way ('1,234.5') with this locale's separators."""
        return text.translate({ord("."): self.decimal, ord(","): self.group})

    def percent(self, digits: str) -> str:
        return f"{self.percent_prefix}{self.local(digits)}{self.percent_suffix}"


@lru_cache(maxsize=32)
def style_for(lang: str) -> NumberStyle:
    """The number style of a language code (qps writes English's; an unknown locale English's)."""
    try:
        loc = Locale.parse(SOURCE if lang == PSEUDO else lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        loc = Locale.parse(SOURCE)
    symbols = loc.number_symbols["latn"]        # Babel >= 2.14 keys them by numbering system; ours is latn
    pattern = loc.percent_formats[None]
    return NumberStyle(str(loc), symbols["decimal"], symbols["group"], pattern.prefix[0], pattern.suffix[0])


def _style() -> NumberStyle:
    return style_for(_LANG.get())


# -- on screen -------------------------------------------------------------------------
def fmt_signed(x: float, decimals: int) -> str:
    """Fixed decimals with a real minus sign; -inf as −∞; no "−0.00" for values that round to zero."""
    if np.isneginf(x):
        return "−∞"
    text = f"{x:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return _style().local(text).replace("-", "−")


def fmt_pct(p: float, decimals: int = 1) -> str:
    return _style().percent(f"{100 * p:.{decimals}f}")


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
    pct, style = 100 * float(p), _style()
    if decimals is not None:
        return style.percent(f"{pct:.{decimals}f}")
    if pct >= 0.05 or pct == 0:
        return style.percent(f"{pct:.1f}")
    if pct < 1e-4:
        return "<" + style.percent("0.0001")
    return style.percent(f"{pct:.2g}")


def fmt_int(n: int) -> str:
    """A whole number with the locale's group separators: 50,257 (Spanish 50.257)."""
    return format_decimal(int(n), locale=_style().locale)


def step_words(words: Words, entry, shape) -> str:
    """The Σ FLOPs meter's words for a ledger entry (data/flops.py Entry.message), its whole numbers as
    fmt_int writes them ('MLP up 576→1,536'; a bare int went in as str() did: '576→1536'): the one way
    the scenes' meter, the handout's ledger and the transcript's tables name a step."""
    message, values = entry.message(shape)
    return words.text(message, **{k: fmt_int(v) if isinstance(v, int) and not isinstance(v, bool) else v
                                  for k, v in values.items()})


def fmt_ratio(x: float) -> str:
    """A ratio such as characters per token: one decimal."""
    return _style().local(f"{x:.1f}")


def fmt_cos(c: float) -> str:
    """A cosine similarity: two decimals, with a real minus sign."""
    return _style().local(f"{c:.2f}").replace("-", "−")


def fmt_fixed(x: float, decimals: int) -> str:
    """Fixed decimals, as they are (a '-' for negatives): 0.125 -> '0.13' at 2."""
    return _style().local(f"{x:.{decimals}f}")


def fmt_general(x: float, digits: int = 6) -> str:
    """Shortest form up to `digits` significant digits: 8.0 -> '8', 0.125 -> '0.125'."""
    return _style().local(f"{x:.{digits}g}")


# -- spoken ------------------------------------------------------------------------------
def _spoken(digits: str, words: Words) -> str:
    """A number's digits as the narration's language writes them (its voice reads that form:
    espeak-ng's Spanish reads "17,7" as "diecisiete coma siete")."""
    return style_for(words.lang).local(digits)


_LARGE = (("trillion", 1e12), ("billion", 1e9), ("million", 1e6))


def _trim(digits: str) -> str:
    """Digits as said: no decimals that are all zeros ('100.0' -> '100', '2.50' stays)."""
    whole, dot, frac = digits.partition(".")
    return whole if dot and not frac.strip("0") else digits


def spoken_count(n: int, words: Words) -> str:
    """23669760 -> '23.7 million'; small numbers stay exact with separators. Exactly one of a unit
    is the catalog's singular, which names no digit: 'a million', 'un millón', 'mil millones'."""
    for unit, size in _LARGE:
        if abs(n) >= size:
            digits = f"{n / size:.3g}"
            if "e" in digits:                   # 1000 trillion and more: whole trillions
                return words.text(f"film:number-{unit}", count=2, value=format_decimal(
                    round(n / size), locale=style_for(words.lang).locale))
            return words.text(f"film:number-{unit}", count=1 if digits == "1" else 2, value=_spoken(digits, words))
    return format_decimal(int(n), locale=style_for(words.lang).locale)


SMALLEST_SAID = 1e-4     # percent: smaller probabilities are said as "less than 0.0001 percent"


def spoken_pct(p: float, words: Words) -> str:
    """0.412 -> '41.2 percent' (1.0 -> '100 percent')."""
    return words.text("film:number-percent", value=_spoken(_trim(f"{100 * p:.1f}"), words))


def spoken_prob(p: float, words: Words) -> str:
    """Probabilities as said aloud, with enough digits that random weights' tiny values do not read 0;
    under 0.0001 percent, 'less than 0.0001 percent' (the screen's '<0.0001%'), never '4.2e-25'."""
    pct = 100 * p
    if 0 < pct < SMALLEST_SAID:
        return words.text("film:number-below-percent", value=_spoken(f"{SMALLEST_SAID:f}".rstrip("0"), words))
    value = f"{pct:.1f}" if pct >= 0.05 or pct == 0 else f"{pct:.2g}"
    return words.text("film:number-percent", value=_spoken(_trim(value), words))


def spoken_signed(x: float, decimals: int, words: Words) -> str:
    """-0.12 -> 'minus 0.12' (fixed decimals); -inf -> 'minus infinity' in the language's words."""
    if np.isneginf(x):
        return words.text("film:number-negative", value=words.text("film:infinity"))
    text = f"{x:.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    if text.startswith("-"):
        return words.text("film:number-negative", value=_spoken(text[1:], words))
    return _spoken(text, words)


def spoken_ordinal(n: int, words: Words, feminine: bool = False) -> str:
    """A rank, layer or row as an ordinal the language says: first to tenth as words (the catalog's
    film:ordinal-N, '.f' feminine: Spanish primera, Urdu پہلی; never Urdu's '1واں'), larger ones as
    the language writes them (English 21st, Spanish and Urdu the number with Urdu's واں/ویں)."""
    n = int(n)
    mid = f"film:ordinal-{n}" + (".f" if feminine else "")
    if 1 <= n <= 10 and words.has(mid):
        return words.text(mid)
    value = format_decimal(n, locale=style_for(words.lang).locale)
    lang = words.lang.split("-")[0]
    if lang in ("en", PSEUDO):
        last = 0 if 10 <= n % 100 <= 20 else n % 10
        return value + {1: "st", 2: "nd", 3: "rd"}.get(last, "th")
    if lang == "ur":
        return value + ("ویں" if feminine else "واں")
    return value


def spoken_token(text: str, words: Words) -> str:
    """A token quoted for speech and captions: ' the' -> '“the”'."""
    return words.text("film:quoted", token=text.strip() or text)


def fmt_pct_short(p: float) -> str:
    """A percentage in as few digits as it needs (a setting such as top-p's): 0.9 -> '90%'."""
    return _style().percent(f"{100 * p:g}")


def _share_digits(x: float) -> str:
    """A share as a percentage's digits: 1 decimal, 2 significant digits under 0.1%."""
    return f"{100 * x:.1f}" if x >= 0.001 else f"{100 * x:.2g}"


def fmt_share(x: float) -> str:
    """A share of a whole (the score grid's of a pass): 0.123 -> '12.3%', 0.0000052 -> '0.00052%'."""
    return _style().percent(_share_digits(x))


def spoken_share(x: float, words: Words) -> str:
    """fmt_share as said aloud: '12.3 percent'."""
    return words.text("film:number-percent", value=_spoken(_trim(_share_digits(x)), words))


_SHORT = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3))


def fmt_short(n: float) -> str:
    """A large count in three significant digits and an SI letter, in the locale's digits:
    124439808 -> '124M', 1557611200 -> '1.56G' (Spanish '1,56G'); under 1,000 as it is."""
    for unit, size in _SHORT:
        if abs(n) >= size:
            digits = f"{n / size:.3g}"
            return _style().local(digits if "e" not in digits else f"{n / size:.0f}") + unit
    return fmt_int(int(n))


def fmt_human(n: float) -> str:
    """onepass.data.flops.human in the locale's digits: one decimal and an SI letter, '+307.4M' on a
    floor's tag (Spanish '307,4M'); English is exactly human()'s."""
    short = human(n)
    return _style().local(short[:-1]) + short[-1] if short[-1:].isalpha() else fmt_int(int(n))


def fmt_whole(x: float) -> str:
    """A large ratio rounded to a whole number, with group separators: 1432.6 -> '1,433'."""
    return format_decimal(int(round(x)), locale=_style().locale)


# -- what the voice is given ---------------------------------------------------------------
# A line's text is written (captions, the screen); `voice_numbers` turns the numbers in it into what
# a native speaker says, where the voice would read the digits wrongly. words/lexicon applies it,
# with the respellings, to the text handed to the voice only.
_SIGNED = re.compile(r"(?<![\w.,])[−-](\d(?:[\d.,]*\d)?)")
_DIGITS_INT = re.compile(r"(?<![\d.,])(\d{1,3}(?:\.\d{3})+|\d+)(?![\d]|[.,]\d)")
_ZERO_DECIMALS = {sep: re.compile(r"(?<![\d.,])(\d+)" + re.escape(sep) + r"0+(?![\d])") for sep in ".,"}
_PADDED = re.compile(r"(?<![\w.,:])0+(\d+)(?![\w]|[.,:]\d)")   # '02' (a chapter as headings write it), not '0.5'
_UR_ORDINAL = re.compile(r"(?<![\d.,])(\d+)\s?(واں|ویں|وی)(?![\u0620-\u065f\u066e-\u06d3])")   # not a longer word

# Spanish nouns of the film that are feminine: "una fila", "veintiuna capas", "doscientas filas"
_ES_FEMININE = frozenset("""activación activaciones barra barras cabeza cabezas capa capas celda celdas cifra
    cifras clave claves columna columnas consulta consultas copia copias dimensión dimensiones entrada entradas
    familia familias fila filas frase frases fusión fusiones letra letras línea líneas lista listas máscara
    máscaras matriz matrices mitad mitades multiplicación multiplicaciones operación operaciones palabra
    palabras parte partes pasada pasadas pieza piezas porción porciones posición posiciones probabilidad
    probabilidades proyección proyecciones puntuación puntuaciones respuesta respuestas ronda rondas semilla
    semillas suma sumas tabla tablas tirada tiradas torre torres unidad unidades vez veces vuelta vueltas""".split())
_ES_UNITS = ("", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once",
             "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho", "diecinueve", "veinte",
             "veintiuno", "veintidós", "veintitrés", "veinticuatro", "veinticinco", "veintiséis", "veintisiete",
             "veintiocho", "veintinueve")
_ES_TENS = {3: "treinta", 4: "cuarenta", 5: "cincuenta", 6: "sesenta", 7: "setenta", 8: "ochenta", 9: "noventa"}
_ES_HUNDREDS = {1: "ciento", 2: "doscientos", 3: "trescientos", 4: "cuatrocientos", 5: "quinientos",
                6: "seiscientos", 7: "setecientos", 8: "ochocientos", 9: "novecientos"}


def _es_below_1000(n: int, one: str, feminine: bool) -> str:
    """0 < n < 1000 in Spanish words, its last 'uno' said as `one` (uno, un, una), its hundreds
    agreeing with a feminine noun (doscientas)."""
    h, r = divmod(n, 100)
    out = []
    if h:
        word = "cien" if (h == 1 and r == 0) else _ES_HUNDREDS[h]
        out.append(word[:-2] + "as" if feminine and h > 1 else word)
    if r:
        if r < 30:
            word = _ES_UNITS[r]
        else:
            t, u = divmod(r, 10)
            word = _ES_TENS[t] + (" y " + _ES_UNITS[u] if u else "")
        if word.endswith("uno"):
            word = word[:-3] + {"un": "ún" if r == 21 else "un", "una": "una"}.get(one, "uno")
        out.append(word)
    return " ".join(out)


def _es_said(n: int, feminine: bool) -> str | None:
    """Spanish words for n before a noun, where espeak-ng's reading of the digits is wrong ('uno
    millones', 'veintiuno tokens', 'doscientos filas'); None where the digits read right."""
    if not 0 < n < 10 ** 9:
        return None
    millions, thousands, rest = n // 10 ** 6, n // 1000 % 1000, n % 1000
    groups = [g for g in (millions, thousands, rest) if g]
    ends_in_one = (rest % 10 == 1 and rest % 100 != 11) or millions % 10 == 1 or \
        (thousands % 10 == 1 and thousands % 100 != 11 and thousands != 1)      # 1.000 is "mil": right
    if not ends_in_one and not (feminine and any(g % 1000 >= 200 for g in (thousands, rest))):
        return None
    out = []
    if millions:
        out.append("un millón" if millions == 1 else _es_below_1000(millions, "un", False) + " millones")
    if thousands:
        out.append("mil" if thousands == 1 else _es_below_1000(thousands, "un", feminine) + " mil")
    if rest:
        out.append(_es_below_1000(rest, "una" if feminine else "un", feminine))
    return " ".join(out) if groups else None


# Spanish nouns a number names rather than counts ("la capa 1 lee", "el puesto 21"): left as digits
_ES_LABELS = frozenset("""cabeza capa capítulo columna fila id número paso posición puesto semilla tabla
    temperatura token versión""".split())


def _es_numbers(text: str) -> str:
    text = _es_de(text)

    def one(m: re.Match) -> str:
        after = text[m.end():m.end() + 40]
        word = re.match(r"\s+([^\W\d_]+)", after)
        before = re.search(r"([^\W\d_]+)\s+$", text[max(0, m.start() - 40):m.start()])
        if not word or word.group(1).lower() in _ES_NOT_NOUN or (before and before.group(1).lower() in _ES_LABELS):
            return m.group(0)
        said = _es_said(int(m.group(1).replace(".", "")), word.group(1).lower() in _ES_FEMININE)
        return said or m.group(0)
    return _DIGITS_INT.sub(one, text)


def _ur_ordinals(text: str, words: Words) -> str:
    """'3واں' -> 'تیسرا', '1ویں' -> 'پہلی': first to tenth are words in Urdu."""
    def one(m: re.Match) -> str:
        n = int(m.group(1))
        return spoken_ordinal(n, words, feminine=m.group(2) != "واں") if 1 <= n <= 10 else m.group(0)
    return _UR_ORDINAL.sub(one, text)


def voice_numbers(text: str, words: Words) -> str:
    """The numbers of a line as its language says them, for the voice (captions keep the digits):
    a sign before a number is the language's word ('−0.17' -> 'منفی 0.17', read before the number
    in right-to-left text too), Spanish 'un'/'una'/'veintiún'/'doscientas' where a count agrees with
    its noun and 'de' after a number word before its noun ('47,2 millones de FLOPs'), a number
    written with leading zeros (a chapter's '02', as headings write it) as its number ('chapter 2',
    'capítulo 2', 'باب 2', never 'cero dos' or 'صفر دو'), Urdu's first
    to tenth as words; a decimal of zeros is not said ('2.0 times' is 'two times', 'unos 2,0 FLOPs'
    'unos dos FLOPs': fmt_ratio writes one decimal for the screen's columns)."""
    text = _SIGNED.sub(lambda m: words.text("film:number-negative", value=m.group(1)), text)
    text = _PADDED.sub(r"\1", text)       # 'capítulo 02' is 'capítulo 2', never 'capítulo cero dos'
    lang = words.lang.split("-")[0]
    if lang == "es":
        text = _es_numbers(text)
    elif lang == "ur":
        text = _ur_ordinals(text, words)
    # last: '1,00 morado' (a sum, then a colour) is 'uno', not a count's 'un'
    return _ZERO_DECIMALS[style_for(words.lang).decimal].sub(r"\1", text)
