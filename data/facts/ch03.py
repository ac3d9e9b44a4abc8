"""Chapter 03 facts: many heads, the MLP, the stack of layers, the logit lens.

Every figure is read from the bundle or the config; scenes/ch03_stack.py and
voiceover/scripts/ch03.py both use these, so the screen and the narration can never disagree.
"""
from __future__ import annotations

import numpy as np

from data import tokenizer
from data.flops import Shape, parameter_counts


HABIT_SHARE = 0.5      # a head "mostly reads" a target that holds at least half of its rows
HEAD_PANELS = 12       # at most this many heads' panels on screen at once (GPT-2 small's twelve)


def head_panels(bundle, featured: int, limit: int = HEAD_PANELS) -> list[int]:
    """The heads of a layer chapter 03 lays out side by side (and its narration counts): all of them
    when they fit, else `limit` consecutive heads holding the featured one, as near head 1 as they
    can be (GPT-2 XL's 25 heads, head 18 followed: heads 7-18)."""
    H = bundle.shape.n_head
    if H <= limit:
        return list(range(H))
    start = min(max(0, featured - limit + 1), H - limit)
    return list(range(start, start + limit))


def head_habits(bundle, layer: int = 0) -> list[dict]:
    """What each head of `layer` mostly reads, from its own weights: the "first token", the "token
    before" (the previous one), "itself", or "spread out" when no one target stands out.
    Averaged over the rows that have a choice (every token after the first; row 0 can read only
    itself), a habit's target must hold at least HABIT_SHARE of a row and twice what an even
    spread would give it.
    Returns per head {"head", "habit", "share"} (share: the largest target's average weight)."""
    p = bundle["probs"][layer].astype(np.float64)            # [H, T, T], rows sum to 1
    H, T = p.shape[0], p.shape[1]
    if T < 2:
        return [{"head": h, "habit": "itself", "share": 1.0} for h in range(H)]
    rows = np.arange(1, T)                                    # the queries that have a choice
    even = float(np.mean(1.0 / (rows + 1)))                   # a target's weight under an even spread
    habits = []
    for h in range(H):
        shares = {"first token": p[h, rows, 0].mean(), "token before": p[h, rows, rows - 1].mean(),
                  "itself": p[h, rows, rows].mean()}
        name, share = max(shares.items(), key=lambda kv: kv[1])
        if share < max(HABIT_SHARE, 2 * even):
            name = "spread out"
        habits.append({"head": h, "habit": name, "share": float(share)})
    return habits


def mlp_facts(bundle, layer: int = 0) -> dict:
    """The last token's MLP in `layer`: input, hidden activations, output and the sign counts."""
    last = bundle.T - 1
    hidden = bundle["mlp_hidden"][layer, last].astype(np.float64)
    return {
        "layer": layer,
        "token": last,
        "x": bundle["ln2"][layer, last],
        "pre": bundle["mlp_pre"][layer, last],
        "hidden": hidden,
        "out": bundle["mlp_out"][layer, last],
        "n_pos": int((hidden > 0).sum()),
        "n_neg": int((hidden < 0).sum()),
        "n_zero": int((hidden == 0).sum()),
        "min": float(hidden.min()),
        "max": float(hidden.max()),
    }


def param_facts(bundle) -> dict:
    """Parameters of one layer's attention and MLP (weights + biases), from the config."""
    counts = parameter_counts(Shape.from_config(bundle.config), bundle.config["n_positions"])
    attn, mlp = counts["attention_per_layer"], counts["mlp_per_layer"]
    return {"attention": attn, "mlp": mlp, "ratio": mlp / attn}


def lens_facts(bundle) -> list[dict]:
    """The logit lens, bottom floor first: top-1 id, text and probability after each layer."""
    ids, probs = bundle["lens_ids"], bundle["lens_probs"]
    rows = []
    for l in range(ids.shape[0]):
        i = int(ids[l, 0])
        rows.append({"layer": l, "id": i, "text": tokenizer.readable(i), "prob": float(probs[l, 0])})
    return rows


def settle_layer(rows: list[dict]) -> int:
    """Index of the lowest layer from which the top guess equals the last layer's, all the way up."""
    final = rows[-1]["id"]
    k = len(rows) - 1
    while k > 0 and rows[k - 1]["id"] == final:
        k -= 1
    return k
