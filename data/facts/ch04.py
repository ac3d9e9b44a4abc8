"""Chapter 04 facts: the last row, the tied unembedding, the softmax vote, shaping and picking.

`vote_facts(bundle)` computes everything the chapter shows from the bundle's last row of
logits (temperatures, entropies, the top-p count, ranks); scenes/ch04_vote.py and
voiceover/scripts/ch04.py both use it, so screen and narration agree by construction.

The token of interest is the bundle's meta["watch"], chosen at extraction: the prompt's
entry in data.extract.DEFAULT_WATCH (" mat" for "The cat sat on the") or render.py's
--watch TOKEN (one GPT-2 token, or 'none').
"""
from __future__ import annotations

import math

import numpy as np

from data import tokenizer

TEMPERATURES = (0.2, 1.0, 2.0)   # the three temperatures compared on screen
TOP_K = 5                        # the top-k shortlist shown on the bars
TOP_P = 0.9                      # the nucleus mass
N_BARS = 10                      # candidates drawn as bars
N_TEMP_BARS = 5                  # candidates per temperature column


def softmax64(z: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def entropy(p: np.ndarray) -> float:
    """In nats (natural log); 0 log 0 counts as 0."""
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def nucleus_size(probs: np.ndarray, p: float) -> int:
    """The smallest number of most-probable tokens whose probabilities sum to at least p."""
    cum = np.cumsum(np.sort(np.asarray(probs, dtype=np.float64))[::-1])
    return int(min(len(cum), np.searchsorted(cum, p - 1e-12) + 1))


def rank_of(probs: np.ndarray, token_id: int) -> int:
    """1 for the most probable token; ties share the better rank."""
    return int((probs > probs[token_id]).sum()) + 1


def candidate(probs: np.ndarray, token_id: int) -> dict:
    return {"id": int(token_id), "text": tokenizer.readable(int(token_id)), "prob": float(probs[token_id]),
            "rank": rank_of(probs, int(token_id))}


def vote_facts(bundle) -> dict:
    """Everything chapter 04 shows, from the last row of logits."""
    z = bundle["logits"][-1].astype(np.float64)
    probs = softmax64(z)
    order = np.argsort(-probs, kind="stable")
    top = [candidate(probs, i) for i in order[:N_BARS]]
    temps = []
    for t in TEMPERATURES:
        q = softmax64(z, t)
        q_order = np.argsort(-q, kind="stable")[:N_TEMP_BARS]
        temps.append({"t": t, "top": float(q.max()), "entropy": entropy(q),
                      "ids": [int(i) for i in q_order], "texts": [tokenizer.readable(int(i)) for i in q_order],
                      "probs": [float(q[i]) for i in q_order]})
    kept = probs[order[:TOP_K]]
    watch = bundle.meta.get("watch")
    sample = bundle.meta["sample"]
    return {
        "probs": probs,
        "order": order,
        "top": top,
        "top_mass": float(probs[order[:N_BARS]].sum()),
        "n_p": nucleus_size(probs, TOP_P),
        "temps": temps,
        "topk": [float(x) for x in kept / kept.sum()],
        "watch": (dict(candidate(probs, watch["id"]), asked=watch["text"]) if watch else None),
        "greedy": candidate(probs, order[0]),
        "sample": dict(candidate(probs, sample["id"]), seed=sample["seed"], temperature=sample["temperature"]),
        "max_entropy": math.log(len(probs)),
    }
