"""Chapter 05 narration: encoder vs decoder. Same scores, with and without the triangle.

The grid facts (which rows change, by how much), the families and the original paper come
from data/facts/ch05.py, which the scene reads too, so screen and voice cannot disagree.
"""
from __future__ import annotations

from data.facts.ch05 import FAMILIES, ORIGINAL_YEAR, mask_facts
from words.numbers import spoken_count, spoken_pct, spoken_token


def _names(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def values(bundle, ledger, words) -> dict:
    f = mask_facts(bundle)
    r, c = f["big_row"], f["big_col"]
    plain = lambda fam: _names([e for e in fam.examples if "(" not in e][:3])
    return {
        "head": f["head_index"] + 1,
        "T": bundle.T,
        "changed_rows": len(f["changed"]),
        "big_row": spoken_token(bundle.tokens[r], words),
        "big_col": spoken_token(bundle.tokens[c], words),
        "big_from": spoken_pct(float(f["causal"][r, c]), words),
        "big_to": spoken_pct(float(f["full"][r, c]), words),
        "last_token": spoken_token(bundle.tokens[-1], words),
        "total": spoken_count(ledger.total, words),
        "year": ORIGINAL_YEAR,
        "enc_examples": plain(FAMILIES[0]),
        "dec_examples": plain(FAMILIES[1]),
        "encdec_examples": plain(FAMILIES[2]),
    }
