"""Chapter 02 shows the bundle's numbers: the featured head's scores, mask, weights and the receipt."""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import build_scene
from onepass.voiceover.script import chapter_lines
from onepass.words import numbers as N
from onepass.words.catalog import Words


@pytest.fixture(scope="module")
def scores_scene(built):
    return built("02", "Scores")


def test_featured_head_is_the_lowest_entropy_last_row(tiny_bundle):
    p = tiny_bundle["probs"][0, :, -1, :].astype(np.float64)
    entropy = -(p * np.log(np.clip(p, 1e-30, None))).sum(-1)
    assert tiny_bundle.featured_head() == int(np.argmin(entropy))


def test_score_grid_shows_the_scaled_scores_then_the_mask_then_percentages(tiny_bundle, scores_scene):
    b, h = tiny_bundle, tiny_bundle.featured_head()
    texts = scores_scene.built_texts
    for r in range(b.T):
        for c in range(b.T):
            assert N.fmt_signed(float(b["scores_scaled"][0, h, r, c]), 2) in texts
            assert N.fmt_pct(float(b["probs"][0, h, r, c])) in texts
    n_masked = b.T * (b.T - 1) // 2
    assert texts.count("−∞") >= n_masked
    assert texts.count("Σ = 1.00") == b.T
    dh = b.config["n_embd"] // b.config["n_head"]
    assert f"score = q · k / √{dh}" in texts


def test_meter_walks_the_ledger(tiny_bundle, scores_scene, built):
    led = tiny_bundle.ledger()
    assert scores_scene.meter.value == led.after("L0.scores")
    mixing = built("02", "Mixing")
    assert mixing.meter.value == led.after("L0.out")
    receipt = [led[k].flops for k in ("L0.qkv", "L0.scores", "L0.mix", "L0.out")] + [led.attention_flops(0)]
    for n in receipt:
        assert N.fmt_int(n) in mixing.built_texts


def test_long_prompt_uses_a_window_and_says_so(tiny_long_bundle):
    scene = build_scene(tiny_long_bundle, "02", "Scores", draw=False)
    T = tiny_long_bundle.T
    assert T > 8
    assert f"showing the last 8 of {T} tokens" in scene.built_texts
    assert f"all {T}" in scene.built_texts


def test_narration_reads_the_bundle(tiny_bundle):
    lines = chapter_lines("02", tiny_bundle, tiny_bundle.ledger(), Words.load("en"))
    h = tiny_bundle.featured_head()
    assert f"head {h + 1} of {tiny_bundle.config['n_head']}" in lines["intro"].text
    assert "random weights" in lines["last_row"].text       # the honest variant for a synthetic bundle
    assert "chance" in lines["last_row"].mark_names         # and the mark lights up where it says so
    row = tiny_bundle["probs"][0, h, -1]
    assert f"{100 * row.max():.1f} percent" in lines["last_row"].text
