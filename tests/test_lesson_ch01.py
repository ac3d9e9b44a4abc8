"""Chapter 01 as a lesson (issue 40): its teaching pictures are made of the bundle's numbers, and its
lines say the why with few numbers each.

* why not the id: the two ids compared and the two that sit closest are the prompt's own (other ids,
  another comparison on screen);
* the cosine as an angle: the arrows meet at the angle of the bundle's featured pair (another cosine
  in the bundle, another angle), after the scale's 1, 0 and -1;
* order-blindness: each token brings the same vector in either order and the sum is the same; with
  the position rows added (the bundle's wpe) the same token differs by slot;
* the lines: the chapter opens on a question in every language, training is said once and before any
  other line says "learned", and no line reads out more than three numbers.
"""
from __future__ import annotations

import re
from unittest import mock

import numpy as np
import pytest

from onepass.data.facts import ch01 as facts
from tests.helpers import altered_bundle, build_scene
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words

EN = Words.load("en")


# -- why a vector and not the id -------------------------------------------------------------------
def test_the_ids_compared_and_the_closest_pair_are_the_prompts_own():
    f = facts.id_facts([464, 3797, 3332, 319, 262])          # "The cat sat on the"
    assert (f["high_id"], f["low_id"]) == (3797, 262) and (f["high"], f["low"]) == (1, 4)
    assert f["near"] == (4, 3) and f["near_gap"] == 57        # " the" 262 and " on" 319
    assert facts.id_facts([7, 7])["near"] is None             # no two distinct ids: nothing to call close


def test_the_question_picture_shows_the_bundles_ids(tiny_bundle, tmp_path):
    b = tiny_bundle
    f = facts.id_facts(b.ids[:facts.SHOWN_TOKENS])
    s = build_scene(b, "01", "Lookup", draw=False)
    assert f"{f['high_id']} > {f['low_id']}" in s.built_texts
    assert f"{N.fmt_int(f['near_gap'])} apart, yet not alike" in s.built_texts
    other = [11, 5000, 2000, 4990, 130][:b.T] + list(b.ids[5:])

    def ids(t):
        t["token_ids"][:] = other
    b2 = altered_bundle(b, tmp_path, ids, meta=lambda m: m.update(token_ids=other))
    s2 = build_scene(b2, "01", "Lookup", draw=False)
    line = script.chapter_lines("01", b2, b2.ledger(), EN)["question"].text
    assert "5000 > 11" in s2.built_texts and "10 apart, yet not alike" in s2.built_texts
    assert "number 5000" in line and "number 11" in line


# -- the cosine as an angle --------------------------------------------------------------------------
def test_the_spoken_pairs_are_the_closest_related_pair_and_its_unrelated_partner():
    pairs = [{"a": "king", "b": "queen", "cosine": 0.66}, {"a": "king", "b": "banana", "cosine": 0.2},
             {"a": "Monday", "b": "Tuesday", "cosine": 0.89}, {"a": "Monday", "b": "banana", "cosine": 0.28}]
    pairs = [dict(p, related=(p["a"], p["b"]) in facts.RELATED_PAIRS) for p in pairs]
    said = facts.contrast_pairs(pairs)
    assert [(p["a"], p["b"]) for p in said] == [("Monday", "Tuesday"), ("Monday", "banana")]
    assert facts.angle_of(1.0) == pytest.approx(0) and facts.angle_of(0.0) == pytest.approx(90)
    assert facts.angle_of(-1.0) == pytest.approx(180) and facts.angle_of(0.89) == pytest.approx(27.13, abs=0.01)


def angle_texts(bundle) -> set[str]:
    return {t for t in build_scene(bundle, "01", "Meaning", draw=False).built_texts if t.endswith("°")}


