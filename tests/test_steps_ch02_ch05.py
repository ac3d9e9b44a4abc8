"""Chapters 02 and 05: the picture follows the words, and attention is drawn as lines from the head's weights.

Scenes are dry-run (conftest.build_scene, draw=False) with the silent voice, which times every sentence
from its words; every play is recorded here (start, end, whether it only held the picture), so what the
viewer sees while a sentence is spoken is checked without rendering.
"""
from __future__ import annotations

import numpy as np
import pytest

from onepass.data.facts.ch05 import mask_facts
from onepass.scenes.widgets import AttentionArcs
from tests.helpers import assert_picture_follows_words, build_scene

SCENES = [("02", "Projections"), ("02", "Scores"), ("02", "Mixing"),
          ("05", "MaskOff"), ("05", "Towers"), ("05", "Families")]


@pytest.mark.parametrize("chapter,name", SCENES)
def test_every_sentence_brings_its_own_step_and_no_picture_is_held_for_long(built, chapter, name):
    scene = built(chapter, name)
    assert_picture_follows_words(scene, name)


def test_chapter02_draws_the_heads_weights_as_lines(tiny_bundle, built):
    b = tiny_bundle
    probs = b["probs"][0, b.featured_head()].astype(np.float64)
    scene = built("02", "Scores")
    (arcs,) = scene.arcs
    expected = {(q, k) for q in range(b.T) for k in range(b.T) if probs[q, k] >= AttentionArcs.FLOOR}
    assert set(arcs.arcs) == expected
    assert all(arcs.weight_of[qk] == pytest.approx(probs[qk]) for qk in expected)
    # the last row's lines at full strength and the others faded (then the row becomes the budget bar)
    last = b.T - 1
    for (q, _), p in arcs.arcs.items():
        assert p.get_stroke_opacity() == pytest.approx(p.base_opacity * (1 if q == last else AttentionArcs.FADED))
    # the mix: the last row's lines lead to the values
    mixing = built("02", "Mixing")
    (mix,) = mixing.arcs
    assert {q for q, _ in mix.arcs} == {last}
    assert all(mix.weight_of[qk] == pytest.approx(probs[qk]) for qk in mix.arcs)


def test_chapter05_draws_the_lines_backwards_only_then_both_ways(tiny_bundle, built):
    f = mask_facts(tiny_bundle)
    scene = built("05", "MaskOff")
    causal, full = scene.arcs
    assert all(k <= q for q, k in causal.arcs)                        # the mask: backwards only
    assert any(k > q for q, k in full.arcs)                           # without it: forward too
    for arcs, weights in ((causal, f["causal"]), (full, f["full"])):
        assert all(arcs.weight_of[qk] == pytest.approx(weights[qk]) for qk in arcs.arcs)


@pytest.mark.parametrize("chapter,name", [("02", "Scores"), ("05", "MaskOff")])
def test_the_wording_for_trained_weights_moves_the_same_pictures(tiny_bundle, chapter, name, monkeypatch):
    """The lines without the random-weights sentence have one marker fewer; the scene follows them
    (it asks the bundle, not the line, whether the weights are random)."""
    from onepass.data.bundle import Bundle
    monkeypatch.setattr(Bundle, "synthetic", property(lambda self: False))
    scene = build_scene(tiny_bundle, chapter, name, draw=False)
    assert getattr(scene, "random_mark", None) is None
    assert_picture_follows_words(scene, f"trained {chapter} {name}")
    said = {c["beat"]: c["text"] for c in scene.cues}
    assert "random" not in said.get("last_row", "") + said.get("changes", "")


@pytest.mark.parametrize("chapter,name", SCENES)
def test_a_long_prompt_in_the_pseudo_language_still_fits_the_frame(tiny_long_bundle, chapter, name, monkeypatch):
    """Longer words (qps, about 40% longer) with a long prompt's window notes: nothing leaves the frame."""
    from tests.helpers import frame_checks
    built = []
    problems = frame_checks(tiny_long_bundle, chapter, name, monkeypatch, lang="qps", built=built)
    assert problems == [], "\n".join(problems)
    assert_picture_follows_words(built[0], f"qps long {chapter} {name}")
