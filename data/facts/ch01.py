"""Chapter 01 facts: ids -> vectors, positions, the residual stream. Every figure is read
from the bundle (config, parameter counts, embedding rows, cosine pairs)."""
from __future__ import annotations

import numpy as np

# the heatmaps show at most this many positions and dimensions of the position tables
HEATMAP_POSITIONS = 256
HEATMAP_DIMS = 256
# the token rows a picture shows at most (a longer prompt's first ones, with a note)
SHOWN_TOKENS = 8
# the order beat's small strips under each token: this many of a vector's first numbers
STRIP_DIMS = 24
# the angle picture's tour before the featured pair: the angles (degrees) whose cosines define the scale
ANGLE_TOUR = (0.0, 90.0, 180.0)


def row_index(tokens: list[str]) -> int:
    """The token whose embedding row is shown: the longest word (first on ties)."""
    return max(range(len(tokens)), key=lambda i: (len(tokens[i].strip()), -i))


def sinusoidal_table(n_positions: int, d: int) -> np.ndarray:
    """The 2017 paper's encoding: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    pos = np.arange(n_positions, dtype=np.float64)[:, None]
    i = np.arange(0, d, 2, dtype=np.float64)[None, :]
    angle = pos / np.power(10000.0, i / d)
    table = np.zeros((n_positions, d))
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle[:, : d // 2])
    return table


# Of the lecture's cosine pairs (data/extract.py COSINE_PAIRS), those of related words; the others
# pair a word with an unrelated one ("banana").
RELATED_PAIRS = {("king", "queen"), ("Monday", "Tuesday")}


def id_facts(ids: list[int]) -> dict:
    """Why an id is not a vector: the largest and smallest of the ids shown (indices into `ids`),
    and the two distinct ids nearest each other on the list of the vocabulary (None for fewer than
    two distinct ids)."""
    high = max(range(len(ids)), key=lambda i: (ids[i], -i))
    low = min(range(len(ids)), key=lambda i: (ids[i], i))
    near, gap = None, None
    for i in range(len(ids)):
        for j in range(len(ids)):
            g = ids[j] - ids[i]
            if g > 0 and (gap is None or g < gap):
                near, gap = (i, j), g
    return {"high": high, "low": low, "high_id": ids[high], "low_id": ids[low], "near": near, "near_gap": gap}


def angle_of(cosine: float) -> float:
    """The angle (degrees) between two vectors whose cosine is `cosine`."""
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def contrast_pairs(pairs: list[dict]) -> list[dict]:
    """The pairs read aloud: the related pair that agrees most, then an unrelated pair that shares its
    first word (else the unrelated pair that agrees least); every pair if none is marked related."""
    related = [p for p in pairs if p.get("related")]
    others = [p for p in pairs if not p.get("related")]
    if not related or not others:
        return list(pairs)
    top = max(related, key=lambda p: p["cosine"])
    partners = [p for p in others if p["a"] == top["a"]] or others
    return [top, min(partners, key=lambda p: p["cosine"])]


def order_strips(bundle, n: int, dims: int = STRIP_DIMS) -> dict:
    """The order beat's vectors (first `dims` numbers) for the first n tokens, as written and reversed:
    each token's own row (the same in either order: attention without positions sees the same set),
    then with the position row of the slot it stands in added (the same token now differs by slot)."""
    wte = np.asarray(bundle["wte_rows"], dtype=np.float64)[:n, :dims]
    if not bundle.shape.has_position_table:   # RoPE: nothing is added to the vectors; they stay as they are
        return {"plain": wte, "plain_reversed": wte[::-1], "placed": wte, "placed_reversed": wte[::-1]}
    wpe = np.asarray(bundle["wpe_rows"], dtype=np.float64)[:n, :dims]
    back = wte[::-1]
    return {"plain": wte, "plain_reversed": back, "placed": wte + wpe, "placed_reversed": back + wpe}


def embed_facts(bundle) -> dict:
    """Everything chapter 01 shows, shared by the scenes and the script."""
    shape = bundle.shape
    params = bundle.meta["parameters"]
    i = row_index(bundle.tokens)
    cosine = [dict(p, related=(p["a"], p["b"]) in RELATED_PAIRS) for p in bundle.meta["cosine"]]
    spoken = contrast_pairs(cosine)
    featured = spoken[0]
    return {
        "V": shape.vocab, "d": shape.n_embd, "P": shape.n_positions, "n_layer": shape.n_layer,
        "T": bundle.T,
        "wte_params": params["wte"], "total_params": params["total"],
        "wte_share": params["wte"] / params["total"],
        "row_index": i, "row_id": bundle.ids[i], "row_token": bundle.tokens[i],
        "cosine": cosine, "spoken_pairs": spoken,
        "featured": featured, "featured_angle": angle_of(featured["cosine"]),
        "tour": [(a, float(np.cos(np.radians(a)))) for a in ANGLE_TOUR],
        "ids": id_facts(list(bundle.ids[:SHOWN_TOKENS])),
        "P_shown": min(shape.n_positions, HEATMAP_POSITIONS),
        "d_shown": min(shape.n_embd, HEATMAP_DIMS),
    }


# the dials that stand for RoPE's turn in the order and add beats: the fastest pair's angle
DIAL_PAIR = 0
# the model whose rescaled speeds the rope line cites (data/arch registry; its rope_parameters)
STRETCH_MODEL = "llama-3.2-1b"


def dial_angles(bundle, n: int) -> np.ndarray:
    """Degrees the fastest pair of q and k turns at positions 0 … n−1 (RoPE; its own speed)."""
    inv = np.asarray(bundle["rope_inv_freq"], dtype=np.float64)
    return np.degrees(np.arange(n) * inv[DIAL_PAIR])


def stretch_rule(inv_freq, params: dict) -> np.ndarray:
    """Llama 3's rescaling of RoPE's speeds (rope_type 'llama3'): pairs slower than one turn per
    original_max / low_freq_factor tokens are slowed `factor` times, pairs faster than one turn per
    original_max / high_freq_factor tokens keep their speed, and those between are blended."""
    inv = np.asarray(inv_freq, dtype=np.float64)
    factor, lo, hi = params["factor"], params["low_freq_factor"], params["high_freq_factor"]
    old = params["original_max_position_embeddings"]
    wavelen = 2 * np.pi / inv
    smooth = np.clip((old / wavelen - lo) / (hi - lo), 0.0, 1.0)
    blended = (1 - smooth) * inv / factor + smooth * inv
    return np.where(wavelen > old / lo, inv / factor, np.where(wavelen < old / hi, inv, blended))


def rope_speeds(bundle) -> dict:
    """Chapter 01's no-table beats (RoPE): each pair's speed as tokens per full turn, the length the
    model was trained to read, the pairs that never finish a turn within it, and what Llama 3.2's
    rescaling (its rope_parameters, from the registry) would make of these same speeds."""
    from onepass.data.arch import llama
    shape = bundle.shape
    inv = np.asarray(bundle["rope_inv_freq"], dtype=np.float64)
    turn = 2 * np.pi / inv                                      # tokens per full turn, pair by pair
    P = shape.n_positions
    stretch = llama.MODELS[STRETCH_MODEL].shape().rope_parameters
    own = shape.rope_parameters
    stretched = 2 * np.pi / stretch_rule(inv, stretch)
    return {"turn": turn, "pairs": len(inv), "P": P, "dh": shape.d_head,
            "fast": float(turn.min()), "slow": float(turn.max()),
            "unfinished": int((turn > P).sum()),
            "theta": float(own.get("rope_theta", 10000.0)), "own_factor": own.get("factor"),
            "stretch_factor": float(stretch["factor"]), "stretch_old": int(stretch["original_max_position_embeddings"]),
            "stretched": stretched, "slowed": int((stretched > turn * 1.0001).sum())}
