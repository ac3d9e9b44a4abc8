"""Chapter 01 facts: ids -> vectors, positions, the residual stream. Every figure is read
from the bundle (config, parameter counts, embedding rows, cosine pairs)."""
from __future__ import annotations

import numpy as np

# the heatmaps show at most this many positions and dimensions of the position tables
HEATMAP_POSITIONS = 256
HEATMAP_DIMS = 256


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


def embed_facts(bundle) -> dict:
    """Everything chapter 01 shows, shared by the scenes and the script."""
    cfg = bundle.config
    params = bundle.meta["parameters"]
    i = row_index(bundle.tokens)
    return {
        "V": cfg["vocab_size"], "d": cfg["n_embd"], "P": cfg["n_positions"], "n_layer": cfg["n_layer"],
        "T": bundle.T,
        "wte_params": params["wte"], "total_params": params["total"],
        "wte_share": params["wte"] / params["total"],
        "row_index": i, "row_id": bundle.ids[i], "row_token": bundle.tokens[i],
        "cosine": [dict(p, related=(p["a"], p["b"]) in RELATED_PAIRS) for p in bundle.meta["cosine"]],
        "P_shown": min(cfg["n_positions"], HEATMAP_POSITIONS),
        "d_shown": min(cfg["n_embd"], HEATMAP_DIMS),
    }
