"""Chapter 00 narration: text -> tokens -> ids. Every figure comes from data/facts/ch00.py
(the bundle and the real GPT-2 tokenizer files), never from this file; every word from the
catalog (words/catalogs/<lang>/ch00.po)."""
from __future__ import annotations

from onepass.data.facts.ch00 import token_facts
from onepass.words.numbers import fmt_ratio, spoken_count, spoken_token

# Ids read out one by one up to this many tokens; longer prompts get first and last (a line reads
# at most about three numbers: the rest are on screen).
SPOKEN_IDS = 2


def counted(n: int, message: str, words) -> str:
    """n with its noun, in the plural form n takes: '5 tokens', '1 merge' (message: ch00:<noun>-count)."""
    return words.text(message, count=n, n=spoken_count(n, words))


def ids_said(ids: list[int], tokens: list[str], words) -> str:
    """The ids read out: all of them for a short prompt, else the first and the last with their tokens."""
    if len(ids) <= SPOKEN_IDS:
        return words.text("ch00:id-list-separator").join(str(i) for i in ids)
    return words.text("ch00:ids-first-last", first=ids[0], first_token=spoken_token(tokens[0], words),
                      last=ids[-1], last_token=spoken_token(tokens[-1], words))


def merge_outcome(lad: dict, words) -> str:
    """The sentence that ends the merge replay: one byte already, one token, or several left."""
    word = spoken_token(lad["word"], words)
    n_merges = len(lad["merges"])
    if n_merges == 0:
        return words.text("ch00:outcome-no-merge", word=word, id=lad["ids"][0])
    merges = counted(n_merges, "ch00:merge-count", words)
    if len(lad["ids"]) == 1:
        return words.text("ch00:outcome-one-token", merges=merges, word=word, id=lad["ids"][0])
    return words.text("ch00:outcome-tokens", merges=merges, word=word,
                      tokens=counted(len(lad["ids"]), "ch00:token-count", words))


def word_whole(lad: dict, words) -> str:
    """'“cat” is one token', or, for a word the merges leave in pieces, '“x” is 2 tokens'."""
    word = spoken_token(lad["word"], words)
    if len(lad["ids"]) == 1:
        return words.text("ch00:word-whole", word=word)
    return words.text("ch00:word-pieces", word=word, tokens=counted(len(lad["ids"]), "ch00:token-count", words))


def values(bundle, ledger, words) -> dict:
    f = token_facts(bundle)
    lad = f["ladder"]
    vf = f["vocab"]
    return {
        "prompt": spoken_token(bundle.prompt, words),     # the audio description reads it out
        "chars": spoken_count(f["chars"], words),
        "n_words": counted(f["words"], "ch00:word-count", words),
        "T": spoken_count(f["T"], words),
        "T_tokens": counted(f["T"], "ch00:token-count", words),
        "ids_spoken": ids_said(f["ids"], f["tokens"], words),
        "id_cap": f["case_ids"][0],
        "id_space": f["case_ids"][1],
        "id_bare": f["case_ids"][2],
        "word": spoken_token(lad["word"], words),
        "word_bytes": spoken_count(lad["n_bytes"], words),
        "common_word": word_whole(lad, words),
        "typo": spoken_token(f["typo"], words),
        "typo_tokens": counted(len(f["typo_ids"]), "ch00:token-count", words),
        "first_token": spoken_token(f["tokens"][0], words),
        "first_id": f["ids"][0],
        "merge_outcome": merge_outcome(lad, words),
        "n_byte_tokens": spoken_count(vf.byte_tokens, words),
        "n_merges": spoken_count(vf.merges, words),
        "vocab_total": spoken_count(vf.total, words),
        "n_special": spoken_count(vf.special, words),
        "cpt": fmt_ratio(f["cpt"]),
        "other_name": words.text("ch00:other-language"),
        "other_chars": spoken_count(f["other_chars"], words),
        "other_T": spoken_count(len(f["other_ids"]), words),
        "other_cpt": fmt_ratio(f["other_cpt"]),
        "other_partial": spoken_count(f["other_partial"], words),
    }
