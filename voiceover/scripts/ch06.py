"""Chapter 06 narration: the loop, the KV cache and the n² bill.

Every figure comes from data/facts/ch06.py (`loop_facts`: the generated steps, and prices
from data/flops.py); the scenes and these lines both read it, so the screen and the voice
cannot disagree.
"""
from __future__ import annotations

from onepass.data import models
from onepass.data.facts.ch06 import WHOLE_FROM, family_facts, kv_facts, loop_facts, serve_facts
from onepass.voiceover.scripts.lists import said_list
from onepass.words import numbers as N
from onepass.words.numbers import spoken_count, spoken_prob, spoken_share, spoken_token


def per_weight(x: float) -> str:
    """FLOPs per weight fetched as the screen writes them: one decimal, whole from WHOLE_FROM on."""
    return N.fmt_ratio(x) if x < WHOLE_FROM else N.fmt_whole(x)


def regime(bound: str, words) -> str:
    """'memory-bound: …' or 'compute-bound: …', the clause a line says for a bar's regime."""
    return words.text("ch06:say-compute-bound" if bound == "compute" else "ch06:say-memory-bound")


def values(bundle, ledger, words) -> dict:
    f = loop_facts(bundle)
    sv = serve_facts(bundle)
    kv = kv_facts(bundle)
    steps, T = f["steps"], f["T"]
    family = [r for r in family_facts(bundle) if r["key"] in models.FAMILY]     # smallest first
    ours = next(r for r in family_facts(bundle) if r["ours"])
    more = steps[1:]
    first_more = more[0] if more else steps[0]
    return {
        "T": T,
        "model": words.model_name(bundle.model),
        "smallest": words.model_name(family[0]["key"]),
        "smallest_layers": family[0]["layers"],
        "largest": words.model_name(family[-1]["key"]),
        "largest_layers": family[-1]["layers"],
        "params": spoken_count(ours["params"], words),
        "token_flops": spoken_count(ours["token_flops"], words),
        "kv_numbers": N.fmt_int(ours["kv_numbers"]),
        "first_token": spoken_token(steps[0]["text"], words),
        "first_prob": spoken_prob(steps[0]["prob"], words),
        "next_T": f["decode_context"],
        "contexts": said_list((s["context"] for s in more), words) if more else T,
        "picks": (said_list((spoken_token(s["text"], words) for s in more), words) if more
                  else spoken_token(steps[0]["text"], words)),
        "loop_added": spoken_count(f["loop_added"], words),
        "n_more": len(more),
        "n_layer": f["shape"].n_layer,
        "d": f["shape"].n_embd,
        "per_token": N.fmt_int(f["per_token"]),
        "layer": kv["layer"] + 1,                       # the cache's grids: one head of this layer
        "head": kv["head"] + 1,
        "n_head": f["shape"].n_head,
        "n_heads": N.fmt_int(kv["n_heads"]),
        "on_later": N.fmt_general(kv["on_later"]),
        "per_token_bytes": N.fmt_int(f["per_token_bytes"]),
        "last_context": f["cache"][-1]["tokens"],
        "cache_last_bytes": spoken_count(f["cache"][-1]["bytes"], words),
        "cache_last_numbers": spoken_count(f["cache"][-1]["numbers"], words),      # the counter's numbers, last
        "full_next": spoken_count(first_more["full"], words),
        "cached_next": spoken_count(first_more["cached"], words),
        "ratio_next": N.fmt_ratio(first_more["saving"]),
        "pairs_T": spoken_count(f["square"][0]["pairs"], words),
        "n_pos": N.fmt_int(f["square"][1]["tokens"]),
        "pairs_pos": spoken_count(f["square"][1]["pairs"], words),
        "pairs_long": spoken_count(f["square"][2]["pairs"], words),
        "share_T": spoken_share(f["square"][0]["share"], words),
        "share_pos": spoken_share(f["square"][1]["share"], words),
        "share_long": spoken_share(f["square"][2]["share"], words),
        "prefill": spoken_count(f["prefill"], words),
        "prefill_per_param": per_weight(sv["prompt"]["per_weight"]),
        "decode": spoken_count(f["decode"], words),
        "decode_per_param": per_weight(sv["decode"]["per_weight"]),
        "chip": words.text("ch06:chip"),
        "balance": N.fmt_whole(sv["balance"]),
        "prompt_bound": regime(sv["prompt"]["bound"], words),
        "n_long": N.fmt_int(sv["long"]["tokens"]),
        "long_per_param": per_weight(sv["long"]["per_weight"]),
        "long_bound": regime(sv["long"]["bound"], words),
        "crossover": N.fmt_int(sv["crossover"]),
        "decode_bound": regime(sv["decode"]["bound"], words),
        "g3_layers": f["gpt3_shape"].n_layer,
        "g3_heads": f["gpt3_shape"].n_head,
        "g3_width": N.fmt_int(f["gpt3_shape"].n_embd),
        "g3_context": N.fmt_int(f["gpt3_shape"].n_positions),       # GPT-3's context (flops.GPT3_N_POSITIONS)
        "g3_params": spoken_count(f["gpt3_params"], words),
        "g3_token": spoken_count(f["gpt3_token"], words),
        "g2_token": spoken_count(f["gpt2_token"], words),
        "g3_ratio": N.fmt_whole(f["gpt3_ratio"]),
        "reply_tokens": f["reply_tokens"],
        "reply_cached": spoken_count(f["reply_cached"], words),
        "reply_full": spoken_count(f["reply_full"], words),
        # grouped-query attention and a context without a table's last row
        "kv_heads": f["shape"].kv_heads,
        "dh": f["shape"].d_head,
        "group": f["shape"].group,
        "per_token_full": N.fmt_int(f["per_token_full"]),
        "g2s_kv": N.fmt_int(f["gpt2_small_kv"]),
        "context_bytes": spoken_count(f["context_bytes"], words),
        "kv_compare": (words.text("ch06:say-fewer-than") if ours["kv_numbers"] < f["gpt2_small_kv"]
                       else words.text("ch06:say-more-than")),
    }
