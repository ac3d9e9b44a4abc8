"""Chapter 01 narration: why an id becomes a vector, how training filled the table, meaning as
direction, why positions are added, and the residual stream. Every figure is read
from data/facts/ch01.py (config, parameter counts, embedding rows, cosine pairs) or the ledger;
every word from the catalog (words/catalogs/<lang>/ch01.po)."""
from __future__ import annotations

from onepass.data.facts.ch01 import embed_facts, rope_speeds
from onepass.voiceover.scripts.lists import SAID_TOP, said_list
from onepass.words.numbers import fmt_fixed, fmt_whole, spoken_count, spoken_signed, spoken_token


def spoken_cos(c: float, words) -> str:
    """A cosine as said aloud: two decimals, 'minus' for negatives."""
    return spoken_signed(c, 2, words)


def pairs_said(pairs: list[dict], words) -> str:
    """'king and queen score 0.71, man and woman score 0.52, and ...': every pair with its cosine."""
    said = [words.text("ch01:pair-score", a=p["a"], b=p["b"], said=spoken_cos(p["cosine"], words))
            for p in pairs]
    if len(said) == 1:
        return said[0]
    return (words.text("ch01:list-separator").join(said[:-1]) + words.text("ch01:list-last-separator")
            + said[-1])


def values(bundle, ledger, words) -> dict:
    f = embed_facts(bundle)
    pairs = f["cosine"]
    cos = [p["cosine"] for p in pairs]
    ids, toks = f["ids"], bundle.tokens
    featured = f["featured"]
    out = {
        "high_id": ids["high_id"], "low_id": ids["low_id"],
        "high_token": spoken_token(toks[ids["high"]], words), "low_token": spoken_token(toks[ids["low"]], words),
        "a_word": featured["a"], "b_word": featured["b"],
        "degrees": fmt_whole(f["featured_angle"]), "pair_cos": spoken_cos(featured["cosine"], words),
        "V": spoken_count(f["V"], words), "d": spoken_count(f["d"], words), "P": spoken_count(f["P"], words),
        "T": spoken_count(f["T"], words), "n_layer": spoken_count(f["n_layer"], words),
        "wte_params": spoken_count(f["wte_params"], words),
        "wte_pct": fmt_fixed(100 * f["wte_share"], 0),
        "row_id": f["row_id"], "row_token": spoken_token(f["row_token"], words),
        # the description's numbers (issue 53): the row's first numbers, as its cells write them (2 decimals)
        "row_first": said_list([spoken_signed(float(x), 2, words) for x in bundle["wte_rows"][f["row_index"]][:SAID_TOP]],
                               words),
        "pairs_spoken": pairs_said(f["spoken_pairs"], words),
        "n_pairs": spoken_count(len(pairs), words),
        "cos_min": spoken_cos(min(cos), words), "cos_max": spoken_cos(max(cos), words),
        "P_shown": spoken_count(f["P_shown"], words),
    }
    if bundle.shape.has_position_table:       # a learned position table: its T x d additions
        out["pos_flops"] = spoken_count(ledger["positions"].flops, words)
    if not bundle.shape.has_position_table:   # RoPE: the rotation's speeds against the trained length
        r = rope_speeds(bundle)
        out.update({"rope_pairs": spoken_count(r["pairs"], words),
                    "turn_fast": spoken_count(int(round(r["fast"])), words),
                    "turn_slow": spoken_count(int(round(r["slow"])), words),
                    "unfinished": spoken_count(r["unfinished"], words),
                    "stretch_factor": spoken_count(int(round(r["stretch_factor"])), words)})
    return out
