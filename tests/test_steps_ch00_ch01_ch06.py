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


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_modern_compression_keeps_its_words_clear_of_their_outlines_and_counts_its_bars(smollm2_bundle, built,
                                                                                          lang):
    """Chapter 00's Compression with SmolLM2 (GPT-2's tokens and table beside the model's own): at the end of every
    beat nothing crowds (tests/helpers.crowding_check), and words inside a glow keep MIN_INSIDE_GAP of a line
    clear of its stroke: the review saw the purple outline on "la de GPT-2 small: …" (a hairline's buff, which
    the film-wide check allows inside a glow; and no crowding run had built this beat, which only a model
    beside GPT-2 has) and, in Urdu, the GPT-2 chips' outline on their name. The ratio's title counts as many
    ways as there are bars: three here, two for GPT-2 itself."""
    from onepass.words.catalog import Words
    from tests.helpers import MIN_INSIDE_GAP, after_every_beat, build_scene, crowding_check
    found = []
    with pytest.MonkeyPatch.context() as mp, after_every_beat(mp, crowding_check(found, inside_gap=MIN_INSIDE_GAP)):
        scene = build_scene(smollm2_bundle, "00", "Compression", draw=False, lang=lang)
    assert found == []
    words = Words.load(lang)

    def shown(s, mid):          # an RTL line is drawn wrapped in direction marks
        return any(words.text(mid) in t for t in s.built_texts)
    assert shown(scene, "ch00:ratio-title-three") and not shown(scene, "ch00:ratio-title")
    if lang == "en":
        assert shown(built("00", "Compression"), "ch00:ratio-title")          # GPT-2: two bars
