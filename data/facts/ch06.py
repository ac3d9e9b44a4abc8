"""Chapter 06 facts: the loop, the KV cache and the n² bill.

Every figure comes from the bundle (the generated steps) or from data/flops.py.
`loop_facts` computes them once; the scenes and the narration both read it, so the
screen and the voice cannot disagree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onepass.data import models
from onepass.data.flops import (
    FP16_BYTES, GPT2_SMALL, GPT3, GPT3_N_POSITIONS, LONG_CONTEXT, REPLY_TOKENS, Shape, attention_grid_flops,
    attention_pairs, causal_pairs, decode_step_flops, forward_total, generation_flops, kv_cache_bytes,
    kv_cache_numbers_per_token, kv_cache_numbers_without_gqa, parameter_counts,
)


@dataclass(frozen=True)
class Chip:
    """An accelerator as serving sees it: how fast it multiplies and how fast it reads its memory."""
    key: str              # its name on screen and in speech is the catalog's ch06:chip-<key>
    peak_flops: float     # dense half-precision (FP16/BF16) matrix FLOP/s
    bandwidth: float      # memory bytes read per second


# NVIDIA H100 SXM5, from NVIDIA's "H100 Tensor Core GPU" datasheet (2022; the same in its 2023
# revision): FP16 and BF16 Tensor Core 1,979 teraFLOPS *with sparsity*, footnoted "specifications are
# one-half lower without sparsity", so 989.4 TFLOPS dense (GPT-2's weights are dense); GPU memory
# bandwidth 3.35 TB/s (80 GB HBM3).
H100_SXM = Chip("h100", peak_flops=989.4e12, bandwidth=3.35e12)
CHIP = H100_SXM       # the chip chapter 06 measures prefill and decode against
WHOLE_FROM = 100      # FLOPs per weight are shown with one decimal below this, whole from it on


def balance_per_weight(chip: Chip = CHIP, bytes_per_weight: int = FP16_BYTES) -> float:
    """The chip's balance point: FLOPs it can do in the time it reads one half-precision weight. Work that
    does fewer FLOPs per weight fetched waits on memory (memory-bound); more, on arithmetic (compute-bound)."""
    return chip.peak_flops / chip.bandwidth * bytes_per_weight


def prefill_per_weight(shape: Shape, tokens: int, params: int) -> float:
    """FLOPs per weight fetched when one pass reads `tokens` prompt tokens at once: every weight is read
    from memory once and used for every token (the ledger's whole pass over the parameters)."""
    return forward_total(shape, tokens) / params


def bound(per_weight: float, balance: float) -> str:
    """'memory' when the work per weight fetched is under the chip's balance point, else 'compute'."""
    return "compute" if per_weight >= balance else "memory"


def crossover_tokens(shape: Shape, params: int, balance: float, limit: int = LONG_CONTEXT) -> int:
    """The prompt length at which prefill turns compute-bound: the fewest tokens whose pass does at least
    `balance` FLOPs per weight fetched (the ledger's FLOPs grow with every token, so a binary search
    finds it); `limit` if even that many fall short."""
    lo, hi = 1, limit
    if prefill_per_weight(shape, hi, params) < balance:
        return limit
    while lo < hi:
        mid = (lo + hi) // 2
        if prefill_per_weight(shape, mid, params) >= balance:
            hi = mid
        else:
            lo = mid + 1
    return lo


def serve_facts(bundle, chip: Chip = CHIP) -> dict:
    """Prefill and decode against a chip: FLOPs per weight fetched for one decode step, this prompt's
    prefill and a long prompt's (GPT-2's whole context, n_positions tokens), each with the regime it falls
    in ('memory' or 'compute'), the chip's balance point and the crossover, all from the ledger."""
    shape, T = bundle.shape, bundle.T
    params = bundle.meta["parameters"]["total"]
    balance = balance_per_weight(chip)
    long = shape.n_positions
    decode = decode_step_flops(shape, T + 1)
    bars = [("decode", 1, decode / params),
            ("prompt", T, prefill_per_weight(shape, T, params)),
            ("long", long, prefill_per_weight(shape, long, params))]
    bars = [{"key": k, "tokens": n, "per_weight": w, "bound": bound(w, balance)} for k, n, w in bars]
    by = {b["key"]: b for b in bars}
    # the plot's axis: powers of ten from 1 up past the tallest bar and the balance point
    tallest = max([balance] + [b["per_weight"] for b in bars])
    ticks = [1]
    while ticks[-1] <= tallest:
        ticks.append(ticks[-1] * 10)
    return {"chip": chip, "balance": balance, "bars": bars, "decode": by["decode"], "prompt": by["prompt"],
            "long": by["long"], "crossover": crossover_tokens(shape, params, balance), "ticks": ticks,
            "peak_tflops": chip.peak_flops / 1e12, "bandwidth_tb": chip.bandwidth / 1e12,
            "bytes_per_weight": FP16_BYTES}


def loop_facts(bundle) -> dict:
    """Generated steps, their FLOPs with and without a cache, the KV cache, the n² bill, scale."""
    shape = bundle.shape
    T = bundle.T
    topk_ids, topk_probs = bundle["gen_topk_ids"], bundle["gen_topk_probs"]
    steps = []
    for i, g in enumerate(bundle.meta["generated"]):
        context = int(g["context_tokens"])
        full, cached = forward_total(shape, context), decode_step_flops(shape, context)
        steps.append({
            "index": i, "context": context, "id": int(topk_ids[i, 0]), "text": bundle.tokenizer.readable(g["id"]),
            "prob": float(topk_probs[i, 0]),
            "full": full,                   # recompute every row
            "cached": cached,               # only the new row, cache read
            "saving": full / cached,        # how many times less the cached step costs
        })
    per_token = kv_cache_numbers_per_token(shape)
    per_token_bytes = per_token * FP16_BYTES
    cache_tokens = [T] + [s["context"] for s in steps[1:]]    # the cache's size after each pass
    n_pos = shape.n_positions
    # the three lengths, by key (the scene names them: the prompt, GPT-2's limit, a million tokens)
    lengths = [("prompt", T), ("limit", n_pos), ("long", LONG_CONTEXT)]
    square = []
    for key, n in lengths:
        grid = attention_grid_flops(shape, n)
        total = forward_total(shape, n)
        square.append({"key": key, "tokens": n, "pairs": attention_pairs(n), "causal": causal_pairs(n),
                       "grid_flops": grid, "pass_flops": total, "share": grid / total})
    params = bundle.meta["parameters"]["total"]
    gpt3_params = parameter_counts(GPT3, GPT3_N_POSITIONS)["total"]
    decode = decode_step_flops(shape, T + 1)
    g3 = decode_step_flops(GPT3, T + 1)
    prefill = forward_total(shape, T)
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
        # grouped-query attention: the cache without it (a key/value head per query head), GPT-2 small's,
        # and a chat that fills the trained context, in fp16 bytes
        "per_token_full": kv_cache_numbers_without_gqa(shape),
        "gpt2_small_kv": kv_cache_numbers_per_token(GPT2_SMALL),
        "context_bytes": kv_cache_bytes(shape, shape.n_positions),
    }