def test_the_angle_is_the_bundles_pair_after_the_scale(tiny_bundle, tmp_path):
    b = tiny_bundle
    f = facts.embed_facts(b)
    shown = angle_texts(b)
    own = f"{N.fmt_int(int(round(f['featured_angle'])))}°"
    assert {"0°", "90°", "180°", own} <= shown
    # the bundle's pair agreeing more: the arrows meet at its angle, and the line says so
    cosine = [dict(p, cosine=0.5) if (p["a"], p["b"]) == (f["featured"]["a"], f["featured"]["b"]) else p
              for p in b.meta["cosine"]]
    b2 = altered_bundle(b, tmp_path, meta=lambda m: m.update(cosine=cosine))
    assert "60°" in angle_texts(b2)
    line = script.chapter_lines("01", b2, b2.ledger(), EN)["angle"].text
    assert "60 degrees" in line and "0.50" in line
    assert "60°" not in shown or own == "60°"


# -- order-blindness and the position rows ------------------------------------------------------------
def test_without_positions_order_changes_nothing_and_with_them_each_slot_differs(tiny_bundle, tmp_path):
    b = tiny_bundle
    n = min(b.T, facts.SHOWN_TOKENS)
    s = facts.order_strips(b, n)
    d = min(facts.STRIP_DIMS, b.config["n_embd"])
    np.testing.assert_array_equal(s["plain"], b["wte_rows"][:n, :d])
    np.testing.assert_array_equal(s["plain_reversed"], s["plain"][::-1])        # the same vectors, reordered
    np.testing.assert_allclose(s["plain"].sum(axis=0), s["plain_reversed"].sum(axis=0))  # the sum cannot tell
    np.testing.assert_allclose(s["placed"], b["resid_pre"][0, :n, :d], atol=1e-6)    # the model's layer-1 input
    # with positions, the token in slot 0 as written and the same token read last are different vectors
    assert not np.allclose(s["placed"][0], s["placed_reversed"][n - 1])

    def no_positions(t):
        t["wpe_rows"][:] = 0
    flat = facts.order_strips(altered_bundle(b, tmp_path, no_positions), n)
    np.testing.assert_array_equal(flat["placed"], s["plain"])
    np.testing.assert_array_equal(flat["placed_reversed"][n - 1], flat["placed"][0])


# -- the lines -------------------------------------------------------------------------------------------
NUMBER = re.compile(r"\d[\d,.]*\d|\d")


@pytest.mark.parametrize("synthetic", [True, False])
def test_no_line_reads_out_more_than_three_numbers(tiny_bundle, synthetic):
    b = tiny_bundle
    meta = dict(b.meta, weights=dict(b.meta["weights"], synthetic=synthetic))
    with mock.patch.object(b, "meta", meta):
        lines = script.chapter_lines("01", b, b.ledger(), EN)
    for beat, line in lines.items():
        said = set(NUMBER.findall(line.text.replace("GPT-2", "GPT")))     # the model's name is no number read out
        assert len(said) <= 3, (beat, sorted(said))


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_chapter_opens_on_its_question(tiny_bundle, lang):
    lines = script.chapter_lines("01", tiny_bundle, tiny_bundle.ledger(), Words.load(lang))
    beats = [k for k in lines if k != "title"]
    assert beats[0] == "question"
    assert re.search(r"[?؟]", lines["question"].text)


def test_training_is_said_once_before_anything_is_called_learned(tiny_bundle):
    b = tiny_bundle
    for synthetic in (True, False):
        meta = dict(b.meta, weights=dict(b.meta["weights"], synthetic=synthetic))
        with mock.patch.object(b, "meta", meta):
            lines = script.chapter_lines("01", b, b.ledger(), EN)
        beats = list(lines)
        first = min(beats.index(k) for k, line in lines.items() if "learn" in line.text.lower())
        assert beats[first] == "learned"
        said = lines["learned"].text
        assert "next token" in said and "corpus" in said and "nudged" in said
        assert ("never trained" in said) == synthetic


def test_the_learned_tables_last_row_is_its_config(tiny_bundle):
    s = build_scene(tiny_bundle, "01", "Positions", draw=False)
    assert f"last row: {N.fmt_int(tiny_bundle.config['n_positions'] - 1)}" in s.built_texts


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_position_rows_are_labelled_in_words_not_as_tokens(tiny_bundle, lang):
    """'pos 0' is words (its no-break space from the catalog): drawn as a token it read 'pos␣0'."""
    s = build_scene(tiny_bundle, "01", "Positions", draw=False, lang=lang)
    assert not [t for t in s.built_texts if "␣" in t]
