"""Chapter 00 narration: text -> tokens -> ids. Every figure comes from the bundle or from
the real GPT-2 tokenizer files (the vocabulary and the merge list), never from this file."""
from __future__ import annotations

from data import tokenizer
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_token

# The lecture seed's non-English example (a greeting in Urdu); its token count is computed.
OTHER_LANGUAGE = "السلام علیکم"
OTHER_LANGUAGE_NAME = "Urdu"
# The three spellings compared in the "same word, three ids" beat (ids looked up, not typed).
CASE_WORDS = ("The", " the", "the")
# The merge ladder stays legible up to this many merges and bytes.
MAX_MERGES_SHOWN = 7
MAX_WORD_BYTES = 12
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
                  "characters and costs {other_T} tokens, {other_cpt} characters per token; {other_partial} "
                  "of those tokens are loose bytes, fragments of one letter. GPT-2 learned its merges mostly "
                  "from English text."),
]


def plural(n: int, word: str) -> str:
    return f"{spoken_count(n)} {word}{'' if n == 1 else 's'}"


def merge_ladder(word: str) -> dict:
    """The real merge replay of one pre-token, with the vocab.bpe rank of every merge."""
    steps = tokenizer.bpe_replay(word)
    ranks = tokenizer.merge_ranks()
    merges = []
    for before, after in zip(steps, steps[1:]):
        # the merged pair is the first symbol of `after` that is not in `before` at that place
        i = 0
        while i < len(after) and after[i] == before[i]:
            i += 1
        pair = (before[i], before[i + 1])
        merges.append({"pair": pair, "merged": pair[0] + pair[1], "rank": ranks[pair], "index": i})
    final = steps[-1]
    return {"word": word, "steps": steps, "merges": merges,
            "ids": [tokenizer.symbol_id(s) for s in final], "n_bytes": len(word.encode("utf-8"))}


def pick_word(prompt: str) -> dict:
    """The prompt word to rebuild: one that ends as a single token, with the most merges that fit."""
    words = tokenizer.pre_tokens(prompt)
    ladders = [merge_ladder(w) for w in words]

    def score(lad):
        fits = len(lad["merges"]) <= MAX_MERGES_SHOWN and lad["n_bytes"] <= MAX_WORD_BYTES
        return (fits, len(lad["ids"]) == 1, len(lad["merges"]) if fits else -len(lad["merges"]))
    best = max(range(len(ladders)), key=lambda i: (score(ladders[i]), -i))
    return ladders[best]


def case_ids() -> list[int]:
    """Ids of "The", " the", "the" in the real vocabulary (each is a single token in GPT-2)."""
    return [tokenizer.encode(w)[0] for w in CASE_WORDS]


def partial_byte_tokens(ids: list[int]) -> int:
    """Tokens that are not whole characters (a piece of one UTF-8 character)."""
    n = 0
    for i in ids:
        try:
            tokenizer.token_bytes(i).decode("utf-8")
        except UnicodeDecodeError:
            n += 1
    return n


def token_facts(bundle) -> dict:
    """Everything chapter 00 shows, shared by the scenes and the script."""
    prompt = bundle.prompt
    other_ids = tokenizer.encode(OTHER_LANGUAGE)
    vf = tokenizer.vocab_facts()
    return {
        "prompt": prompt,
        "chars": len(prompt),
        "words": len(prompt.split()),
        "T": bundle.T,
        "ids": list(bundle.ids),
        "tokens": list(bundle.tokens),
        "cpt": len(prompt) / bundle.T,
        "case_words": CASE_WORDS,
        "case_ids": case_ids(),
        "ladder": pick_word(prompt),
        "vocab": vf,
        "other_text": OTHER_LANGUAGE,
        "other_ids": other_ids,
        "other_chars": len(OTHER_LANGUAGE),
        "other_cpt": len(OTHER_LANGUAGE) / len(other_ids),
        "other_partial": partial_byte_tokens(other_ids),
    }


def fmt_ratio(x: float) -> str:
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
        "cpt": fmt_ratio(f["cpt"]),
        "other_name": OTHER_LANGUAGE_NAME,
        "other_chars": spoken_count(f["other_chars"]),
        "other_T": spoken_count(len(f["other_ids"])),
        "other_cpt": fmt_ratio(f["other_cpt"]),
        "other_partial": spoken_count(f["other_partial"]),
    }
