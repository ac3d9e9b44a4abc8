"""Chapter 00 facts: text -> tokens -> ids. Every figure comes from the bundle or from the
real GPT-2 tokenizer files (the vocabulary and the merge list)."""
from __future__ import annotations

import regex

from onepass.data import tokenizer

# The lecture seed's non-English example (a greeting in Urdu); its token count is computed.
OTHER_LANGUAGE = "السلام علیکم"
# The three spellings compared in the "same word, three ids" beat (ids looked up, not typed).
CASE_WORDS = ("The", " the", "the")
# The merge ladder stays legible up to this many merges and bytes.
MAX_MERGES_SHOWN = 7
MAX_WORD_BYTES = 12


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
    """The prompt word to rebuild: one that ends as a single token, with the most merges that fit.

    When no word of the prompt fits (one long word, a run of emoji), the longest start of a word
    that does: its replay is still the real one, and the ladder stays legible."""
    words = tokenizer.pre_tokens(prompt)
    ladders = [merge_ladder(w) for w in words]

    def fits(lad):
        return len(lad["merges"]) <= MAX_MERGES_SHOWN and lad["n_bytes"] <= MAX_WORD_BYTES

    if not any(fits(lad) for lad in ladders):
        for w in words:
            starts = (w[:n] for n in range(len(w) - 1, 0, -1) if len(w[:n].encode("utf-8")) <= MAX_WORD_BYTES)
            lad = next((lad for lad in map(merge_ladder, starts) if fits(lad)), None)
            if lad is not None:
                return lad

    def score(lad):
        ok = fits(lad)
        return (ok, len(lad["ids"]) == 1, len(lad["merges"]) if ok else -len(lad["merges"]))
    best = max(range(len(ladders)), key=lambda i: (score(ladders[i]), -i))
    return ladders[best]


def characters(text: str) -> int:
    """Characters as a reader counts them: grapheme clusters ('👍🏽' and 'é' as e + accent are one each)."""
    return len(regex.findall(r"\X", text))


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


def typo_of(word: str) -> str:
    """A word no word list would hold: `word` with its last letter doubled (again, while GPT-2 still has
    the result as one token), so that byte-pair encoding must spell it from pieces."""
    typo = word + (word.strip()[-1:] or "x")
    while len(tokenizer.encode(typo)) < 2 and len(typo) < 4 * max(1, len(word)):
        typo += typo.strip()[-1:] or "x"
    return typo


def merge_rank_of(token_id: int) -> int | None:
    """Where a token's merge sits in the merge list (0: the first merge learned), or None for a single
    byte or the end-of-text marker. GPT-2's ids after the 256 bytes are the merges, in the order
    they were learned."""
    vf = tokenizer.vocab_facts()
    rank = token_id - vf.byte_tokens
    return rank if 0 <= rank < vf.merges else None


def token_facts(bundle) -> dict:
    """Everything chapter 00 shows, shared by the scenes and the script."""
    prompt = bundle.prompt
    other_ids = tokenizer.encode(OTHER_LANGUAGE)
    vf = tokenizer.vocab_facts()
    ladder = pick_word(prompt)
    typo = typo_of(ladder["word"])
    typo_ids = tokenizer.encode(typo)
    chars = characters(prompt)
    return {
        "prompt": prompt,
        "chars": chars,
        "words": len(prompt.split()),
        "T": bundle.T,
        "ids": list(bundle.ids),
        "tokens": list(bundle.tokens),
        "cpt": len(prompt) / bundle.T,
        "case_words": CASE_WORDS,
        "case_ids": case_ids(),
        "ladder": ladder,
        # why not letters: attention compares every position with every other, T x T of them
        "pairs_tokens": bundle.T * bundle.T,
        "pairs_chars": chars * chars,
        # why not whole words: a word no list would hold, spelled from pieces
        "typo": typo,
        "typo_ids": typo_ids,
        "typo_bytes": list(typo.encode("utf-8")),
        # the ids are places in the vocabulary's list: the merges come in the order they were learned
        "id_ranks": [merge_rank_of(i) for i in bundle.ids],
        "vocab": vf,
        "other_text": OTHER_LANGUAGE,
        "other_ids": other_ids,
        "other_chars": characters(OTHER_LANGUAGE),
        "other_cpt": len(OTHER_LANGUAGE) / len(other_ids),
        "other_partial": partial_byte_tokens(other_ids),
    }
