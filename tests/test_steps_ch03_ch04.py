"""Chapters 03 and 04: the picture follows the words, and the vote's layout survives sharp predictions.

Scenes are dry-run (conftest.build_scene, draw=False) with the silent voice, which times every sentence
from its words. ChapterScene records every play (`scene.timeline`: start, end, whether it only held the
picture) and every beat's sentences (`scene.cues`), so what the viewer sees while a sentence is spoken
can be checked without rendering.
"""
from __future__ import annotations


import numpy as np
import pytest

from onepass.data.facts import ch04 as ch04_facts
from tests.helpers import altered_bundle, assert_picture_follows_words, build_scene, holds
from onepass.words import numbers as N

SCENES = [("03", "Heads"), ("03", "Mlp"), ("03", "Climb"), ("03", "Lens"),
          ("04", "LastRow"), ("04", "Softmax"), ("04", "Shaping"), ("04", "Pick")]


@pytest.mark.parametrize("chapter,name", SCENES)
def test_every_sentence_brings_its_own_step_and_no_picture_is_held_for_long(built, chapter, name):
    scene = built(chapter, name)
    assert_picture_follows_words(scene, name)


def test_holds_are_measured_from_the_timeline(built):
    """The check above can fail: a scene that only waits is one long hold."""
    scene = built("03", "Heads")
    assert holds([(0.0, 1.0, False), (1.0, 3.0, True), (3.0, 5.5, True), (5.5, 6.0, False)]) == [(1.0, 5.5)]
    assert scene.timeline and scene.timeline[-1][1] == pytest.approx(scene.time)


# -- sharp predictions ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sharp_bundle(tiny_bundle, tmp_path_factory):
    """The tiny bundle with its last logits scaled until the vote is all but unanimous: a 100.0% top
    candidate, a top-p set of one token, every bar below rank 1 cut (what a trained model can do)."""
    def sharpen(tensors):
        z = tensors["logits"][-1].astype(np.float64)
        tensors["logits"][-1] = ((z - z.mean()) * 40.0 / max(z.std(), 1e-9)).astype(tensors["logits"].dtype)
    return altered_bundle(tiny_bundle, tmp_path_factory.mktemp("sharp"), tensors=sharpen)


def test_sharp_bundle_takes_the_rare_paths(sharp_bundle):
    f = ch04_facts.vote_facts(sharp_bundle)
    assert N.fmt_prob(f["top"][0]["prob"]) == "100.0%"
    assert f["n_p"] == 1


@pytest.mark.parametrize("lang", ["en", "qps"])
@pytest.mark.parametrize("name", ["Softmax", "Shaping", "Pick"])
def test_a_unanimous_vote_keeps_chapter_04_on_frame_and_says_it_right(sharp_bundle, name, lang, monkeypatch):
    """In English and in the pseudo-language (every message ~40% longer)."""
    from tests.helpers import frame_checks
    built = []
    assert frame_checks(sharp_bundle, "04", name, monkeypatch, lang=lang, built=built) == []
    texts = built[0].built_texts
    if name == "Softmax" and lang == "en":
        assert "1 token holds 90%" in texts and "1 tokens hold 90%" not in texts
    if name == "Shaping" and lang == "en":
        assert "that hold 90%: 1" in texts


# -- the wording for trained weights ------------------------------------------------------------
@pytest.fixture(scope="module")
def trained_wording_bundle(tiny_bundle, tmp_path_factory):
    """The tiny bundle marked as trained weights: the scenes speak the lines written for GPT-2's own
    weights (not their .synthetic wording) and wait on those lines' markers."""
    return altered_bundle(tiny_bundle, tmp_path_factory.mktemp("trained"),
                          meta=lambda meta: meta["weights"].update(synthetic=False))


@pytest.mark.parametrize("chapter,name", SCENES)
def test_the_trained_weights_wording_moves_the_picture_at_its_own_markers(trained_wording_bundle, chapter, name):
    scene = build_scene(trained_wording_bundle, chapter, name, draw=False)
    assert not scene.bundle.synthetic and getattr(scene, "random_mark", None) is None
    assert_picture_follows_words(scene, name)
    marks = {m for c in scene.cues for m in c["marks"]}
    assert not marks & {"chance", "noise", "floors", "even", "opinion", "caveat"}   # the random weights' own
