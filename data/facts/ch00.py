"""Chapter 00 facts: text -> tokens -> ids. Every figure comes from the bundle or from the model's
own tokenizer files (the vocabulary and the merge list): GPT-2's module (data/tokenizer.py) for the
GPT-2 family, the model's ModelTokenizer (data/arch/tokens.py: its own merges) for any other. A model
that is not GPT-2 also gets GPT-2's tokens of the same prompt beside its own (`compare`)."""
from __future__ import annotations

import regex

from onepass.data import tokenizer

# The lecture seed's non-English example (a greeting in Urdu); its token count is computed.
OTHER_LANGUAGE = "السلام علیکم"
# The three spellings compared in the "same word, three ids" beat (ids looked up, not typed).
CASE_WORDS = ("The", " the", "the")
# the word whose letters a model is famously asked to count (the case beat's consequence)
LETTERS_WORD, LETTER = "strawberry", "r"
# The merge ladder stays legible up to this many merges and bytes.
MAX_MERGES_SHOWN = 7
MAX_WORD_BYTES = 12


def merge_ladder(word: str, tok=tokenizer) -> dict:
    """The real merge replay of one pre-token, with the rank of every merge in the model's merge list."""
    steps = tok.bpe_replay(word)
    ranks = tok.merge_ranks()
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
            "ids": [tok.symbol_id(s) for s in final], "n_bytes": len(word.encode("utf-8"))}


def pick_word(prompt: str, tok=tokenizer) -> dict:
    """The prompt word to rebuild: one that ends as a single token, with the most merges that fit.

    When no word of the prompt fits (one long word, a run of emoji), the longest start of a word
    that does: its replay is still the real one, and the ladder stays legible."""
    words = tok.pre_tokens(prompt)
    ladders = [merge_ladder(w, tok) for w in words]
    # a BPE that takes a whole-token piece at once (Llama 3's ignore_merges) can end elsewhere than its
    # merges do: only a replay that ends on the tokenizer's own ids is shown (GPT-2's always does)
    agree = [lad for lad in ladders if lad["ids"] == tok.encode_plain(lad["word"])]
    if agree and len(agree) < len(ladders):
        words, ladders = [lad["word"] for lad in agree], agree

    def fits(lad):
        return len(lad["merges"]) <= MAX_MERGES_SHOWN and lad["n_bytes"] <= MAX_WORD_BYTES

    if not any(fits(lad) for lad in ladders):
        for w in words:
            starts = (w[:n] for n in range(len(w) - 1, 0, -1) if len(w[:n].encode("utf-8")) <= MAX_WORD_BYTES)
            lad = next((lad for lad in (merge_ladder(s, tok) for s in starts) if fits(lad)), None)
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


def case_ids(tok=tokenizer) -> list[int]:
    """Ids of "The", " the", "the" in the real vocabulary (each is a single token in GPT-2 and SmolLM2)."""
    return [tok.encode_plain(w)[0] for w in CASE_WORDS]


def partial_byte_tokens(ids: list[int], tok=tokenizer) -> int:
    """Tokens that are not whole characters (a piece of one UTF-8 character)."""
    n = 0
    for i in ids:
        try:
            tok.token_bytes(i).decode("utf-8")
        except UnicodeDecodeError:
            n += 1
    return n


def missing_bytes(tok=tokenizer) -> list[int]:
    """The byte values the vocabulary has no single-byte token for, in order (none for GPT-2; SmolLM2 lacks
    control codes and bytes UTF-8 never uses)."""
    have = set()
    for symbol in tok.byte_vocab():
        if len(symbol) == 1:
            try:
                have.add(tok.symbol_bytes(symbol)[0])
            except KeyError:        # a one-character token outside the byte alphabet: not a byte
                pass
    return [b for b in range(256) if b not in have]


def typo_of(word: str, tok=tokenizer) -> str:
    """A word no word list would hold: `word` with its last letter doubled (again, while GPT-2 still has
    the result as one token), so that byte-pair encoding must spell it from pieces."""
    typo = word + (word.strip()[-1:] or "x")
    while len(tok.encode_plain(typo)) < 2 and len(typo) < 4 * max(1, len(word)):
        typo += typo.strip()[-1:] or "x"
    return typo