def family_facts(bundle) -> list[dict]:
    """Chapter 06's scale table: every GPT-2 family member (onepass.data.models), the bundle's own model when it
    is outside the family, and GPT-3, each priced by the same ledger: its layers, heads, width,
    parameters, the FLOPs of the token after this prompt with a KV cache (`decode_step_flops` at
    T + 1, as the gpt3 line prices it), and the numbers its KV cache keeps per token. In the family's
    order (onepass.data.models.FAMILY, smallest first), GPT-3 last; `ours` marks the bundle's row, which is the bundle's own shape (so the screen and the
    narration agree for any bundle, the shape-alike test models included)."""
    context = bundle.T + 1

    def row(key, shape, params, ours=False):
        return {"key": key, "layers": shape.n_layer, "heads": shape.n_head, "width": shape.n_embd,
                "params": params, "token_flops": decode_step_flops(shape, context),
                "kv_numbers": kv_cache_numbers_per_token(shape), "ours": ours}

    own = row(bundle.model if bundle.model in models.FAMILY else "other", bundle.shape,
              bundle.meta["parameters"]["total"], ours=True)
    if own["key"] == "other" and bundle.arch != "gpt2":     # a model of its own (a Llama-style decoder): its name
        own["model"] = bundle.model
    rows = [own if m.name == own["key"] else
            row(m.name, Shape.from_config(m.config()), parameter_counts(Shape.from_config(m.config()),
                                                                         m.n_positions)["total"])
            for m in models.FAMILY.values()]
    if own["key"] == "other":        # a shape outside the family: among the family by its parameters
        rows.insert(sum(r["params"] <= own["params"] for r in rows), own)
    rows.append(row("gpt3", GPT3, parameter_counts(GPT3, GPT3_N_POSITIONS)["total"]))
    return rows


KV_LAYER = 0          # the layer whose cache chapter 06 draws (chapter 02's: its first)


def kv_facts(bundle, layer: int = KV_LAYER) -> dict:
    """The KV cache as chapter 06 draws it: one head of one layer (chapter 02's featured head), each
    prompt token's query, key and value rows (T x d_head each, the bundle's own numbers), the head's
    attention weights, and the causal mask's evidence over the whole model: the largest weight any
    token gives a later one, in every head of every layer (0, from the bundle's own weights), which is
    why an earlier token's key and value are the same whatever comes after it. `rows_after` is the
    block's height after each pass of the loop (T, then one more for every pick fed back)."""
    shape, T = bundle.shape, bundle.T
    head = bundle.featured_head(layer=layer)
    probs = bundle["probs"]                                   # [L, H, T, T], the model's own
    later = np.triu(np.ones((T, T), dtype=bool), k=1)         # (row, column) pairs where column > row
    on_later = float(probs[..., later].max()) if later.any() else 0.0
    return {"layer": layer, "head": head, "n_heads": shape.n_layer * shape.n_head, "d_head": shape.d_head,
            # k and v at the key/value head this query head reads (itself, without grouped-query attention)
            "kv_head": shape.kv_head_of(head),
            "q": bundle["q"][layer, head], "k": bundle["k"][layer, shape.kv_head_of(head)],
            "v": bundle["v"][layer, shape.kv_head_of(head)],
            "weights": probs[layer, head], "on_later": on_later,
            "rows_after": [c["tokens"] for c in loop_facts(bundle)["cache"]]}
