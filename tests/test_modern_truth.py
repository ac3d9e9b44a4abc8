"""No sentence only true of GPT-2 in a modern decoder's film (issue 49): every chapter 00-06, for the
real SmolLM2-135M-Instruct bundle and a tiny random one of its shape, in English: its narration lines
and descriptions name no position table, GELU, LayerNorm, GPT-2's vocabulary or context size, and
claim nothing of GPT-2 that is only GPT-2's. GPT-2 may be named as a comparison ("GPT-2's tokenizer
cuts the same prompt", "against 38.6 million for GPT-2 small").

Screen text is not covered here (it needs the scenes built): a chapter's own tests check its pictures.
Chapters that other work is still making true are marked xfail with the chapter named."""
from __future__ import annotations

import re

import pytest

from onepass.data import extract
from onepass.voiceover import script
from onepass.words.catalog import Words

# Phrases true of GPT-2 only (the learned position table, its GELU MLP and LayerNorm, its vocabulary
# and context: 1,024 as a length, not a count that happens to equal it, such as a tiny cache's
# numbers), and the GPT-2 wordings of lines that a modern decoder's film must word otherwise.
GPT2_ONLY = [
    r"position table", r"\bGELU\b", r"LayerNorm", r"50,257", r"\b1,024[- ](positions?|tokens?|rows?)\b", r"at most 1,024\b",
    r"GPT-2's tokenizer cuts it into", r"Before GPT-2 was trained", r"GPT-2 learned its merges",
    r"GPT-2 reads the embedding table", r"GPT-2's opinion", r"GPT-2, the model in this film",
    r"makes GPT a decoder", r"^GPT may only", r"then an end-of-text marker",
]

# A phrase said as a contrast is what the modern film must say ("this model has no position table",
# "unlike LayerNorm", "cheaper than LayerNorm"): the words just before it deny or compare.
CONTRAST = re.compile(r"\b(no|unlike|than|instead of|without|not)\s+(a\s+|the\s+|its\s+)?$", re.IGNORECASE)

# chapter -> why it still fails (other work under way); removed as each is made true
PENDING: dict[str, str] = {}

CHAPTERS = ["00", "01", "02", "03", "04", "05", "06"]


@pytest.fixture(scope="module")
def tiny_llama_bundle(tmp_path_factory):
    return extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct",
                           root=tmp_path_factory.mktemp("tiny-llama"), log=lambda m: None)


def claims(chapter: str, bundle) -> list[str]:
    """Every GPT-2-only phrase in the chapter's lines and descriptions, with where it is."""
    words = Words.load("en")
    ledger = bundle.ledger()
    texts = {f"line {b}": l.text for b, l in script.chapter_lines(chapter, bundle, ledger, words).items()}
    texts |= {f"description {b}": l.text for b, l in script.chapter_descriptions(chapter, bundle, ledger, words).items()}
    return [f"ch{chapter} {where}: {pattern!r} in {text!r}" for where, text in texts.items()
            for pattern in GPT2_ONLY for m in re.finditer(pattern, text, re.MULTILINE)
            if not CONTRAST.search(text[max(0, m.start() - 24):m.start()])]


def pending(chapter: str):
    return [pytest.mark.xfail(reason=PENDING[chapter], strict=False)] if chapter in PENDING else []


@pytest.mark.parametrize("chapter", [pytest.param(c, marks=pending(c), id=f"ch{c}") for c in CHAPTERS])
def test_smollm2_says_nothing_only_gpt2_has(chapter, smollm2_bundle):
    assert claims(chapter, smollm2_bundle) == []


@pytest.mark.parametrize("chapter", [pytest.param(c, marks=pending(c), id=f"ch{c}") for c in CHAPTERS])
def test_tiny_llama_says_nothing_only_gpt2_has(chapter, tiny_llama_bundle):
    assert claims(chapter, tiny_llama_bundle) == []


def test_gpt2_film_still_says_them(tiny_bundle):
    """The patterns are GPT-2's own wording: GPT-2's film keeps it (the test would pass vacuously if not)."""
    assert claims("00", tiny_bundle) and claims("04", tiny_bundle)