def merge_rank_of(token_id: int, tok=tokenizer) -> int | None:
    """Where a token's merge sits in the merge list (0: the first merge learned), or None for a single
    byte or the end-of-text marker. GPT-2's ids after the 256 bytes are the merges, in the order
    they were learned. Another model's tokenizer looks its merge up (data/arch/tokens.py)."""
    if tok is not tokenizer:
        return tok.merge_rank_of(token_id)
    vf = tokenizer.vocab_facts()
    rank = token_id - vf.byte_tokens
    return rank if 0 <= rank < vf.merges else None


def vocab_order(tok=tokenizer) -> list[tuple[str, int]]:
    """The vocabulary's parts in id order: GPT-2's bytes, merges, end-of-text marker; SmolLM2's special
    tokens first."""
    if tok is tokenizer:
        vf = tokenizer.vocab_facts()
        return [("bytes", vf.byte_tokens), ("merges", vf.merges), ("special", vf.special)]
    return tok.vocab_order()


def model_title(bundle) -> str:
    """The model's name as its makers write it ('SmolLM2-135M-Instruct'), for a model outside the GPT-2
    family (a proper name: the same in every language)."""
    from onepass.data import arch
    return arch.model(bundle.meta["model_card"]["name"]).hub_id.rsplit("/", 1)[-1]


def compare_facts(bundle, tok) -> dict:
    """A model that is not GPT-2, set beside GPT-2 small: the same prompt's tokens under GPT-2's
    tokenizer, and the embedding table each vocabulary costs (rows x width)."""
    from onepass.data import models
    gpt2 = models.FAMILY["gpt2"]
    text_ids = tok.encode_plain(bundle.prompt)
    gpt2_ids = tokenizer.encode(bundle.prompt)
    return {
        "model_title": model_title(bundle),
        "bos": tok.bos_text if getattr(tok, "bos_id", None) is not None and bundle.ids[:1] == [tok.bos_id] else None,
        "bos_id": getattr(tok, "bos_id", None),
        "text_T": len(text_ids),
        "gpt2_ids": gpt2_ids,
        "gpt2_tokens": [tokenizer.readable(i) for i in gpt2_ids],
        "gpt2_vocab": tokenizer.vocab_size(),
        "gpt2_d": gpt2.n_embd,
        "gpt2_table": tokenizer.vocab_size() * gpt2.n_embd,
        "vocab": bundle.shape.vocab,
        "d": bundle.shape.n_embd,
        "table": bundle.shape.vocab * bundle.shape.n_embd,
    }


def token_facts(bundle) -> dict:
    """Everything chapter 00 shows, shared by the scenes and the script."""
    tok = bundle.tokenizer
    prompt = bundle.prompt
    other_ids = tok.encode_plain(OTHER_LANGUAGE)
    vf = tok.vocab_facts()
    ladder = pick_word(prompt, tok)
    typo = typo_of(ladder["word"], tok)
    typo_ids = tok.encode_plain(typo)
    chars = characters(prompt)
    compare = None if tok is tokenizer else compare_facts(bundle, tok)
    text_T = compare["text_T"] if compare else bundle.T      # the prompt's own tokens (no begin-of-text)
    return {
        "prompt": prompt,
        "chars": chars,
        "words": len(prompt.split()),
        "T": bundle.T,
        "ids": list(bundle.ids),
        "tokens": list(bundle.tokens),
        "cpt": len(prompt) / text_T,
        "case_words": CASE_WORDS,
        "case_ids": case_ids(tok),
        # the letters the model never sees: the word mid-sentence and on its own, as this tokenizer cuts it
        "letters": [(spelling, tok.encode_plain(spelling)) for spelling in (" " + LETTERS_WORD, LETTERS_WORD)],
        "letter": LETTER,
        "letter_count": LETTERS_WORD.count(LETTER),
        "ladder": ladder,
        # why not letters: attention compares every position with every other, T x T of them
        "pairs_tokens": bundle.T * bundle.T,
        "pairs_chars": chars * chars,
        # why not whole words: a word no list would hold, spelled from pieces
        "typo": typo,
        "typo_ids": typo_ids,
        "typo_bytes": list(typo.encode("utf-8")),
        # the ids are places in the vocabulary's list: the merges come in the order they were learned
        "id_ranks": [merge_rank_of(i, tok) for i in bundle.ids],
        "vocab": vf,
        "missing_bytes": missing_bytes(tok),
        "vocab_order": vocab_order(tok),
        "other_text": OTHER_LANGUAGE,
        "other_ids": other_ids,
        "other_chars": characters(OTHER_LANGUAGE),
        "other_cpt": len(OTHER_LANGUAGE) / len(other_ids),
        "other_partial": partial_byte_tokens(other_ids, tok),
        "compare": compare,
    }
