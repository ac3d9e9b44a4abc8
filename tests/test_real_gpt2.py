"""The seeds' figures for real GPT-2 small. Skipped (with the reason) when no real weights are here;
run for anyone with them: set ONEPASS_GPT2_WEIGHTS=DIR or have 'gpt2' in the transformers cache."""
from __future__ import annotations

import numpy as np
import pytest

from onepass.data import extract, tokenizer

pytestmark = pytest.mark.needs_weights


@pytest.fixture(scope="module")
def cat(real_weights, bundle_root):
    return extract.extract("The cat sat on the", real_weights, root=bundle_root, log=lambda m: None)


@pytest.fixture(scope="module")
def pakistan(real_weights, bundle_root):
    return extract.extract("The capital of Pakistan is", real_weights, root=bundle_root, log=lambda m: None)


def ranked(bundle):
    p = bundle.last_probs
    order = np.argsort(-p)
    return p, order


def test_cat_sat_on_the_top_tokens(cat):
    p, order = ranked(cat)
    top = [(tokenizer.decode([int(i)]), round(100 * p[i], 1)) for i in order[:4]]
    assert top == [(" floor", 7.6), (" bed", 6.5), (" couch", 5.4), (" ground", 5.2)]
    mat = tokenizer.encode(" mat")[0]
    assert int(np.where(order == mat)[0][0]) + 1 == 31 and round(100 * p[mat], 1) == 0.4


def test_capital_of_pakistan(pakistan):
    p, order = ranked(pakistan)
    named = {tokenizer.decode([int(i)]): round(100 * p[i], 1) for i in order[:10]}
    assert named[" the"] == 10.0 and named[" a"] == 5.5 and named[" Islamabad"] == 3.9
    assert int(np.searchsorted(np.cumsum(p[order]), 0.9)) + 1 == 1065   # top-p 0.9 nucleus size


def test_embedding_cosines(cat):
    cos = {(r["a"], r["b"]): round(r["cosine"], 2) for r in cat.meta["cosine"]}
    assert cos[("king", "queen")] == 0.66
    assert cos[("Monday", "Tuesday")] == 0.89
    assert cos[("Monday", "banana")] == 0.28
