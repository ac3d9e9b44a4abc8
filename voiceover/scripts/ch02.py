"""Chapter 02 narration: one attention head, every figure read from the bundle or ledger."""
from __future__ import annotations

import numpy as np

from onepass.data.facts.ch02 import (
    agreement_facts, budget_facts, d_head, gqa_facts, head_facts, qknorm_facts, rope_facts, root_facts, softmax_row,
    softmax_row_index,
)
from onepass.data.visible import token_window
from onepass.voiceover.scripts.lists import SAID_TOP, said_list
from onepass.words.numbers import fmt_general, spoken_count, spoken_pct, spoken_signed, spoken_token



def said_shares(weights, tokens, words) -> str:
    """A row's SAID_TOP largest shares, largest first: '20.9 percent to “on”, …' (kit:describe-share)."""
    order = [int(j) for j in np.argsort(-np.asarray(weights), kind="stable")[:SAID_TOP] if weights[j] > 0]
    return said_list([words.text("kit:describe-share", share=spoken_pct(float(weights[j]), words),
                                 token=spoken_token(tokens[j], words)) for j in order], words)


def values(bundle, ledger, words) -> dict:
    shape = bundle.shape
    facts = head_facts(bundle)
    agree = agreement_facts(bundle)
    root = root_facts(bundle)
    dh = d_head(bundle)
    tokens = bundle.tokens
    out = {
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
        # the descriptions' numbers (issue 53): the prompt's tokens, the best key's angle and the highest
        # scores, the softmax row's and the last row's largest shares
        "tokens": said_list([spoken_token(t, words) for t in tokens], words),
        "best_angle": spoken_count(int(round(float(agree["angle"][agree["top_index"]]))), words),
        "key_scores": said_list([words.text("kit:describe-score", token=spoken_token(tokens[j], words),
                                            score=spoken_signed(float(agree["dots"][j]), 2, words))
                                 for j in np.argsort(-agree["dots"], kind="stable")[:SAID_TOP]], words),
        "top_shares": said_shares(budget_facts(bundle)["weights"], tokens, words),
    }
    shown = token_window(bundle.T)     # the grid's window: the columns the row's picture shows
    sm = softmax_row(bundle, softmax_row_index(shown))
    seen = np.zeros_like(sm["weights"])
    seen[list(shown)] = sm["weights"][list(shown)]
    out.update({"sm_token": spoken_token(tokens[sm["row"]], words), "sm_shares": said_shares(seen, tokens, words)})
    if shape.kv_heads < shape.n_head:        # grouped-query attention: what sharing saves, from the ledger
        g = gqa_facts(bundle, ledger)
        out.update({"kv_heads": spoken_count(g["KV"], words), "group": spoken_count(g["group"], words),
                    "qkv_full_flops": spoken_count(g["qkv_full"], words),
                    "cache": spoken_count(g["cache"], words), "cache_full": spoken_count(g["cache_full"], words)})
    qk = qknorm_facts(bundle)
    if qk is not None:                       # the q/k norm: the last token's query and key, rms before and after
        out.update({f"{x}_rms{tail}": spoken_signed(float(qk[x][key][-1]), 2, words)
                    for x in "qk" for tail, key in (("", "rms"), ("_after", "rms_after"))})
    r = rope_facts(bundle)
    if r is not None:                        # RoPE: the turn, and the score at positions moved on
        out.update({"pairs": spoken_count(len(r["inv_freq"]), words), "half": spoken_count(len(r["inv_freq"]), words),
                    "fast_deg": spoken_count(int(round(r["pairs"][0]["per_token"])), words),
                    "last_pos": spoken_count(r["last"], words), "shift": spoken_count(r["shift"], words),
                    "rope_key": spoken_token(tokens[r["key"]], words),
                    "rope_score": spoken_signed(r["score"], 2, words)})
    return out
