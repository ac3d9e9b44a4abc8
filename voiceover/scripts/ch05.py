"""Chapter 05 narration: encoder vs decoder. Same scores, with and without the triangle.

The grid facts (which rows change, by how much) are computed here from the bundle's
own scaled scores, and shared with the scene so screen and voice cannot disagree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_pct, spoken_token

# A row "changes" when some weight in it moves by at least this much: the smallest step a
# percentage with one decimal can show (0.1 percentage points).
VISIBLE_CHANGE = 0.0005

# The original Transformer, as the seeds cite it (Vaswani et al., "Attention Is All You Need").
ORIGINAL_YEAR = 2017
ORIGINAL = f"Attention Is All You Need ({ORIGINAL_YEAR})"


@dataclass(frozen=True)
class Family:
    name: str
    mask: str              # "none" (sees everything), "causal" (the triangle), "both"
    examples: tuple[str, ...]
    can: tuple[str, ...]   # short lines, each fits a third of the frame
    cannot: tuple[str, ...]


# Example models per family, as named in the seeds (000 chapter 05; 004 "Three families").
FAMILIES = (
    Family("encoder-only", "none", ("BERT", "embedding models for search"),
           ("reads in both directions:", "understands, classifies"), ("cannot write text",)),
    Family("decoder-only", "causal", ("GPT-2 (this film)", "GPT-3", "LLaMA", "Claude"),
           ("writes one token at a time",), ("never sees a later token",)),
    Family("encoder-decoder", "both", ("the 2017 Transformer", "T5", "BART", "Whisper"),
           ("reads one text,", "writes another"), ("two towers to train and run",)),
)


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def mask_facts(bundle, layer: int = 0) -> dict:
    """The featured head's weights with the causal mask (the bundle's own) and without it.

    `full` is the row softmax of the very same scaled scores, nothing masked.
    """
    head = bundle.featured_head(layer=layer)
    scores = bundle["scores_scaled"][layer, head].astype(np.float64)      # [T, T]
    causal = bundle["probs"][layer, head].astype(np.float64)              # [T, T], the model's own
    full = _softmax_rows(scores)
    delta = full - causal
    row_change = np.abs(delta).max(axis=-1)                               # [T]
    changed = [int(r) for r in np.flatnonzero(row_change >= VISIBLE_CHANGE)]
    big_r, big_c = (int(i) for i in np.unravel_index(np.argmax(np.abs(delta)), delta.shape))
    return {"head_index": head, "scores": scores, "causal": causal, "full": full, "delta": delta,
            "row_change": row_change, "changed": changed, "big_row": big_r, "big_col": big_c}


def _names(items) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


LINES = [
    Line("decoder", "Here is the head from chapter two again, head {head} of the first layer, with its "
                    "triangle: every cell above the diagonal was minus infinity, so after the softmax it "
                    "is exactly zero. This is what makes GPT a decoder."),
    Line("encoder", "Now take the very same scores and skip the triangle. The same softmax runs along each "
                    "row, but every token may now look forward as well as back. That is all an encoder is."),
    Line("changes", "{changed_rows} of the {T} rows change. The biggest shift is in the row of {big_row}: its "
                    "weight on {big_col} goes from {big_from} to {big_to}. The last row, {last_token}, does "
                    "not move at all: it could already see every token.",
         synthetic="{changed_rows} of the {T} rows change. These weights are random, so the pattern is "
                   "chance, but the rule is not: the biggest shift is in the row of {big_row}, whose weight "
                   "on {big_col} goes from {big_from} to {big_to}, while the last row, {last_token}, does "
                   "not move at all. It could already see every token."),
    Line("same_cost", "The bill is the same. The ledger already charges the full {T} by {T} grid of scores, "
                      "and a mask costs nothing, so the meter holds at {total} FLOPs."),
    Line("towers", "The machine from {year} had both kinds. An encoder tower reads the whole source text at "
                   "once, with no mask. A decoder tower writes the output one token at a time, behind the "
                   "triangle."),
    Line("cross", "They meet in cross-attention. The queries come from the decoder, the keys and values "
                  "from the encoder's output: the writer asks, and the reader's tower answers. This is "
                  "where a translation crosses from one language to the other."),
    Line("encoder_only", "Three families grew from that design. Encoder-only models such as {enc_examples} "
                         "read in both directions. They are good at understanding, and cannot write."),
    Line("decoder_only", "Decoder-only models such as {dec_examples} see only the past and write one token "
                         "at a time. GPT-2, the model in this film, is one of them."),
    Line("encoder_decoder", "Encoder-decoders such as {encdec_examples} keep both towers: they read one "
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
