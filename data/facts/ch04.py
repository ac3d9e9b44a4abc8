"""Chapter 04 facts: the last row, the tied unembedding, the softmax vote, shaping and picking.

`vote_facts(bundle)` computes everything the chapter shows from the bundle's last row of
logits (temperatures, entropies, the top-p count, ranks); scenes/ch04_vote.py and
voiceover/scripts/ch04.py both use it, so screen and narration agree by construction.

The die roll (`roll`): the bundle's `sample` is a real draw, made at extraction by
torch.multinomial with the stored seed, which races exponential clocks and keeps no single
number. The film draws a sampled token the way a lecturer explains it, as one uniform number
u in [0, 1) landing in the token's slice of the cumulative probability bar. `roll_point`
places u inside the sampled token's slice (at a fraction of the slice drawn from the same
seed), so u is a uniform number whose slice is exactly the token torch drew: the token is the
bundle's, the number is one roll that gives it.

The token of interest is the bundle's meta["watch"], chosen at extraction: the prompt's
entry in onepass.data.extract.DEFAULT_WATCH (" mat" for "The cat sat on the") or render.py's
--watch TOKEN (one token of the model's own vocabulary, or 'none'). Token texts are the model's own
tokenizer's (bundle.tokenizer: GPT-2's module for the GPT-2 family).
"""
from __future__ import annotations

import math

import numpy as np

from onepass.data import tokenizer

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


def top_order(values: np.ndarray, n: int) -> np.ndarray:
    """np.argsort(-values, kind="stable")[:n] (the n largest, ties in index order) without sorting the
    whole vocabulary: every value tied with the n-th largest is a candidate, and only they are sorted."""
    values = np.asarray(values)
    if not 0 < n < len(values):
        return np.argsort(-values, kind="stable")[:max(n, 0)]
    nth = np.partition(values, len(values) - n)[len(values) - n]
    candidates = np.flatnonzero(values >= nth)              # ascending: ties stay in index order
    return candidates[np.argsort(-values[candidates], kind="stable")][:n]


def rank_of(probs: np.ndarray, token_id: int) -> int:
    """1 for the most probable token; ties share the better rank."""
    return int((probs > probs[token_id]).sum()) + 1


def candidate(probs: np.ndarray, token_id: int, tok=tokenizer) -> dict:
    return {"id": int(token_id), "text": tok.readable(int(token_id)), "prob": float(probs[token_id]),
            "rank": rank_of(probs, int(token_id))}


def roll_point(probs: np.ndarray, order: np.ndarray, token_id: int, seed: int) -> dict:
    """Where a uniform roll that picks `token_id` lies on the cumulative bar (tokens in `order`):
    the slice [start, end) of the token and a point u inside it (see the module's docstring)."""
    rank = int(np.nonzero(order == token_id)[0][0]) + 1
    start = float(np.asarray(probs, dtype=np.float64)[order[:rank - 1]].sum())
    width = float(probs[token_id])
    frac = float(np.random.default_rng(seed).random())
    return {"u": start + width * frac, "start": start, "end": start + width, "rank": rank}


def greedy_run(bundle) -> dict:
    """The greedy continuation stored in the bundle (meta['generated'], the top token each step)
    and how many of its tokens repeat one it wrote before (a loop, the trap of always the top)."""
    gen = bundle.meta["generated"]
    ids = [int(g["id"]) for g in gen]
    repeats = sum(1 for i, t in enumerate(ids) if t in ids[:i])
    return {"ids": ids, "texts": [bundle.tokenizer.readable(i) for i in ids], "repeats": repeats,
            "repeated": [t in ids[:i] for i, t in enumerate(ids)]}


def agreement(bundle) -> list[dict]:
    """The tied unembedding read on the rows the bundle holds: the prompt's own tokens' embeddings
    (wte_rows) against the last row after the final LayerNorm. Each score is a dot product, and it
    is that token's logit (the unembedding is the embedding table, used transposed). One entry per
    distinct token, best agreement first: text, id, score, the products dimension by dimension."""
    h = np.asarray(bundle["ln_f"][-1], dtype=np.float64)
    rows = np.asarray(bundle["wte_rows"], dtype=np.float64)
    out, seen = [], set()
    for i, tid in enumerate(bundle.ids):
        if int(tid) in seen:
            continue
        seen.add(int(tid))
        products = h * rows[i]
        out.append({"id": int(tid), "text": bundle.tokens[i], "row": rows[i], "products": products,
                    "score": float(products.sum()), "logit": float(bundle["logits"][-1][int(tid)])})
    return sorted(out, key=lambda r: -r["score"])


def vote_facts(bundle) -> dict:
    """Everything chapter 04 shows, from the last row of logits."""
    tok = bundle.tokenizer
    z = bundle["logits"][-1].astype(np.float64)
    probs = softmax64(z)
    order = np.argsort(-probs, kind="stable")
    top = [candidate(probs, i, tok) for i in order[:N_BARS]]
    temps = []
    for t in TEMPERATURES:
        q = softmax64(z, t)
        q_order = top_order(q, N_TEMP_BARS)
        temps.append({"t": t, "top": float(q.max()), "entropy": entropy(q),
                      "ids": [int(i) for i in q_order], "texts": [tok.readable(int(i)) for i in q_order],
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
        "watch": (dict(candidate(probs, watch["id"], tok), asked=watch["text"]) if watch else None),
        "greedy": candidate(probs, order[0], tok),
        "sample": dict(candidate(probs, sample["id"], tok), seed=sample["seed"], temperature=sample["temperature"]),
        "max_entropy": math.log(len(probs)),
        "roll": roll_point(probs, order, sample["id"], sample["seed"]),
        "greedy_run": greedy_run(bundle),
        "table_params": bundle.shape.vocab * bundle.shape.n_embd,
        "h": np.asarray(bundle["ln_f"][-1], dtype=np.float64),
        "agree": agreement(bundle),
    }


def unembed_rank(ledger) -> dict:
    """Where the unembedding stands in the ledger's pass: whether it is the single costliest product
    (more FLOPs than any other entry) and whether it costs more than a whole layer (its attention and
    MLP together, the costliest layer's), with the figures compared. True for GPT-2 small on a short
    prompt (77.2M against a layer's 70.9M at 5 tokens); a longer prompt's layers overtake it, since
    they grow with every token and the unembedding reads only the last row."""
    unembed = ledger["unembed"].flops
    others = max((e.flops for e in ledger.entries if e.key != "unembed"), default=0)
    layers = {e.layer for e in ledger.entries if e.layer is not None}
    layer = max((ledger.layer_flops(i) for i in layers), default=0)
    return {"unembed": unembed, "next_costliest": others, "layer_flops": layer,
            "costliest": unembed > others, "over_layer": unembed > layer}
