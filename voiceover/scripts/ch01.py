"""Chapter 01 narration: ids -> vectors, positions, the residual stream. Every figure is read
from data/facts/ch01.py (config, parameter counts, embedding rows, cosine pairs) or the ledger."""
from __future__ import annotations

from data.facts.ch01 import embed_facts
from words.numbers import spoken_count, spoken_token


def spoken_cos(c: float) -> str:
    return f"{c:.2f}".replace("-", "minus ")


def values(bundle, ledger, words) -> dict:
    f = embed_facts(bundle)
    pairs = f["cosine"]
    spoken_pairs = [f"{p['a']} and {p['b']} score {spoken_cos(p['cosine'])}" for p in pairs]
    pairs_spoken = ", ".join(spoken_pairs[:-1]) + (", and " if len(spoken_pairs) > 1 else "") + spoken_pairs[-1]
    cos = [p["cosine"] for p in pairs]
    return {
        "V": spoken_count(f["V"], words), "d": spoken_count(f["d"], words), "P": spoken_count(f["P"], words),
        "T": spoken_count(f["T"], words), "n_layer": spoken_count(f["n_layer"], words),
        "wte_params": spoken_count(f["wte_params"], words),
        "wte_share": f"{100 * f['wte_share']:.0f} percent",
        "row_id": f["row_id"], "row_token": spoken_token(f["row_token"], words),
        "pairs_spoken": pairs_spoken,
        "n_pairs": spoken_count(len(pairs), words),
        "cos_min": spoken_cos(min(cos)), "cos_max": spoken_cos(max(cos)),
        "pos_flops": spoken_count(ledger["positions"].flops, words),
        "P_shown": spoken_count(f["P_shown"], words),
    }
