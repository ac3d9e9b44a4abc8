"""The mending a filled-in line needs in its language wherever it is shown or said (Words.line's
tidy): Spanish 'millones de FLOPs'. Below words/catalog.py and words/numbers.py, which both use
it (catalog imported numbers for it, and numbers imports catalog: an import circle)."""
from __future__ import annotations

import re

# Spanish: what follows a number that is not a noun it counts ("1 de 12", "21 por ciento")
ES_NOT_NOUN = frozenset("""a al con contra coma como de del e en entre es frente la las lo los más menos
    o para por que se sin son sobre u y""".split())

_ES_MILLIONS = re.compile(r"\b(millón|millones|billón|billones) (?=([^\W\d_]+))")


def es_de(text: str) -> str:
    """'47,2 millones FLOPs' -> '47,2 millones de FLOPs': a number word before the noun it counts takes
    'de' (written so in captions too, not only said)."""
    return _ES_MILLIONS.sub(lambda m: m.group(0) if m.group(2).lower() in ES_NOT_NOUN else m.group(0) + "de ", text)


def written_grammar(lang: str):
    """The mending a filled-in line needs in `lang` wherever it is shown or said (Words.line), or None."""
    return es_de if lang.split("-")[0] == "es" else None
