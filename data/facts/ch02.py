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


def kv_of(bundle, head: int) -> int:
    """The key/value head query head `head` reads (itself without grouped-query attention)."""
    return bundle.shape.kv_head_of(head)


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
    k = bundle["k"][0, kv_of(bundle, h)].astype(np.float64)   # [T, dh]: the key head this query head reads
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
    k = bundle["k"][0, kv_of(bundle, h)].astype(np.float64)
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
    v = bundle["v"][0, kv_of(bundle, h)].astype(np.float64)  # [T, dh]: the value head it reads
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
    kv = kv_of(bundle, h)
    q = bundle["q"][0, h, -1].astype(np.float64)
    k, v = (bundle[name][0, kv, -1].astype(np.float64) for name in ("k", "v"))   # [dh] each
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


# RoPE (rotary positions): the pairs the rotation picture draws, at most this many
ROPE_PAIRS_SHOWN = 3
# the middle pair shown: the one whose turn per position is nearest this many degrees
ROPE_MIDDLE_DEGREES = 15.0
# the relative-position check: every position moved on by this many tokens
ROPE_SHIFT = 100


def rotate(x, positions, inv_freq) -> np.ndarray:
    """RoPE as the model runs it: dimension i pairs with i + d_head/2 and that pair turns by
    position × inv_freq[i] radians. x [..., T, dh], positions [T]."""
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    angle = np.asarray(positions, dtype=np.float64)[:, None] * np.asarray(inv_freq, dtype=np.float64)[None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def rope_facts(bundle) -> dict | None:
    """The featured head's query and keys before and after RoPE's turn (None without RoPE).

    pairs: the pairs drawn (the fastest, one that turns about ROPE_MIDDLE_DEGREES a token, the
    slowest), each its dimensions (i, i + dh/2), its turn per token (degrees), the last token's
    query pair before and after; the score of the last query with its best key as the model
    ran it, and the same two vectors turned as if every position were ROPE_SHIFT further on (the
    same number: the score sees only how far apart the tokens are)."""
    if bundle.shape.positions != "rope":
        return None
    h = head_facts(bundle)["head_index"]
    kv = kv_of(bundle, h)
    inv = bundle["rope_inv_freq"].astype(np.float64)             # [dh/2], radians per position
    half = len(inv)
    T = bundle.T
    q0 = bundle["q_prerot"][0, h].astype(np.float64)             # [T, dh]
    k0 = bundle["k_prerot"][0, kv].astype(np.float64)
    q, k = bundle["q"][0, h].astype(np.float64), bundle["k"][0, kv].astype(np.float64)
    degrees = np.degrees(inv)
    middle = int(np.argmin(np.abs(degrees - ROPE_MIDDLE_DEGREES)))
    chosen = sorted({0, middle, half - 1})[:ROPE_PAIRS_SHOWN]
    last = T - 1
    pairs = [{"i": i, "dims": (i, i + half), "per_token": float(degrees[i]),
              "turn": float(degrees[i] * last),                     # the last token's angle (position T−1)
              "before": q0[last, [i, i + half]], "after": q[last, [i, i + half]],
              "wavelength": float(2 * np.pi / inv[i])} for i in chosen]
    dots = k @ q[last]
    best = int(np.argmax(dots))
    pos = np.arange(T)
    moved_q = rotate(q0, pos + ROPE_SHIFT, inv)
    moved_k = rotate(k0, pos + ROPE_SHIFT, inv)
    return {"head_index": h, "kv_head": kv, "inv_freq": inv, "pairs": pairs, "last": last, "key": best,
            "distance": last - best, "score": float(dots[best]),
            "score_moved": float(moved_k[best] @ moved_q[last]), "shift": ROPE_SHIFT,
            # the model's own turn, recomputed: RoPE of the unturned vectors is the bundle's q and k
            "check": float(max(np.abs(rotate(q0, pos, inv) - q).max(), np.abs(rotate(k0, pos, inv) - k).max())),
            "fast_wavelength": float(2 * np.pi / inv.max()), "slow_wavelength": float(2 * np.pi / inv.min())}


def qknorm_facts(bundle) -> dict | None:
    """The q/k norm (Qwen3) on the featured head, None for a model without one: an RMSNorm of each
    head's query and key over its d_head numbers, then the norm's gain (one per number, shared by the
    heads), before RoPE's turn. For "q" (the featured head) and "k" (the key/value head it reads):
    the last token's row before the norm and after it (the bundle's q_prerot / k_prerot), each shown
    token's rms before, after the division (1, up to ε) and after the gain; the gain; `check`, our
    division times the gain against the model's output."""
    if not bundle.shape.qk_norm:
        return None
    h = head_facts(bundle)["head_index"]
    eps = float(bundle.config["norm_eps"])
    rms = lambda x: np.sqrt((x * x).mean(-1) + eps)                  # [..., dh] -> [...]
    out = {"head_index": h, "kv_head": kv_of(bundle, h)}
    for x, head in (("q", h), ("k", out["kv_head"])):
        pre = bundle[f"{x}_prenorm"][0, head].astype(np.float64)      # [T, dh] the projection's output
        post = bundle[f"{x}_prerot"][0, head].astype(np.float64)      # [T, dh] the norm's output
        gain = bundle[f"{x}_norm_w"][0].astype(np.float64)            # [dh]
        unit = pre / rms(pre)[:, None]                                # [T, dh] rms 1, before the gain
        out[x] = {"before": pre[-1], "after": post[-1], "gain": gain,
                  "rms": rms(pre), "rms_unit": rms(unit), "rms_after": rms(post),   # [T] each
                  "check": float(np.abs(unit * gain - post).max())}
    return out


def gqa_facts(bundle, ledger) -> dict:
    """Grouped-query attention: which key/value head each query head reads, and what sharing saves
    (the k and v projections and the cache; the score grid is one per query head either way)."""
    from onepass.data import flops
    shape = bundle.shape
    H, KV, dh, d, T = shape.n_head, shape.kv_heads, shape.d_head, shape.n_embd, bundle.T
    qkv = ledger["L0.qkv"].flops
    # the same layer with one key/value head per query head: q as it is, k and v H heads wide
    qkv_full = 2 * T * d * (H + 2 * H) * dh
    return {"H": H, "KV": KV, "group": shape.group, "kv_head": [shape.kv_head_of(i) for i in range(H)],
            "qkv": qkv, "qkv_full": qkv_full, "kv_proj": 2 * T * d * 2 * KV * dh, "kv_proj_full": 2 * T * d * 2 * H * dh,
            "cache": flops.kv_cache_numbers_per_token(shape),
            "cache_full": flops.kv_cache_numbers_without_gqa(shape),
            "scores": ledger["L0.scores"].flops}
