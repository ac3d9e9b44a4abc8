"""Chapters 00, 01 and 06: the picture follows the words.

Every scene is dry-run (conftest's `built`: build_scene, draw=False) with the silent voice, which times each
sentence from its words; every play is recorded (start, end, whether it only held the picture), so
what the viewer sees while a sentence is spoken is checked without rendering. The rendered check is
bench/review.py (`make review`): the share of stills of 4 s or more and the longest.
"""
from __future__ import annotations

import pytest

from tests.helpers import assert_picture_follows_words

SCENES = [("00", "Prompt"), ("00", "SameWord"), ("00", "WhyPieces"), ("00", "Merges"), ("00", "Compression"),
          ("01", "Lookup"), ("01", "Meaning"), ("01", "Positions"), ("01", "Residual"),
          ("06", "Loop"), ("06", "Cache"), ("06", "Square"), ("06", "Scale")]


@pytest.mark.parametrize("chapter,name", SCENES)
def test_every_sentence_brings_its_own_step_and_no_picture_is_held_for_long(built, chapter, name):
    scene = built(chapter, name)
    assert_picture_follows_words(scene, name)



# The modern decoder's wording (`chNN-<beat>.rope`) and pictures: SmolLM2-135M-Instruct's real bundle
MODERN = [("00", "Prompt"), ("00", "SameWord"), ("00", "WhyPieces"), ("00", "Merges"), ("00", "Compression"),
          ("01", "Lookup"), ("01", "Meaning"), ("01", "Positions"), ("01", "Residual")]


@pytest.fixture(scope="module")
def built_smollm2(smollm2_bundle):
    """built_smollm2(chapter, scene): that scene dry-run against SmolLM2's bundle, once per module."""
    from tests.helpers import build_scene
    cache = {}

    def get(chapter, name):
        if (chapter, name) not in cache:
            cache[(chapter, name)] = build_scene(smollm2_bundle, chapter, name, draw=False)
        return cache[(chapter, name)]
    return get


@pytest.mark.parametrize("chapter,name", MODERN)
def test_the_modern_decoders_sentences_each_bring_a_step_and_no_picture_is_held_for_long(built_smollm2, chapter,
                                                                                          name):
    assert_picture_follows_words(built_smollm2(chapter, name), f"smollm2 {chapter} {name}")


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_modern_speed_chart_gives_its_labels_and_notes_room(smollm2_bundle, lang):
    """Chapter 01's Positions with SmolLM2 (the speed chart of the RoPE pairs): at the end of every beat no
    frame's edge runs across or touches a text, no two number labels touch (tests/helpers.crowding_check), in
    each language; the tiny bundle's run (test_crowding) never draws this chart. The review found the tick
    labels, 'a turn every 6 tokens' and the trained length's name on the ticks' glow, the trained length's name
    over the outlines of the slowed pairs (es), and the Llama 3.2 note's box on the box above it."""
    from tests.helpers import after_every_beat, build_scene, crowding_check
    found = []
    with pytest.MonkeyPatch.context() as mp, after_every_beat(mp, crowding_check(found)):
        build_scene(smollm2_bundle, "01", "Positions", draw=False, lang=lang)
    assert found == []
