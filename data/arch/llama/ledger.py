"""A Llama-style decoder's ledger items and parameter counts, from its shape alone.

One convention with GPT-2's (data/flops.py): 2 FLOPs per multiply-add for every matrix product at
its real width (k and v are narrower under grouped-query attention; scores and mixing run at query
heads × d_head); RoPE's rotation is counted as GPT-2's position add is, by its elementwise arithmetic
(x·cos + rotate(x)·sin: 2 multiplies and 1 add per number of q and k); RMSNorm, SiLU and the gate's
product are left out, as LayerNorm and GELU are.
"""
from __future__ import annotations

from onepass.data.arch.base.spec import Shape


def ledger_items(shape: Shape, T: int) -> list[tuple[str, str, str, int, int | None]]:
    """(key, step, formula, FLOPs, layer) of one forward pass over T tokens."""
    d, dff, L, V = shape.n_embd, shape.d_ff, shape.n_layer, shape.vocab
    H, KV, dh = shape.n_head, shape.kv_heads, shape.d_head
    items = [
        ("tokens", "tokenize", "lookup, no arithmetic", 0, None),
        ("embed", "token embedding lookup", "row lookup, no arithmetic", 0, None),
    ]
    for l in range(L):
        n = l + 1
        items += [
            (f"L{l}.qkv", f"layer {n}: q, k, v projections ({H} query, {KV} key/value heads)",
             f"2·T·d·(H+2·KV)·dh = 2·{T}·{d}·({H}+2·{KV})·{dh}", 2 * T * d * (H + 2 * KV) * dh, l),
            (f"L{l}.rope", f"layer {n}: rotate q and k (RoPE)",
             f"3·T·(H+KV)·dh = 3·{T}·({H}+{KV})·{dh}", 3 * T * (H + KV) * dh, l),
            (f"L{l}.scores", f"layer {n}: scores q·kᵀ", f"2·T·T·H·dh = 2·{T}·{T}·{H}·{dh}", 2 * T * T * H * dh, l),
            (f"L{l}.mix", f"layer {n}: weights × v", f"2·T·T·H·dh = 2·{T}·{T}·{H}·{dh}", 2 * T * T * H * dh, l),
            (f"L{l}.out", f"layer {n}: output projection", f"2·T·H·dh·d = 2·{T}·{H}·{dh}·{d}", 2 * T * H * dh * d, l),
            (f"L{l}.mlp_gate", f"layer {n}: MLP gate {d}→{dff}", f"2·T·d·dff = 2·{T}·{d}·{dff}", 2 * T * d * dff, l),
            (f"L{l}.mlp_up", f"layer {n}: MLP up {d}→{dff}", f"2·T·d·dff = 2·{T}·{d}·{dff}", 2 * T * d * dff, l),
            (f"L{l}.mlp_down", f"layer {n}: MLP down {dff}→{d}", f"2·T·dff·d = 2·{T}·{dff}·{d}", 2 * T * dff * d, l),
        ]
    items.append(("unembed", "unembedding, last row" + ("" if shape.tied else " (its own table)"),
                  f"2·d·V = 2·{d}·{V}", 2 * d * V, None))
    return items


def parameter_counts(shape: Shape, n_positions: int | None = None) -> dict[str, int]:
    """Parameters per component (no biases unless the shape has them; no position table)."""
    d, dff, L, V = shape.n_embd, shape.d_ff, shape.n_layer, shape.vocab
    H, KV, dh = shape.n_head, shape.kv_heads, shape.d_head
    attn = d * H * dh + 2 * d * KV * dh + H * dh * d + ((H + 2 * KV) * dh if shape.bias else 0)
    if shape.qk_norm:
        attn += 2 * dh                       # one gain vector for q, one for k, shared by the heads
    mlp = 3 * d * dff
    counts = {
        "wte": V * d,
        "wpe": 0,
        "attention_per_layer": attn,
        "mlp_per_layer": mlp,
        "layernorms": L * 2 * d + d,         # RMSNorm: one gain vector each, no bias
        "unembed": 0 if shape.tied else V * d,
    }
    counts["total"] = counts["wte"] + L * (attn + mlp) + counts["layernorms"] + counts["unembed"]
    return counts
