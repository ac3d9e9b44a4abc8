"""Chapter 02 narration: one attention head, every figure read from the bundle or ledger."""
from __future__ import annotations

import numpy as np

from onepass.data.facts.ch02 import agreement_facts, d_head, head_facts, root_facts
from onepass.words.numbers import fmt_general, spoken_count, spoken_pct, spoken_signed, spoken_token


def values(bundle, ledger, words) -> dict:
    shape = bundle.shape
    facts = head_facts(bundle)
    agree = agreement_facts(bundle)
    root = root_facts(bundle)
    dh = d_head(bundle)
    tokens = bundle.tokens
    return {
        "head": facts["head_index"] + 1,
        "n_head": shape.n_head,
        "T": bundle.T,
        "d": shape.n_embd,
        "dh": dh,
        "sqrt_dh": fmt_general(np.sqrt(dh)),
        "qkv_flops": spoken_count(ledger["L0.qkv"].flops, words),
        "scores_flops": spoken_count(ledger["L0.scores"].flops, words),
        "mix_flops": spoken_count(ledger["L0.mix"].flops, words),
        "out_flops": spoken_count(ledger["L0.out"].flops, words),
        "attn_flops": spoken_count(ledger.attention_flops(0), words),
        "last_token": spoken_token(tokens[-1], words),
        "top_token": spoken_token(tokens[facts["top_index"]], words),
        "top_weight": spoken_pct(float(facts["row"][facts["top_index"]]), words),
        # the query against the keys: the best-agreeing key and its dot product (before the division)
        "top_key": spoken_token(tokens[agree["top_index"]], words),
        "top_dot": spoken_signed(float(agree["dots"][agree["top_index"]]), 2, words),
        # the same row without the division by √d_head: who would take the most, and how much
        "raw_top_token": spoken_token(tokens[root["undivided_top"]], words),
        "raw_top_weight": spoken_pct(float(root["undivided"][root["undivided_top"]]), words),
    }
