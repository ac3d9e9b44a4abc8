"""Chapter 02 facts: one attention head of the first layer (also chapters 03 and 05's head).

Every figure the chapter's pictures draw, as pure functions of the bundle: the last token's query
against the keys (agreement), the same row's softmax with and without the division by √d_head,
the row as a budget, and the output as a blend of value vectors.
"""
from __future__ import annotations

import numpy as np


def head_facts(bundle) -> dict:
    """The featured head and its last-row readout (shared by the scenes and the script)."""
    head = bundle.featured_head(layer=0)
    row = bundle["probs"][0, head, -1].astype(np.float64)   # [T]
    top = int(np.argmax(row))
    return {"head_index": head, "row": row, "top_index": top}


def d_head(bundle) -> int:
    return bundle.shape.d_head


def softmax(x) -> np.ndarray:
    """Exponentiate and normalise (minus infinity gives exactly zero)."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x))
    return e / e.sum()


def agreement_facts(bundle) -> dict:
    """The last token's query against every key of the featured head (what the fan draws).

    Each key is drawn in the plane it spans with the query, the query along +x: its tip's x is its
    length times the cosine of its angle to the query (k · q / |q|, exact), its y the length of the
    rest of it (|k| sin θ), above or below the query by turns of rank so that keys do not overlap.
    """
    h = head_facts(bundle)["head_index"]
    q = bundle["q"][0, h, -1].astype(np.float64)              # [dh]
    k = bundle["k"][0, h].astype(np.float64)                  # [T, dh]
    dots = k @ q                                              # q · k_j, before the division
    q_norm = float(np.linalg.norm(q))
    k_norm = np.linalg.norm(k, axis=1)
    cos = np.clip(dots / np.maximum(q_norm * k_norm, 1e-30), -1.0, 1.0)
    angle = np.degrees(np.arccos(cos))
    order = np.argsort(-dots, kind="stable")
    side = np.empty(len(dots))
    side[order] = [1.0 if i % 2 == 0 else -1.0 for i in range(len(dots))]
    tips = np.stack([k_norm * cos, side * k_norm * np.sqrt(1.0 - cos ** 2)], axis=1)   # [T, 2]
    return {"head_index": h, "q": q, "k": k, "dots": dots, "q_norm": q_norm, "k_norm": k_norm,
            "cos": cos, "angle": angle, "tips": tips, "top_index": int(order[0]),
            "bottom_index": int(order[-1])}


def root_facts(bundle) -> dict:
    """The last row's softmax with the division by √d_head (the head's real weights) and without."""
    h = head_facts(bundle)["head_index"]
    dh = d_head(bundle)
    q = bundle["q"][0, h, -1].astype(np.float64)
    k = bundle["k"][0, h].astype(np.float64)
    raw = k @ q                                               # the last row sees every token: no mask
    divided = bundle["probs"][0, h, -1].astype(np.float64)    # = softmax(raw / √dh), as the model ran it
    undivided = softmax(raw)
    return {"head_index": h, "dh": dh, "root": float(np.sqrt(dh)), "raw": raw, "scaled": raw / np.sqrt(dh),
            "divided": divided, "undivided": undivided,
            "divided_top": int(np.argmax(divided)), "undivided_top": int(np.argmax(undivided))}


def budget_facts(bundle) -> dict:
    """The last row as one unit of attention: each token's share and where its piece starts."""
    row = head_facts(bundle)["row"]
    starts = np.concatenate([[0.0], np.cumsum(row)[:-1]])
    return {"weights": row, "starts": starts, "total": float(row.sum()), "top_index": int(np.argmax(row))}


def blend_facts(bundle) -> dict:
    """The last token's output as the weighted sum of the value vectors."""
    h = head_facts(bundle)["head_index"]
    w = bundle["probs"][0, h, -1].astype(np.float64)          # [T]
    v = bundle["v"][0, h].astype(np.float64)                  # [T, dh]
    scaled = w[:, None] * v                                   # each value times its weight
    out = scaled.sum(axis=0)                                  # = the head's output for the last token
    return {"head_index": h, "weights": w, "values": v, "scaled": scaled, "output": out,
            # the colour scale: most values near its ends (the largest few saturate), so strips read at 480p
            "vmax": float(np.percentile(np.abs(v), 95)) or 1.0, "top_index": int(np.argmax(w))}


def projection_facts(bundle) -> dict:
    """The last token's row of the head's input and what the three projections make of it: its query,
    key and value in the featured head (the qkv picture: one row in, three short vectors out)."""
    h = head_facts(bundle)["head_index"]
    x = bundle["ln1"][0, -1].astype(np.float64)              # [d]
    q, k, v = (bundle[name][0, h, -1].astype(np.float64) for name in ("q", "k", "v"))   # [dh] each
    scale = lambda a: float(np.percentile(np.abs(a), 95)) or 1.0   # most cells near the scale's ends
    return {"head_index": h, "x": x, "q": q, "k": k, "v": v, "x_vmax": scale(x),
            "vmax": scale(np.concatenate([q, k, v]))}


def softmax_row(bundle, row: int) -> dict:
    """One row of the masked scores through the softmax, step by step: eˢ (exactly 0 where the mask
    put −∞), the row's total, and each share of it (the head's own weights)."""
    h = head_facts(bundle)["head_index"]
    s = bundle["scores_masked"][0, h, row].astype(np.float64)   # [T], −∞ right of the diagonal
    e = np.exp(s)                                               # e^−∞ = 0, exactly
    total = float(e.sum())
    return {"head_index": h, "row": row, "scores": s, "exp": e, "total": total, "weights": e / total,
            "masked": np.isneginf(s), "model": bundle["probs"][0, h, row].astype(np.float64)}


def softmax_row_index(rows) -> int:
    """The row the softmax picture follows, of the rows shown: the middle one, so that it keeps some
    tokens and loses some to the mask (the last row sees everything; the first only itself)."""
    rows = list(rows)
    return rows[(len(rows) - 1) // 2] if len(rows) > 2 else rows[-1]


def cost_facts(ledger) -> dict:
    """One attention layer's FLOPs, step by step from the ledger, as squares: each side the root of
    its FLOPs (area is cost), scaled so that the largest is 1."""
    keys = ("L0.qkv", "L0.scores", "L0.mix", "L0.out")
    flops = np.array([ledger[k].flops for k in keys], dtype=np.float64)
    sides = np.sqrt(flops / flops.max())
    return {"keys": keys, "flops": flops, "sides": sides, "total": int(ledger.attention_flops(0)),
            "share": flops / flops.sum()}
