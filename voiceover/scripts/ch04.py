"""Chapter 04 narration: the last row, the tied unembedding, the softmax vote, shaping and picking.

Every figure comes from data/facts/ch04.py (`vote_facts`: temperatures, entropies, the
top-p count, ranks, the token of interest), which scenes/ch04_vote.py reads too, so screen
and narration agree by construction.
"""
from __future__ import annotations

from data.facts.ch04 import TOP_K, TOP_P, vote_facts
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_prob, spoken_token

LINES = [
    Line("last_row", "{n_layer} layers have refined {T} rows. Only the last one, for {last_token}, picks the next "
                     "token: it is the only row that has seen the whole prompt. The others have done their part, "
                     "as keys and values on the way up."),
    Line("unembed", "Its {d} numbers meet the embedding table from chapter one, used transposed. Out comes one "
                    "score for each of the {V} entries in the vocabulary. That one product costs {unembed_flops} "
                    "FLOPs. It brings the whole pass to {total_flops}."),
    Line("softmax", "A softmax turns the {V} scores into probabilities. The top candidate is {top1} at {top1_p}, "
                    "then {top2} at {top2_p} and {top3} at {top3_p}.",
         synthetic="A softmax turns the {V} scores into probabilities. The top candidate, {top1}, gets "
                   "{top1_p}. An even split would give each token {even_p}. These are random weights: none of "
                   "this is GPT-2's opinion."),
    Line("tail", "The tail is long. The top {n_bars} hold {top_mass} together. It takes {n_p_tokens} to hold "
                 "{p_pct} of the probability."),
    Line("interest", "And {watch}? It ranks {watch_rank}, with {watch_p}.",
         synthetic="And {watch}? With random weights it ranks {watch_rank}, with {watch_p}. The rank carries no "
                   "meaning here."),
    Line("temperature", "Temperature divides the scores before the softmax. At {t0}, the top token takes "
                        "{t0_top}, with an entropy of {t0_H} nats. At {t1}, {t1_top} and {t1_H}. At {t2}, "
                        "{t2_top} and {t2_H}. Low temperature sharpens the vote; high temperature flattens it."),
    Line("topk", "Top-k keeps a fixed shortlist. With k equal to {k}, only the first {k} bars survive. They are "
                 "renormalised to share all of the probability: {top1} rises from {top1_p} to {topk_top1_p}."),
    Line("topp", "Top-p keeps the smallest set that holds {p_pct} of the probability. Here that is {n_p_tokens}, "
                 "{topp_note}. The less sure the model, the longer that list."),
    Line("greedy", "Greedy decoding simply takes the top bar: {greedy}.",
         synthetic="Greedy decoding simply takes the top bar: {greedy}. With random weights, it is a pick of "
                   "noise."),
    Line("sample", "Sampling rolls a die against the odds instead. With seed {seed}, stored in the bundle, the roll "
                   "lands on {sampled}. That is rank {sampled_rank}, with probability {sampled_p}."),
    Line("append", "The greedy pick, {greedy}, is appended to the prompt. Chapter six sends these {T_next} tokens "
                   "through the whole pass again."),
]


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def values(bundle, ledger) -> dict:
    cfg = bundle.config
    f = vote_facts(bundle)
    top, temps = f["top"], f["temps"]
    n_p = f["n_p"]
    out = {
        "T": bundle.T,
        "T_next": bundle.T + 1,
        "d": cfg["n_embd"],
        "V": f"{cfg['vocab_size']:,}",
        "last_token": spoken_token(bundle.tokens[-1]),
        "unembed_flops": spoken_count(ledger["unembed"].flops),
        "total_flops": spoken_count(ledger.total),
        "even_p": spoken_prob(1 / cfg["vocab_size"]),
        "n_bars": len(top),
        "top_mass": spoken_prob(f["top_mass"]),
        "n_p": f"{n_p:,}",
        "n_p_tokens": f"{n_p:,} token" + ("" if n_p == 1 else "s"),
        "n_layer": cfg["n_layer"],
        "p_pct": f"{100 * TOP_P:g} percent",
        "topp_note": (f"far more than the {len(top)} bars on screen" if n_p > len(top)
                      else "the top bar alone" if n_p == 1 else f"so every bar below rank {n_p} is cut"),
        "k": TOP_K,
        "topk_top1_p": spoken_prob(f["topk"][0]),
        "greedy": spoken_token(f["greedy"]["text"]),
        "seed": f["sample"]["seed"],
        "sampled": spoken_token(f["sample"]["text"]),
        "sampled_rank": f"{f['sample']['rank']:,}",
        "sampled_p": spoken_prob(f["sample"]["prob"]),
    }
    for i in range(3):
        c = top[min(i, len(top) - 1)]
        out[f"top{i + 1}"] = spoken_token(c["text"])
        out[f"top{i + 1}_p"] = spoken_prob(c["prob"])
    for i, t in enumerate(temps):
        out[f"t{i}"] = f"{t['t']:.1f}"
        out[f"t{i}_top"] = spoken_prob(t["top"])
        out[f"t{i}_H"] = f"{t['entropy']:.2f}"
    w = f["watch"]
    # without a token of interest the 'interest' beat is skipped; its fields still need values
    out["watch"] = spoken_token(w["text"]) if w else ""
    out["watch_rank"] = ordinal(w["rank"]) if w else ""
    out["watch_p"] = spoken_prob(w["prob"]) if w else ""
    return out
