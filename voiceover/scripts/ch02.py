"""Chapter 02 narration: one attention head, every figure read from the bundle or ledger."""
from __future__ import annotations

import numpy as np

from data.facts.ch02 import head_facts
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_pct, spoken_token

LINES = [
    Line("intro", "Attention is the step where tokens look at one another. We follow a single head of the "
                  "first layer: head {head} of {n_head}. It was picked because its last row is the least "
                  "uniform, so its preference is the easiest to see."),
    Line("inputs", "It reads the residual stream after LayerNorm. That is {T} rows, one per token, each {d} "
                   "numbers wide."),
    Line("qkv", "Three learned matrices turn every row into a query, a key and a value. For one head each is "
                "{dh} numbers long. Computing them for all {n_head} heads costs {qkv_flops} FLOPs."),
    Line("scores", "Every query is compared with every key by a dot product. Each product is divided by the "
                   "square root of {dh}, which is {sqrt_dh}. The result is a {T} by {T} grid of scores, "
                   "{scores_flops} FLOPs across the layer."),
    Line("mask", "GPT writes left to right, so no token may look ahead. Every score above the diagonal "
                 "becomes minus infinity."),
    Line("softmax", "A softmax along each row turns scores into weights. Each row now sums to one, and the "
                    "masked cells get exactly zero."),
    Line("arcs", "Drawn as lines, each row becomes strokes from its token to the tokens it reads. The heavier "
                 "the weight, the thicker the line. Under the mask every line leads back: to the token itself, "
                 "or to one before it."),
    Line("last_row", "Read the last row: {last_token} gives {top_weight} of its attention to {top_token}.",
         synthetic="Read the last row: with random weights, {last_token} gives {top_weight} of its attention "
                   "to {top_token}. A trained model's pattern carries meaning; this one is chance."),
    Line("mix", "Each token's output is the weighted sum of the value vectors, using those weights. "
                "For the whole layer that is another {mix_flops} FLOPs."),
    Line("out", "The {n_head} heads, {dh} numbers each, sit side by side to rebuild {d} numbers. An output "
                "projection mixes them, for {out_flops} FLOPs. The result is added back onto the "
                "residual stream."),
    Line("receipt", "The receipt for one attention layer: {attn_flops} FLOPs, nearly all of it in the "
                    "projections. At {T} tokens the score grid itself is cheap."),
]


def values(bundle, ledger) -> dict:
    cfg = bundle.config
    facts = head_facts(bundle)
    dh = cfg["n_embd"] // cfg["n_head"]
    return {
        "head": facts["head_index"] + 1,
        "n_head": cfg["n_head"],
        "T": bundle.T,
        "d": cfg["n_embd"],
        "dh": dh,
        "sqrt_dh": f"{np.sqrt(dh):g}",
        "qkv_flops": spoken_count(ledger["L0.qkv"].flops),
        "scores_flops": spoken_count(ledger["L0.scores"].flops),
        "mix_flops": spoken_count(ledger["L0.mix"].flops),
        "out_flops": spoken_count(ledger["L0.out"].flops),
        "attn_flops": spoken_count(ledger.attention_flops(0)),
        "last_token": spoken_token(bundle.tokens[-1]),
        "top_token": spoken_token(bundle.tokens[facts["top_index"]]),
        "top_weight": spoken_pct(float(facts["row"][facts["top_index"]])),
    }
