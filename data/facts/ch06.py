"""Chapter 06 facts: the loop, the KV cache and the n² bill.

Every figure comes from the bundle (the generated steps) or from data/flops.py.
`loop_facts` computes them once; the scenes and the narration both read it, so the
screen and the voice cannot disagree.
"""
from __future__ import annotations

from data import models, tokenizer
from data.flops import (FP16_BYTES, GPT3, GPT3_N_POSITIONS, LONG_CONTEXT, REPLY_TOKENS, Shape,
                        attention_grid_flops, attention_pairs, causal_pairs, decode_step_flops,
                        forward_ledger, generation_flops, kv_cache_bytes, kv_cache_numbers_per_token,
                        parameter_counts)


def loop_facts(bundle) -> dict:
    """Generated steps, their FLOPs with and without a cache, the KV cache, the n² bill, scale."""
    cfg = bundle.config
    shape = Shape.from_config(cfg)
    T = bundle.T
    topk_ids, topk_probs = bundle["gen_topk_ids"], bundle["gen_topk_probs"]
    steps = []
    for i, g in enumerate(bundle.meta["generated"]):
        context = int(g["context_tokens"])
        full, cached = forward_ledger(shape, context).total, decode_step_flops(shape, context)
        steps.append({
            "index": i, "context": context, "id": int(topk_ids[i, 0]), "text": tokenizer.readable(g["id"]),
            "prob": float(topk_probs[i, 0]),
            "full": full,                   # recompute every row
            "cached": cached,               # only the new row, cache read
            "saving": full / cached,        # how many times less the cached step costs
        })
    per_token = kv_cache_numbers_per_token(shape)
    per_token_bytes = per_token * FP16_BYTES
    cache_tokens = [T] + [s["context"] for s in steps[1:]]    # the cache's size after each pass
    n_pos = cfg["n_positions"]
    # the three lengths, by key (the scene names them: the prompt, GPT-2's limit, a million tokens)
    lengths = [("prompt", T), ("limit", n_pos), ("long", LONG_CONTEXT)]
    square = []
    for key, n in lengths:
        grid = attention_grid_flops(shape, n)
        total = forward_ledger(shape, n).total
        square.append({"key": key, "tokens": n, "pairs": attention_pairs(n), "causal": causal_pairs(n),
                       "grid_flops": grid, "pass_flops": total, "share": grid / total})
    params = bundle.meta["parameters"]["total"]
    gpt3_params = parameter_counts(GPT3, GPT3_N_POSITIONS)["total"]
    decode = decode_step_flops(shape, T + 1)
    g3 = decode_step_flops(GPT3, T + 1)
    prefill = forward_ledger(shape, T).total
    return {
        "shape": shape, "T": T, "steps": steps,
        "loop_total": sum(s["full"] for s in steps),             # the meter after the loop
        "loop_added": sum(s["full"] for s in steps[1:]),         # what the passes after the first add
        "per_token": per_token, "per_token_bytes": per_token_bytes,
        # the cache after each pass: its tokens, the numbers it holds and their bytes
        "cache": [{"tokens": n, "numbers": n * per_token, "bytes": n * per_token_bytes} for n in cache_tokens],
        "square": square,
        "prefill": prefill, "decode": decode, "params": params,
        "decode_context": T + 1,                                 # the token a decode step writes
        "prefill_per_param": prefill / params,                   # FLOPs per weight fetched
        "decode_per_param": decode / params,
        "cache_read_bytes": kv_cache_bytes(shape, T),
        "gpt3_shape": GPT3, "gpt3_params": gpt3_params, "gpt3_token": g3, "gpt2_token": decode,
        "gpt3_ratio": g3 / decode,                               # GPT-3's bill per token over this model's
        "reply_tokens": REPLY_TOKENS,
        "reply_cached": generation_flops(shape, T, REPLY_TOKENS, cached=True),
        "reply_full": generation_flops(shape, T, REPLY_TOKENS, cached=False),
    }


def family_facts(bundle) -> list[dict]:
    """Chapter 06's scale table: every GPT-2 family member (data.models), the bundle's own model when it
    is outside the family, and GPT-3, each priced by the same ledger: its layers, heads, width,
    parameters, the FLOPs of the token after this prompt with a KV cache (`decode_step_flops` at
    T + 1, as the gpt3 line prices it), and the numbers its KV cache keeps per token. In the family's
    order (data.models.FAMILY, smallest first), GPT-3 last; `ours` marks the bundle's row, which is the bundle's own shape (so the screen and the
    narration agree for any bundle, the shape-alike test models included)."""
    context = bundle.T + 1

    def row(key, shape, params, ours=False):
        return {"key": key, "layers": shape.n_layer, "heads": shape.n_head, "width": shape.n_embd,
                "params": params, "token_flops": decode_step_flops(shape, context),
                "kv_numbers": kv_cache_numbers_per_token(shape), "ours": ours}

    own = row(bundle.model if bundle.model in models.FAMILY else "other", bundle.shape,
              bundle.meta["parameters"]["total"], ours=True)
    rows = [own if m.name == own["key"] else
            row(m.name, Shape.from_config(m.config()), parameter_counts(Shape.from_config(m.config()),
                                                                         m.n_positions)["total"])
            for m in models.FAMILY.values()]
    if own["key"] == "other":        # a shape outside the family: among the family by its parameters
        rows.insert(sum(r["params"] <= own["params"] for r in rows), own)
    rows.append(row("gpt3", GPT3, parameter_counts(GPT3, GPT3_N_POSITIONS)["total"]))
    return rows
