"""Chapter 06 narration: the loop, the KV cache and the n² bill.

Every figure comes from data/facts/ch06.py (`loop_facts`: the generated steps, and prices
from data/flops.py); the scenes and these lines both read it, so the screen and the voice
cannot disagree.
"""
from __future__ import annotations

from data.facts.ch06 import loop_facts
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_prob, spoken_token


def _and(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


LINES = [
    Line("append", "Chapter four ended with one pick: {first_token}, at {first_prob}. The model keeps no "
                   "memory of it. The token is simply appended to the prompt, and the whole pass runs "
                   "again, now over {next_T} tokens.",
         synthetic="Chapter four ended with one pick, {first_token}, at {first_prob}: noise, since these "
                   "weights are random. The model keeps no memory of it. The token is simply appended to "
                   "the prompt, and the whole pass runs again, now over {next_T} tokens."),
    Line("loop", "Passes over {contexts} tokens pick {picks}. Each pass here recomputes everything, so the "
                 "meter adds a full pass every time: {loop_added} FLOPs for these {n_more} passes.",
         synthetic="Passes over {contexts} tokens pick {picks}, still noise from random weights. Each pass "
                   "here recomputes everything, so the meter adds a full pass every time: {loop_added} "
                   "FLOPs for these {n_more} passes."),
    Line("redundant", "Most of that work was repeated. Because of the mask, an earlier token never sees a "
                      "later one. So its keys and values, in every layer, come out exactly as they did on "
                      "the pass before."),
    Line("cache", "So inference engines keep them, in a KV cache. Each token leaves one key and one value "
                  "per layer: {n_layer} layers, {d} numbers each. That is {per_token} numbers per token, or "
                  "{per_token_bytes} bytes in half precision. Each step adds one column; after {last_context} tokens the "
                  "cache holds {cache_last_bytes} bytes."),
    Line("cached_step", "With the cache, a step computes only the new token's row and reads the rest. The "
                        "pass over {next_T} tokens drops from {full_next} FLOPs to {cached_next}, about "
                        "{ratio_next} times less. The saving grows with every token."),
    Line("square", "One cost the cache cannot remove: every token is scored against every token. Here "
                   "that is {T} times {T}, {pairs_T} pairs per head and layer. At GPT-2's limit of "
                   "{n_pos} tokens it is {pairs_pos}, and at a million tokens, {pairs_long}."),
    Line("square_share", "At {T} tokens the score grid is {share_T} of a pass. At {n_pos} tokens it is "
                         "{share_pos}, and at a million tokens {share_long}. Long contexts cost the square."),
    Line("prefill", "Serving splits the loop in two. Prefill reads all {T} prompt tokens in one parallel "
                    "pass: {prefill} FLOPs, about {prefill_per_param} for every weight it fetches."),
    Line("decode", "Decode then writes one token per pass: {decode} FLOPs, only {decode_per_param} per "
                   "weight, plus the cache to read. The chip mostly waits on memory, which is why an answer "
                   "starts after a pause, then streams at typing speed."),
    Line("gpt3", "Now print the same blueprint bigger. GPT-3 has {g3_layers} layers, {g3_heads} heads and "
                 "{g3_width} numbers per row, {g3_params} parameters. The same ledger prices one new token "
                 "at {g3_token} FLOPs, against {g2_token} for GPT-2 small. That is {g3_ratio} times the bill."),
    Line("reply", "And for our own model, a {reply_tokens} token reply to this prompt costs {reply_cached} "
                  "FLOPs with the cache. Without it, {reply_full}. One pass, looped: that is the whole machine."),
]


def values(bundle, ledger) -> dict:
    f = loop_facts(bundle)
    steps, T = f["steps"], f["T"]
    more = steps[1:]
    first_more = more[0] if more else steps[0]
    pct = lambda x: f"{100 * x:.1f} percent" if x >= 0.001 else f"{100 * x:.2g} percent"
    return {
        "T": T,
        "first_token": spoken_token(steps[0]["text"]),
        "first_prob": spoken_prob(steps[0]["prob"]),
        "next_T": f["decode_context"],
        "contexts": _and(s["context"] for s in more) if more else T,
        "picks": _and(spoken_token(s["text"]) for s in more) if more else spoken_token(steps[0]["text"]),
        "loop_added": spoken_count(f["loop_added"]),
        "n_more": len(more),
        "n_layer": f["shape"].n_layer,
        "d": f["shape"].n_embd,
        "per_token": f"{f['per_token']:,}",
        "per_token_bytes": f"{f['per_token_bytes']:,}",
        "last_context": f["cache"][-1]["tokens"],
        "cache_last_bytes": spoken_count(f["cache"][-1]["bytes"]),
        "full_next": spoken_count(first_more["full"]),
        "cached_next": spoken_count(first_more["cached"]),
        "ratio_next": f"{first_more['saving']:.1f}",
        "pairs_T": spoken_count(f["square"][0]["pairs"]),
        "n_pos": f"{f['square'][1]['tokens']:,}",
        "pairs_pos": spoken_count(f["square"][1]["pairs"]),
        "pairs_long": spoken_count(f["square"][2]["pairs"]),
        "share_T": pct(f["square"][0]["share"]),
        "share_pos": pct(f["square"][1]["share"]),
        "share_long": pct(f["square"][2]["share"]),
        "prefill": spoken_count(f["prefill"]),
        "prefill_per_param": f"{f['prefill_per_param']:.1f}",
        "decode": spoken_count(f["decode"]),
        "decode_per_param": f"{f['decode_per_param']:.1f}",
        "g3_layers": f["gpt3_shape"].n_layer,
        "g3_heads": f["gpt3_shape"].n_head,
        "g3_width": f"{f['gpt3_shape'].n_embd:,}",
        "g3_params": spoken_count(f["gpt3_params"]),
        "g3_token": spoken_count(f["gpt3_token"]),
        "g2_token": spoken_count(f["gpt2_token"]),
        "g3_ratio": f"{f['gpt3_ratio']:,.0f}",
        "reply_tokens": f["reply_tokens"],
        "reply_cached": spoken_count(f["reply_cached"]),
        "reply_full": spoken_count(f["reply_full"]),
    }
