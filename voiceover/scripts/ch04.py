"""Chapter 04 narration: the last row, the tied unembedding, the softmax vote, shaping and picking.

Every figure comes from data/facts/ch04.py (`vote_facts`: temperatures, entropies, the
top-p count, ranks, the token of interest), which scenes/ch04_vote.py reads too, so screen
and narration agree by construction.
"""
from __future__ import annotations

from onepass.data.facts.ch00 import model_title
from onepass.data.facts.ch04 import TOP_K, TOP_P, unembed_rank, vote_facts
from onepass.voiceover.scripts.lists import SAID_TOP, said_list
from onepass.words.numbers import (
    fmt_fixed, fmt_general, fmt_int, spoken_count, spoken_ordinal, spoken_prob, spoken_signed, spoken_token,
)

SURE_LOW, SURE_HIGH = 0.2, 0.6     # the favourite's share below which the model is called unsure, above which sure


def ordinal(n: int, words) -> str:
    """A rank as said: 3 -> 'third' (first to tenth are words in every language: Urdu's are never a
    digit with واں), 31 -> '31st' (English's rule picks which of the ordinal messages)."""
    if 1 <= n <= 10 and words.has(f"film:ordinal-{n}"):
        return spoken_ordinal(n, words)
    last = 0 if 10 <= n % 100 <= 20 else n % 10
    value = fmt_int(n)
    if last == 1:
        return words.text("ch04:ordinal-st", n=value)
    if last == 2:
        return words.text("ch04:ordinal-nd", n=value)
    if last == 3:
        return words.text("ch04:ordinal-rd", n=value)
    return words.text("ch04:ordinal-th", n=value)


def unembed_cost(ledger, words) -> str:
    """The sentence that prices the unembedding: said to be the pass's costliest product, and dearer
    than a whole layer, only when the ledger makes it so (data/facts/ch04.py `unembed_rank`)."""
    r = unembed_rank(ledger)
    flops = spoken_count(r["unembed"], words)
    if r["costliest"] and r["over_layer"]:
        return words.text("ch04:cost-costliest-layer", flops=flops)
    if r["costliest"]:
        return words.text("ch04:cost-costliest", flops=flops)
    return words.text("ch04:cost-plain", flops=flops)


def values(bundle, ledger, words) -> dict:
    shape = bundle.shape
    f = vote_facts(bundle)
    top, temps = f["top"], f["temps"]
    n_p = f["n_p"]
    out = {
        "T": bundle.T,
        "T_next": bundle.T + 1,
        # the modern decoder's wording (ch04-<beat>.rope) names the model (a proper name, every language)
        "model_title": model_title(bundle) if bundle.arch != "gpt2" else "",
        "d": shape.n_embd,
        "V": fmt_int(shape.vocab),
        "last_token": spoken_token(bundle.tokens[-1], words),
        "unembed_flops": spoken_count(ledger["unembed"].flops, words),
        "unembed_cost": unembed_cost(ledger, words),
        "total_flops": spoken_count(ledger.total, words),
        "even_p": spoken_prob(1 / shape.vocab, words),
        "n_bars": len(top),
        "top_mass": spoken_prob(f["top_mass"], words),
        "n_p": fmt_int(n_p),
        "n_p_tokens": words.text("ch04:n-tokens", count=n_p, n=fmt_int(n_p)),
        "n_layer": shape.n_layer,
        "p_pct": words.text("film:number-percent", value=fmt_general(100 * TOP_P)),
        "topp_note": (words.text("ch04:topp-note-more", n=len(top)) if n_p > len(top)
                      else words.text("ch04:topp-note-one") if n_p == 1
                      else words.text("ch04:topp-note-cut", n=n_p)),
        "k": TOP_K,
        "topk_top1_p": spoken_prob(f["topk"][0], words),
        "greedy": spoken_token(f["greedy"]["text"], words),
        "seed": f["sample"]["seed"],
        "sampled": spoken_token(f["sample"]["text"], words),
        "sampled_rank": fmt_int(f["sample"]["rank"]),
        "sampled_p": spoken_prob(f["sample"]["prob"], words),
        "roll": spoken_signed(f["roll"]["u"], 2 if f["roll"]["end"] - f["roll"]["start"] >= 0.01 else 4, words),
        "table_params": spoken_count(f["table_params"], words),
        "max_H": spoken_signed(f["max_entropy"], 1, words),
        "sure_note": words.text("ch04:sure-low" if top[0]["prob"] < SURE_LOW
                                else "ch04:sure-high" if top[0]["prob"] > SURE_HIGH else "ch04:sure-mid"),
    }
    run = f["greedy_run"]
    said = words.text("ch04:run-sep").join(spoken_token(t, words) for t in run["texts"]) if run["texts"] else ""
    out["loop_note"] = words.text("ch04:loop-seen" if run["repeats"] else "ch04:loop-not", run=said)
    # the description's numbers (issue 53): the top bars, each token with its probability
    out["top_probs"] = said_list([words.text("kit:describe-prob", token=spoken_token(c["text"], words),
                                             prob=spoken_prob(c["prob"], words)) for c in top[:SAID_TOP]], words)
    for i in range(3):
        c = top[min(i, len(top) - 1)]
        out[f"top{i + 1}"] = spoken_token(c["text"], words)
        out[f"top{i + 1}_p"] = spoken_prob(c["prob"], words)
    for i, t in enumerate(temps):
        out[f"t{i}"] = fmt_fixed(t["t"], 1)
        out[f"t{i}_top"] = spoken_prob(t["top"], words)
        out[f"t{i}_H"] = spoken_signed(t["entropy"], 2, words)
    w = f["watch"]
    # without a token of interest the 'interest' beat is skipped; its fields still need values
    out["watch"] = spoken_token(w["text"], words) if w else ""
    out["watch_rank"] = ordinal(w["rank"], words) if w else ""
    out["watch_p"] = spoken_prob(w["prob"], words) if w else ""
    return out
