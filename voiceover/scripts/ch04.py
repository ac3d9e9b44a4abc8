"""Chapter 04 narration: the last row, the tied unembedding, the softmax vote, shaping and picking.

Every figure comes from data/facts/ch04.py (`vote_facts`: temperatures, entropies, the
top-p count, ranks, the token of interest), which scenes/ch04_vote.py reads too, so screen
and narration agree by construction.
"""
from __future__ import annotations

from data.facts.ch04 import TOP_K, TOP_P, vote_facts
from words.numbers import spoken_count, spoken_prob, spoken_token


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def values(bundle, ledger, words) -> dict:
    cfg = bundle.config
    f = vote_facts(bundle)
    top, temps = f["top"], f["temps"]
    n_p = f["n_p"]
    out = {
        "T": bundle.T,
        "T_next": bundle.T + 1,
        "d": cfg["n_embd"],
        "V": f"{cfg['vocab_size']:,}",
        "last_token": spoken_token(bundle.tokens[-1], words),
        "unembed_flops": spoken_count(ledger["unembed"].flops, words),
        "total_flops": spoken_count(ledger.total, words),
        "even_p": spoken_prob(1 / cfg["vocab_size"], words),
        "n_bars": len(top),
        "top_mass": spoken_prob(f["top_mass"], words),
        "n_p": f"{n_p:,}",
        "n_p_tokens": f"{n_p:,} token" + ("" if n_p == 1 else "s"),
        "n_layer": cfg["n_layer"],
        "p_pct": f"{100 * TOP_P:g} percent",
        "topp_note": (f"far more than the {len(top)} bars on screen" if n_p > len(top)
                      else "the top bar alone" if n_p == 1 else f"so every bar below rank {n_p} is cut"),
        "k": TOP_K,
        "topk_top1_p": spoken_prob(f["topk"][0], words),
        "greedy": spoken_token(f["greedy"]["text"], words),
        "seed": f["sample"]["seed"],
        "sampled": spoken_token(f["sample"]["text"], words),
        "sampled_rank": f"{f['sample']['rank']:,}",
        "sampled_p": spoken_prob(f["sample"]["prob"], words),
    }
    for i in range(3):
        c = top[min(i, len(top) - 1)]
        out[f"top{i + 1}"] = spoken_token(c["text"], words)
        out[f"top{i + 1}_p"] = spoken_prob(c["prob"], words)
    for i, t in enumerate(temps):
        out[f"t{i}"] = f"{t['t']:.1f}"
        out[f"t{i}_top"] = spoken_prob(t["top"], words)
        out[f"t{i}_H"] = f"{t['entropy']:.2f}"
    w = f["watch"]
    # without a token of interest the 'interest' beat is skipped; its fields still need values
    out["watch"] = spoken_token(w["text"], words) if w else ""
    out["watch_rank"] = ordinal(w["rank"]) if w else ""
    out["watch_p"] = spoken_prob(w["prob"], words) if w else ""
    return out
