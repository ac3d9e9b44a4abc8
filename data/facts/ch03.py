"""Chapter 03 facts: many heads, the MLP, the stack of layers, the logit lens.

Every figure is read from the bundle or the config; scenes/ch03_stack.py and
voiceover/scripts/ch03.py both use these, so the screen and the narration can never disagree.
"""
from __future__ import annotations

import numpy as np

from onepass.data.flops import parameter_counts


HABIT_SHARE = 0.5      # a head "mostly reads" a target that holds at least half of its rows
HEAD_PANELS = 12       # at most this many heads' panels on screen at once (GPT-2 small's twelve)


def head_panels(bundle, featured: int, limit: int = HEAD_PANELS) -> list[int]:
    """The heads of a layer chapter 03 lays out side by side (and its narration counts): all of them
    when they fit, else `limit` consecutive heads holding the featured one, as near head 1 as they
    can be (GPT-2 XL's 25 heads, head 18 followed: heads 7-18)."""
    shape = bundle.shape
    H = shape.n_head
    if H <= limit:
        return list(range(H))
    group = shape.group if shape.kv_heads < H and shape.group <= limit else 1
    limit -= limit % group               # grouped-query heads: whole groups, a group's first head first
    start = min(max(0, featured - limit + 1), H - limit)
    start -= start % group
    return list(range(start, start + limit))


def head_groups(bundle, heads: list[int]) -> list[list[int]]:
    """The heads shown (head_panels) in runs that share one key/value head (grouped-query attention:
    query head h reads key/value head Shape.kv_head_of(h)); one head per run when every head has its own."""
    runs: list[list[int]] = []
    for h in heads:
        if runs and bundle.shape.kv_head_of(h) == bundle.shape.kv_head_of(runs[-1][-1]):
            runs[-1].append(h)
        else:
            runs.append([h])
    return runs


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
    counts = parameter_counts(bundle.shape, bundle.shape.n_positions)
    attn, mlp = counts["attention_per_layer"], counts["mlp_per_layer"]
    return {"attention": attn, "mlp": mlp, "ratio": mlp / attn}


def lens_facts(bundle) -> list[dict]:
    """The logit lens, bottom floor first: top-1 id, text and probability after each layer."""
    ids, probs = bundle["lens_ids"], bundle["lens_probs"]
    rows = []
    for l in range(ids.shape[0]):
        i = int(ids[l, 0])
        rows.append({"layer": l, "id": i, "text": bundle.tokenizer.readable(i), "prob": float(probs[l, 0])})
    return rows


def settle_layer(rows: list[dict]) -> int:
    """Index of the lowest layer from which the top guess equals the last layer's, all the way up."""
    final = rows[-1]["id"]
    k = len(rows) - 1
    while k > 0 and rows[k - 1]["id"] == final:
        k -= 1
    return k


def token_mlp_rows(bundle, layer: int = 0, limit: int = 5) -> dict:
    """Each shown token's own path through `layer`'s MLP (the last `limit` tokens): its row in (the
    MLP's LayerNorm output), its hidden activations after GELU and its row out, one row per token.
    "vmax": per stage, the largest magnitude over the shown rows (one colour scale per stage).
    "mix": the layer's attention averaged over its heads between the shown tokens (what moved
    between them before the MLP), [i, j] for shown rows i and j."""
    T = bundle.T
    shown = list(range(max(0, T - limit), T))
    x = np.asarray(bundle["ln2"][layer], dtype=np.float64)[shown]
    h = np.asarray(bundle["mlp_hidden"][layer], dtype=np.float64)[shown]
    out = np.asarray(bundle["mlp_out"][layer], dtype=np.float64)[shown]
    mix = np.asarray(bundle["probs"][layer], dtype=np.float64).mean(axis=0)[np.ix_(shown, shown)]
    vmax = {k: float(np.abs(v).max()) or 1.0 for k, v in (("x", x), ("hidden", h), ("out", out))}
    return {"layer": layer, "tokens": shown, "x": x, "hidden": h, "out": out, "mix": mix, "vmax": vmax}


