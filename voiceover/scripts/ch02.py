"""Chapter 02 narration: one attention head, every figure read from the bundle or ledger."""
from __future__ import annotations

import numpy as np

from data.facts.ch02 import head_facts
from words.numbers import fmt_general, spoken_count, spoken_pct, spoken_token


def values(bundle, ledger, words) -> dict:
    cfg = bundle.config
    facts = head_facts(bundle)
    dh = cfg["n_embd"] // cfg["n_head"]
    return {
        "head": facts["head_index"] + 1,
        "n_head": cfg["n_head"],
        "T": bundle.T,
        "d": cfg["n_embd"],
        "dh": dh,
        "sqrt_dh": fmt_general(np.sqrt(dh)),
        "qkv_flops": spoken_count(ledger["L0.qkv"].flops, words),
        "scores_flops": spoken_count(ledger["L0.scores"].flops, words),
        "mix_flops": spoken_count(ledger["L0.mix"].flops, words),
        "out_flops": spoken_count(ledger["L0.out"].flops, words),
        "attn_flops": spoken_count(ledger.attention_flops(0), words),
        "last_token": spoken_token(bundle.tokens[-1], words),
        "top_token": spoken_token(bundle.tokens[facts["top_index"]], words),
        "top_weight": spoken_pct(float(facts["row"][facts["top_index"]]), words),
    }
