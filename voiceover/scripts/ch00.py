"""Chapter 00 narration: text -> tokens -> ids. Every figure comes from data/facts/ch00.py
(the bundle and the real GPT-2 tokenizer files), never from this file."""
from __future__ import annotations

from data.facts.ch00 import OTHER_LANGUAGE_NAME, token_facts
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_token

# Ids read out one by one up to this many tokens; longer prompts get first and last.
SPOKEN_IDS = 6

LINES = [
    Line("intro", "A language model never reads letters. Our prompt has {n_words} and {chars} characters, and "
                  "before any arithmetic a tokenizer cuts it into pieces."),
    Line("split", "GPT-2's tokenizer cuts it into {T_tokens}. The dot marks a leading space: the space is part "
                  "of the word that follows it."),
    Line("ids", "Each piece is swapped for its number in the vocabulary: {ids_spoken}. This list of {T} "
                "integers is all the model receives. The meter reads zero: cutting and looking up is not "
                "arithmetic."),
    Line("case", "Case and spacing live inside the id. Capital “The” is {id_cap}; “the” with a leading space "
                 "is {id_space}; “the” with no space is {id_bare}. Three different tokens, and the letters "
                 "inside them are invisible to the model."),
    Line("bytes", "Where do the pieces come from? From byte-pair encoding. Take {word} from our prompt: it "
                  "starts as {word_bytes} single bytes."),
    Line("merges", "A merge list, learned from text, fuses neighbouring pairs, the earliest-learned pair "
                   "first. {merge_outcome}"),
    Line("vocab", "That is the whole vocabulary: {n_byte_tokens} bytes, plus {n_merges} merges, plus "
                  "{n_special} end-of-text marker. {vocab_total} tokens in all."),
    Line("ratio", "A tokenizer is a compressor. {chars} characters became {T_tokens}: {cpt} characters per "
                  "token. Read letter by letter, the same prompt would take {chars} steps instead of {T}."),
    Line("other", "Other languages pay more. A greeting in {other_name} from the lecture has {other_chars} "
                  "characters and costs {other_T} tokens, {other_cpt} characters per token. {other_partial} "
                  "of those tokens are loose bytes, fragments of one letter. GPT-2 learned its merges mostly "
                  "from English text."),
]


def plural(n: int, word: str) -> str:
    return f"{spoken_count(n)} {word}{'' if n == 1 else 's'}"


def spoken_ratio(x: float) -> str:
    return f"{x:.1f}"


def spoken_word(symbols_text: str) -> str:
    return spoken_token(symbols_text)


def values(bundle, ledger) -> dict:
    f = token_facts(bundle)
    lad = f["ladder"]
    ids, toks = f["ids"], f["tokens"]
    if len(ids) <= SPOKEN_IDS:
        ids_spoken = ", ".join(str(i) for i in ids)
    else:
        ids_spoken = (f"{ids[0]} for {spoken_token(toks[0])}, and so on up to {ids[-1]} for "
                      f"{spoken_token(toks[-1])}")
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
        "chars": spoken_count(f["chars"]),
        "n_words": plural(f["words"], "word"),
        "T": spoken_count(f["T"]),
        "T_tokens": plural(f["T"], "token"),
        "ids_spoken": ids_spoken,
        "id_cap": f["case_ids"][0],
        "id_space": f["case_ids"][1],
        "id_bare": f["case_ids"][2],
        "word": word,
        "word_bytes": spoken_count(lad["n_bytes"]),
        "merge_outcome": outcome,
        "n_byte_tokens": spoken_count(vf.byte_tokens),
        "n_merges": spoken_count(vf.merges),
        "vocab_total": spoken_count(vf.total),
        "n_special": spoken_count(vf.special),
        "cpt": spoken_ratio(f["cpt"]),
        "other_name": OTHER_LANGUAGE_NAME,
        "other_chars": spoken_count(f["other_chars"]),
        "other_T": spoken_count(len(f["other_ids"])),
        "other_cpt": spoken_ratio(f["other_cpt"]),
        "other_partial": spoken_count(f["other_partial"]),
    }
