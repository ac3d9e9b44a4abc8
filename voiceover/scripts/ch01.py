"""Chapter 01 narration: ids -> vectors, positions, the residual stream. Every figure is read
from data/facts/ch01.py (config, parameter counts, embedding rows, cosine pairs) or the ledger."""
from __future__ import annotations

from data.facts.ch01 import embed_facts
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_token

LINES = [
    Line("table", "Now each id becomes a vector. GPT-2 keeps a table with one row per token in its vocabulary: "
                  "{V} rows, each {d} numbers long. That is {wte_params} parameters, {wte_share} of the "
                  "whole model."),
    Line("row", "Id {row_id} simply picks row {row_id}: {row_token} becomes {d} numbers, learned in training. "
                "Here is the start of that row.",
         synthetic="Id {row_id} simply picks row {row_id}: {row_token} becomes {d} numbers. With random weights "
                   "they are seeded noise; in GPT-2 they were learned in training."),
    Line("grid", "Every token gets its row, so the prompt is now a {T} by {d} grid of numbers. Copying rows is "
                 "not arithmetic, so the meter still reads zero."),
    Line("cosine", "In a trained table, direction carries meaning. The cosine of the angle between two rows "
                   "measures it: {pairs_spoken}. Nobody programmed these numbers; they came from predicting "
                   "text.",
         synthetic="In a trained table, direction carries meaning, and the cosine of the angle between two rows "
                   "measures it. These rows are random, so the {n_pairs} pairs score between {cos_min} and "
                   "{cos_max}: chance, not meaning. In GPT-2's trained table, related words score far higher "
                   "than unrelated ones."),
    Line("order", "Attention, in the next chapter, treats its input as a set: shuffle the tokens and it sees the "
                  "same thing. So each token's position has to be written into its vector."),
    Line("add", "GPT-2 learned a second table with one row per position, {P} rows. Row zero is added to the "
                "first token, row one to the second, and so on. {T} positions times {d} numbers is {pos_flops} "
                "additions: the first arithmetic of the whole pass."),
    Line("tables", "On the left, the first {P_shown} rows of GPT-2's learned position table. On the right, the "
                   "sine and cosine waves of the 2017 paper, computed from its formula. Both give every "
                   "position its own pattern.",
         synthetic="On the left, the first {P_shown} rows of this position table. Its numbers are random here, "
                   "so it shows only noise, where trained GPT-2 learns structured patterns. On the right, the "
                   "sine and cosine waves of the 2017 paper, computed from its formula. They give every "
                   "position its own pattern."),
    Line("stream", "The sum is the residual stream: {T} rows of {d} numbers that flow through all {n_layer} "
                   "layers. Each layer reads the stream, computes an edit and adds it back. Layers add; they "
                   "never overwrite."),
    Line("handoff", "The first to read it is attention, in layer one. That is the next chapter."),
]


def spoken_cos(c: float) -> str:
    return f"{c:.2f}".replace("-", "minus ")


def values(bundle, ledger) -> dict:
    f = embed_facts(bundle)
    pairs = f["cosine"]
    spoken_pairs = [f"{p['a']} and {p['b']} score {spoken_cos(p['cosine'])}" for p in pairs]
    pairs_spoken = ", ".join(spoken_pairs[:-1]) + (", and " if len(spoken_pairs) > 1 else "") + spoken_pairs[-1]
    cos = [p["cosine"] for p in pairs]
    return {
        "V": spoken_count(f["V"]), "d": spoken_count(f["d"]), "P": spoken_count(f["P"]),
        "T": spoken_count(f["T"]), "n_layer": spoken_count(f["n_layer"]),
        "wte_params": spoken_count(f["wte_params"]),
        "wte_share": f"{100 * f['wte_share']:.0f} percent",
        "row_id": f["row_id"], "row_token": spoken_token(f["row_token"]),
        "pairs_spoken": pairs_spoken,
        "n_pairs": spoken_count(len(pairs)),
        "cos_min": spoken_cos(min(cos)), "cos_max": spoken_cos(max(cos)),
        "pos_flops": spoken_count(ledger["positions"].flops),
        "P_shown": spoken_count(f["P_shown"]),
    }
