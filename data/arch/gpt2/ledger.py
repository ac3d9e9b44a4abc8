"""GPT-2's ledger items and parameter counts, from its shape alone (conventions: data/flops.py)."""
from __future__ import annotations

from onepass.data.arch.base.spec import Shape


def ledger_items(shape: Shape, T: int) -> list[tuple[str, str, str, int, int | None]]:
    """(key, step, formula, FLOPs, layer) of one forward pass over T tokens."""
    d, dff, L, V = shape.n_embd, shape.d_ff, shape.n_layer, shape.vocab
    items = [
        ("tokens", "tokenize", "lookup, no arithmetic", 0, None),
        ("embed", "token embedding lookup", "row lookup, no arithmetic", 0, None),
        ("positions", "add position vectors", f"T·d = {T}·{d}", T * d, None),
    ]
    for l in range(L):
        items += [
            (f"L{l}.qkv", f"layer {l + 1}: q, k, v projections", f"2·T·d·3d = 2·{T}·{d}·{3 * d}", 2 * T * d * 3 * d, l),
            (f"L{l}.scores", f"layer {l + 1}: scores q·kᵀ", f"2·T·T·d = 2·{T}·{T}·{d}", 2 * T * T * d, l),
            (f"L{l}.mix", f"layer {l + 1}: weights × v", f"2·T·T·d = 2·{T}·{T}·{d}", 2 * T * T * d, l),
            (f"L{l}.out", f"layer {l + 1}: output projection", f"2·T·d·d = 2·{T}·{d}·{d}", 2 * T * d * d, l),
            (f"L{l}.mlp_up", f"layer {l + 1}: MLP up {d}→{dff}", f"2·T·d·4d = 2·{T}·{d}·{dff}", 2 * T * d * dff, l),
            (f"L{l}.mlp_down", f"layer {l + 1}: MLP down {dff}→{d}", f"2·T·4d·d = 2·{T}·{dff}·{d}", 2 * T * dff * d, l),
        ]
    items.append(("unembed", "unembedding, last row", f"2·d·V = 2·{d}·{V}", 2 * d * V, None))
    return items


def parameter_counts(shape: Shape, n_positions: int | None = None) -> dict[str, int]:
    """Parameters per component, from the shape alone (weights + biases)."""
    d, dff, L, V = shape.n_embd, shape.d_ff, shape.n_layer, shape.vocab
    n_positions = shape.n_positions if n_positions is None else n_positions
    attn = d * 3 * d + 3 * d + d * d + d
    mlp = d * dff + dff + dff * d + d
    ln = 2 * d
    counts = {
        "wte": V * d,
        "wpe": n_positions * d,
        "attention_per_layer": attn,
        "mlp_per_layer": mlp,
        "layernorms": L * 2 * ln + ln,
    }
    counts["total"] = counts["wte"] + counts["wpe"] + L * (attn + mlp) + counts["layernorms"]
    return counts
