"""Chapter 00 narration: text -> tokens -> ids. Every figure comes from data/facts/ch00.py
(the bundle and the real GPT-2 tokenizer files), never from this file."""
from __future__ import annotations

from data.facts.ch00 import OTHER_LANGUAGE_NAME, token_facts
from words.numbers import spoken_count, spoken_token

# Ids read out one by one up to this many tokens; longer prompts get first and last.
SPOKEN_IDS = 6


def plural(n: int, word: str) -> str:
    return f"{spoken_count(n, words)} {word}{'' if n == 1 else 's'}"


def spoken_ratio(x: float) -> str:
    return f"{x:.1f}"


def spoken_word(symbols_text: str) -> str:
    return spoken_token(symbols_text, words)


def values(bundle, ledger, words) -> dict:
    f = token_facts(bundle)
    lad = f["ladder"]
    ids, toks = f["ids"], f["tokens"]
    if len(ids) <= SPOKEN_IDS:
        ids_spoken = ", ".join(str(i) for i in ids)
    else:
        ids_spoken = (f"{ids[0]} for {spoken_token(toks[0], words)}, and so on up to {ids[-1]} for "
                      f"{spoken_token(toks[-1], words)}")
    word = spoken_word(lad["word"])
    n_merges = len(lad["merges"])
    if n_merges == 0:
        outcome = f"{word} is a single byte already, so there is nothing to merge: it is token {lad['ids'][0]}."
    elif len(lad["ids"]) == 1:
        outcome = f"After {plural(n_merges, 'merge')}, {word} is one token: id {lad['ids'][0]}."
    else:
        outcome = (f"After {plural(n_merges, 'merge')} no listed pair is left, and {word} stays "
                   f"{plural(len(lad['ids']), 'token')}.")
    vf = f["vocab"]
    return {
        "chars": spoken_count(f["chars"], words),
        "n_words": plural(f["words"], "word"),
        "T": spoken_count(f["T"], words),
        "T_tokens": plural(f["T"], "token"),
        "ids_spoken": ids_spoken,
        "id_cap": f["case_ids"][0],
        "id_space": f["case_ids"][1],
        "id_bare": f["case_ids"][2],
        "word": word,
        "word_bytes": spoken_count(lad["n_bytes"], words),
        "merge_outcome": outcome,
        "n_byte_tokens": spoken_count(vf.byte_tokens, words),
        "n_merges": spoken_count(vf.merges, words),
        "vocab_total": spoken_count(vf.total, words),
        "n_special": spoken_count(vf.special, words),
        "cpt": spoken_ratio(f["cpt"]),
        "other_name": OTHER_LANGUAGE_NAME,
        "other_chars": spoken_count(f["other_chars"], words),
        "other_T": spoken_count(len(f["other_ids"]), words),
        "other_cpt": spoken_ratio(f["other_cpt"]),
        "other_partial": spoken_count(f["other_partial"], words),
    }
