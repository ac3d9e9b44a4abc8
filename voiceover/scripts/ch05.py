"""Chapter 05 narration: encoder vs decoder. Same scores, with and without the triangle.

The grid facts (which rows change, by how much) and the original paper's year come from
data/facts/ch05.py, which the scene reads too, so screen and voice cannot disagree. The example
models said for each family are messages the scene shows in its columns (ch05:example-*).
"""
from __future__ import annotations

from onepass.data.facts.ch00 import model_title
from onepass.data.facts.ch05 import ORIGINAL_YEAR, mask_facts
from onepass.words.numbers import spoken_count, spoken_pct, spoken_token

# the examples said for each family (encoder-only, decoder-only, encoder-decoder): the ones the
# scene's columns show, less GPT-2 (the film's own model, said on its own) and Whisper
SPOKEN_EXAMPLES = (("ch05:example-bert", "ch05:example-search"),
                   ("ch05:example-gpt3", "ch05:example-llama", "ch05:example-qwen3"),
                   ("ch05:example-transformer", "ch05:example-t5", "ch05:example-bart"))


def names(ids, words) -> str:
    """Example models as a spoken list: 'A', 'A and B', 'A, B and C'."""
    said = [words.text(i, year=ORIGINAL_YEAR) for i in ids]
    out = said[-1]
    if len(said) > 1:
        out = words.text("ch05:names-two", first=said[-2], last=out)
    for name in reversed(said[:-2]):
        out = words.text("ch05:names-more", first=name, rest=out)
    return out


def rows_changed(f: dict, T: int, words) -> str:
    """The sentence that opens the changes: 'Every row but the last changes.' when that is so (the usual
    case: one number fewer to read), else how many of the T rows change."""
    changed = len(f["changed"])
    if changed == T - 1 and T > 1:
        return words.text("ch05:rows-all-but-last")
    return words.text("ch05:rows-some", changed=spoken_count(changed, words), T=spoken_count(T, words))


def values(bundle, ledger, words) -> dict:
    f = mask_facts(bundle)
    r, c = f["big_row"], f["big_col"]
    return {
        "rows_changed": rows_changed(f, bundle.T, words),
        "head": f["head_index"] + 1,
        # the modern decoder's wording (ch05-<beat>.rope) names the model and its family
        "model_title": model_title(bundle) if bundle.arch != "gpt2" else "",
        "T": bundle.T,
        "changed_rows": len(f["changed"]),
        "big_row": spoken_token(bundle.tokens[r], words),
        "big_col": spoken_token(bundle.tokens[c], words),
        "big_from": spoken_pct(float(f["causal"][r, c]), words),
        "big_to": spoken_pct(float(f["full"][r, c]), words),
        "last_token": spoken_token(bundle.tokens[-1], words),
        "total": spoken_count(ledger.total, words),
        # the description's number (issue 53): the scores' FLOPs both grids write under them (the ledger's line)
        "scores_flops": spoken_count(ledger["L0.scores"].flops, words),
        "year": ORIGINAL_YEAR,
        "enc_examples": names(SPOKEN_EXAMPLES[0], words),
        "dec_examples": names(SPOKEN_EXAMPLES[1], words),
        "encdec_examples": names(SPOKEN_EXAMPLES[2], words),
    }
