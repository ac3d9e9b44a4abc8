"""Chapter 00 narration: text -> tokens -> ids. Every figure comes from data/facts/ch00.py
(the bundle and the model's own tokenizer files), never from this file; every word from the
catalog (words/catalogs/<lang>/ch00.po). A model that is not GPT-2 reads its lines' `.rope`
wording (the modern decoder's: its own tokenizer, GPT-2's beside it), whose values are below."""
from __future__ import annotations

from onepass.data.bundle import shown_text
from onepass.data.facts.ch00 import token_facts
from onepass.voiceover.scripts.lists import SAID_TOP, said_list
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


def first_ids(ids: list[int], tokens: list[str], words) -> str:
    """The description's ids (issue 53): the first SAID_TOP tiles, each token with its id ('“The” 464, …')."""
    return said_list([words.text("kit:describe-id", token=spoken_token(t, words), id=i)
                      for t, i in zip(tokens[:SAID_TOP], ids[:SAID_TOP])], words)


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


PART_MESSAGES = {"bytes": "ch00:part-bytes", "merges": "ch00:part-merges", "special": "ch00:part-special"}


def modern_values(f: dict, words) -> dict:
    """The values of the modern decoder's wording (`chNN-<beat>.rope`): the model's name, its
    begin-of-text token, its vocabulary's parts in id order, GPT-2's count of the same prompt, the
    table each vocabulary costs. Empty for GPT-2 (its lines name none of them)."""
    cmp = f["compare"]
    keys = ("model_title", "bos_sentence", "vocab_parts", "bytes_reach", "gpt2_T_tokens", "gpt2_compare",
            "table", "gpt2_table", "V", "d")
    if cmp is None:
        return dict.fromkeys(keys, "")
    vf = f["vocab"]
    parts = [words.text(PART_MESSAGES[kind], count=n, n=spoken_count(n, words)) for kind, n in f["vocab_order"]]
    n_gpt2 = len(cmp["gpt2_ids"])
    compare = ("ch00:gpt2-same" if n_gpt2 == cmp["text_T"] else
               "ch00:gpt2-more" if n_gpt2 > cmp["text_T"] else "ch00:gpt2-fewer")
    return {
        "model_title": cmp["model_title"],
        "bos_sentence": (words.text("ch00:bos-sentence", bos=spoken_token(cmp["bos"], words),
                                    T_tokens=counted(f["T"], "ch00:token-count", words)) if cmp["bos"] else ""),
        "vocab_parts": words.text("ch00:part-then").join(parts),
        "bytes_reach": (words.text("ch00:bytes-all", n=spoken_count(vf.byte_tokens, words)) if vf.byte_tokens >= 256
                        else words.text("ch00:bytes-most", n=spoken_count(vf.byte_tokens, words),
                                        total=spoken_count(256, words),
                                        missing=spoken_count(256 - vf.byte_tokens, words))),
        "gpt2_T_tokens": counted(n_gpt2, "ch00:token-count", words),
        "gpt2_compare": words.text(compare),
        "table": spoken_count(cmp["table"], words),
        "gpt2_table": spoken_count(cmp["gpt2_table"], words),
        "V": spoken_count(cmp["vocab"], words),
        "d": spoken_count(cmp["d"], words),
    }


def values(bundle, ledger, words) -> dict:
    f = token_facts(bundle)
    lad = f["ladder"]
    vf = f["vocab"]
    return {
        "prompt": spoken_token(shown_text(bundle.prompt), words),     # the audio description reads it out
        "chars": spoken_count(f["chars"], words),
        "n_words": counted(f["words"], "ch00:word-count", words),
        "T": spoken_count(f["T"], words),
        "T_tokens": counted(f["T"], "ch00:token-count", words),
        "ids_spoken": ids_said(f["ids"], f["tokens"], words),
        # the descriptions' numbers (issue 53): the tiles' tokens by name, the first tiles' ids
        "tokens": said_list([spoken_token(t, words) for t in f["tokens"]], words),
        "first_ids": first_ids(f["ids"], f["tokens"], words),
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
        # the prompt's own tokens (a begin-of-text token is counted apart): GPT-2's T
        "T_text_tokens": counted(f["compare"]["text_T"] if f["compare"] else f["T"], "ch00:token-count", words),
        **modern_values(f, words),
    }
