"""Chapter 06 narration: the loop, the KV cache and the n² bill.

Every figure comes from data/facts/ch06.py (`loop_facts`: the generated steps, and prices
from data/flops.py); the scenes and these lines both read it, so the screen and the voice
cannot disagree.
"""
from __future__ import annotations

from data.facts.ch06 import loop_facts
from words.numbers import spoken_count, spoken_prob, spoken_token


def _and(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def values(bundle, ledger, words) -> dict:
    f = loop_facts(bundle)
    steps, T = f["steps"], f["T"]
    more = steps[1:]
    first_more = more[0] if more else steps[0]
    pct = lambda x: f"{100 * x:.1f} percent" if x >= 0.001 else f"{100 * x:.2g} percent"
    return {
        "T": T,
        "first_token": spoken_token(steps[0]["text"], words),
        "first_prob": spoken_prob(steps[0]["prob"], words),
        "next_T": f["decode_context"],
        "contexts": _and(s["context"] for s in more) if more else T,
        "picks": _and(spoken_token(s["text"], words) for s in more) if more else spoken_token(steps[0]["text"], words),
        "loop_added": spoken_count(f["loop_added"], words),
        "n_more": len(more),
        "n_layer": f["shape"].n_layer,
        "d": f["shape"].n_embd,
        "per_token": f"{f['per_token']:,}",
        "per_token_bytes": f"{f['per_token_bytes']:,}",
        "last_context": f["cache"][-1]["tokens"],
        "cache_last_bytes": spoken_count(f["cache"][-1]["bytes"], words),
        "full_next": spoken_count(first_more["full"], words),
        "cached_next": spoken_count(first_more["cached"], words),
        "ratio_next": f"{first_more['saving']:.1f}",
        "pairs_T": spoken_count(f["square"][0]["pairs"], words),
        "n_pos": f"{f['square'][1]['tokens']:,}",
        "pairs_pos": spoken_count(f["square"][1]["pairs"], words),
        "pairs_long": spoken_count(f["square"][2]["pairs"], words),
        "share_T": pct(f["square"][0]["share"]),
        "share_pos": pct(f["square"][1]["share"]),
        "share_long": pct(f["square"][2]["share"]),
        "prefill": spoken_count(f["prefill"], words),
        "prefill_per_param": f"{f['prefill_per_param']:.1f}",
        "decode": spoken_count(f["decode"], words),
        "decode_per_param": f"{f['decode_per_param']:.1f}",
        "g3_layers": f["gpt3_shape"].n_layer,
        "g3_heads": f["gpt3_shape"].n_head,
        "g3_width": f"{f['gpt3_shape'].n_embd:,}",
        "g3_params": spoken_count(f["gpt3_params"], words),
        "g3_token": spoken_count(f["gpt3_token"], words),
        "g2_token": spoken_count(f["gpt2_token"], words),
        "g3_ratio": f"{f['gpt3_ratio']:,.0f}",
        "reply_tokens": f["reply_tokens"],
        "reply_cached": spoken_count(f["reply_cached"], words),
        "reply_full": spoken_count(f["reply_full"], words),
    }
