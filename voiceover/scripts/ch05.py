"""Chapter 05 narration: encoder vs decoder. Same scores, with and without the triangle.

The grid facts (which rows change, by how much), the families and the original paper come
from data/facts/ch05.py, which the scene reads too, so screen and voice cannot disagree.
"""
from __future__ import annotations

from data.facts.ch05 import FAMILIES, ORIGINAL_YEAR, mask_facts
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_pct, spoken_token


def _names(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


LINES = [
    Line("decoder", "Here is the head from chapter two again: head {head} of the first layer, with its "
                    "triangle. Every cell above the diagonal was minus infinity, so after the softmax it "
                    "is exactly zero. Drawn as lines, every token reads only backwards. This is what makes "
                    "GPT a decoder."),
    Line("encoder", "Now take the very same scores and skip the triangle. The same softmax runs along each "
                    "row, but every token may now look forward as well as back. That is all an encoder is."),
    Line("changes", "{changed_rows} of the {T} rows change. The biggest shift is in the row of {big_row}. Its "
                    "weight on {big_col} goes from {big_from} to {big_to}. The last row, {last_token}, does "
                    "not move at all. It could already see every token.",
         synthetic="{changed_rows} of the {T} rows change. These weights are random, so the pattern is "
                   "chance, but the rule is not. The biggest shift is in the row of {big_row}. Its weight "
                   "on {big_col} goes from {big_from} to {big_to}. The last row, {last_token}, does "
                   "not move at all. It could already see every token."),
    Line("same_cost", "The bill is the same. The ledger already charges the full {T} by {T} grid of scores. "
                      "A mask costs nothing, so the meter holds at {total} FLOPs."),
    Line("towers", "The machine from {year} had both kinds. An encoder tower reads the whole source text at "
                   "once, with no mask. A decoder tower writes the output one token at a time, behind the "
                   "triangle."),
    Line("cross", "They meet in cross-attention. The queries come from the decoder, the keys and values "
                  "from the encoder's output. The writer asks, and the reader's tower answers. This is "
                  "where a translation crosses from one language to the other."),
    Line("encoder_only", "Three families grew from that design. Encoder-only models such as {enc_examples} "
                         "read in both directions. They are good at understanding, and cannot write."),
    Line("decoder_only", "Decoder-only models such as {dec_examples} see only the past. They write one token "
                         "at a time. GPT-2, the model in this film, is one of them."),
    Line("encoder_decoder", "Encoder-decoders such as {encdec_examples} keep both towers. They read one "
                            "text and write another."),
    Line("verdict", "Take the names away and the difference is a single triangle of minus infinity. The "
                    "arithmetic, and its cost, is the same."),
]


def values(bundle, ledger) -> dict:
    f = mask_facts(bundle)
    r, c = f["big_row"], f["big_col"]
    plain = lambda fam: _names([e for e in fam.examples if "(" not in e][:3])
    return {
        "head": f["head_index"] + 1,
        "T": bundle.T,
        "changed_rows": len(f["changed"]),
        "big_row": spoken_token(bundle.tokens[r]),
        "big_col": spoken_token(bundle.tokens[c]),
        "big_from": spoken_pct(float(f["causal"][r, c])),
        "big_to": spoken_pct(float(f["full"][r, c])),
        "last_token": spoken_token(bundle.tokens[-1]),
        "total": spoken_count(ledger.total),
        "year": ORIGINAL_YEAR,
        "enc_examples": plain(FAMILIES[0]),
        "dec_examples": plain(FAMILIES[1]),
        "encdec_examples": plain(FAMILIES[2]),
    }