def norm_facts(bundle, layer: int = 0) -> dict:
    """LayerNorm on the last token's row as it enters `layer` (the first LayerNorm, before attention):
    the row, its mean and spread (standard deviation, as LayerNorm computes it), the row normalised to
    mean 0 and spread 1 (before the learned scale and shift), and the model's own output (ln1).
    "spread": the stream's spread entering every layer (the last row), "ln_spread": the spread of what
    each layer's attention reads after LayerNorm, "growth": the last layer's spread over the first's."""
    last = bundle.T - 1
    x = np.asarray(bundle["resid_pre"][layer, last], dtype=np.float64)
    eps = float(bundle.config.get("layer_norm_epsilon", 1e-5))
    mean, std = float(x.mean()), float(x.std())
    normed = (x - mean) / np.sqrt(std ** 2 + eps)
    spread = np.asarray(bundle["resid_pre"][:, last], dtype=np.float64).std(axis=-1)
    ln_spread = np.asarray(bundle["ln1"][:, last], dtype=np.float64).std(axis=-1)
    return {"layer": layer, "token": last, "x": x, "mean": mean, "std": std, "normed": normed,
            "ln": np.asarray(bundle["ln1"][layer, last], dtype=np.float64),
            "spread": [float(s) for s in spread], "ln_spread": [float(s) for s in ln_spread],
            "growth": float(spread[-1] / spread[0]) if spread[0] > 0 else 1.0}


def rms_facts(bundle, layer: int = 0) -> dict:
    """RMSNorm on the last token's row as it enters `layer` (the first RMSNorm, before attention): the
    row, its mean (left in place: RMSNorm takes no mean off), its root mean square (the bundle's own
    rms1, what the model divided by), the row divided by it (before the learned gain; its rms is 1) and
    the model's output (ln1). "rms": the stream's rms entering every layer (the last row, rms1),
    "read_rms": the rms of the row each layer divides out, after division (1 for every layer), "growth":
    the largest rms over the first layer's; "per_token": the rms of every token entering `layer`."""
    last = bundle.T - 1
    x = np.asarray(bundle["resid_pre"][layer, last], dtype=np.float64)
    rms_all = np.asarray(bundle["rms1"], dtype=np.float64)                 # [L, T]
    rms = float(rms_all[layer, last])
    normed = x / rms
    stream = rms_all[:, last]
    reads = [float(np.sqrt(np.mean((np.asarray(bundle["resid_pre"][l, last], dtype=np.float64) / stream[l]) ** 2)))
             for l in range(len(stream))]
    return {"layer": layer, "token": last, "x": x, "mean": float(x.mean()), "rms": rms, "normed": normed,
            "normed_mean": float(normed.mean()), "normed_rms": float(np.sqrt(np.mean(normed ** 2))),
            "ln": np.asarray(bundle["ln1"][layer, last], dtype=np.float64),
            "stream": [float(v) for v in stream], "reads": reads,
            "growth": float(stream.max() / stream[0]) if stream[0] > 0 else 1.0,
            "per_token": [float(v) for v in rms_all[layer]]}


def swiglu_facts(bundle, ledger, layer: int = 0) -> dict:
    """A gated MLP's three matrices against GPT-2's two: its width d_ff as a multiple of d, its
    parameters (3·d·d_ff), what two matrices at GPT-2's 4·d hold (2·d·4d), their ratio (1 when d_ff is
    8/3 of d), and the ledger's MLP share of one layer (mlp_gate + mlp_up + mlp_down over the layer)."""
    d, dff = bundle.shape.n_embd, bundle.shape.d_ff
    three, two = 3 * d * dff, 2 * d * 4 * d
    return {"width_ratio": dff / d, "three": three, "two_at_4d": two, "vs_two": three / two,
            "mlp_flops": ledger.mlp_flops(layer), "layer_flops": ledger.layer_flops(layer),
            "mlp_share": ledger.mlp_flops(layer) / ledger.layer_flops(layer)}


def histogram(values, lo: float, hi: float, bins: int) -> list[int]:
    """How many of `values` fall in each of `bins` equal bins over [lo, hi] (outside ones in the end bins)."""
    edges = np.linspace(lo, hi, bins + 1)
    counts, _ = np.histogram(np.clip(np.asarray(values, dtype=np.float64), lo, hi), bins=edges)
    return [int(c) for c in counts]
