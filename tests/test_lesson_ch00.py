"""Chapter 00 as a lesson (issue 40): the pictures of why are built from the bundle and the tokenizer
files, and the narration opens on its question and reads few numbers a line.

Scenes are dry-run (tests/helpers.build_scene, draw=False): the texts they build and the shapes they
leave are checked, nothing is rendered.
"""
from __future__ import annotations

import re

import pytest

from onepass.data import tokenizer
from onepass.data.facts import ch00
from onepass.scenes.pieces_ch00 import VocabStrip
from tests.helpers import build_scene
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words

EN = Words.load("en")


@pytest.fixture(scope="module")
def why(tiny_bundle, tiny_long_bundle):
    """WhyPieces built for the short and the long prompt."""
    return {b.prompt: build_scene(b, "00", "WhyPieces", draw=False) for b in (tiny_bundle, tiny_long_bundle)}


def test_the_squares_are_the_prompts_own_lengths_squared(why, tiny_bundle, tiny_long_bundle):
    """Why not characters: the square of comparisons for T tokens and for the prompt's characters, for
    each bundle its own (another prompt, another picture)."""
    shown = {}
    for b in (tiny_bundle, tiny_long_bundle):
        f = ch00.token_facts(b)
        texts = why[b.prompt].built_texts
        for n in (b.T, f["chars"]):
            assert f"{N.fmt_int(n)} × {N.fmt_int(n)} = {N.fmt_int(n * n)} comparisons" in texts
        assert f["pairs_tokens"] == b.T ** 2 and f["pairs_chars"] == f["chars"] ** 2
        shown[b.prompt] = {t for t in texts if t.endswith("comparisons")}
    assert shown[tiny_bundle.prompt] != shown[tiny_long_bundle.prompt]
    # the squares' sides are in the ratio of the lengths (the picture, not only its labels)
    squares = why[tiny_bundle.prompt].squares
    f = ch00.token_facts(tiny_bundle)
    assert squares[1].width / squares[0].width == pytest.approx(f["chars"] / tiny_bundle.T, rel=1e-6)


def test_the_made_up_word_is_missing_from_the_vocabulary_and_spelled_from_real_pieces(why, tiny_long_bundle):
    for b in why.values():
        f = ch00.token_facts(b.bundle)
        assert len(f["typo_ids"]) >= 2                                   # no single token holds it
        assert tokenizer.decode(f["typo_ids"]) == f["typo"]              # the pieces spell it exactly
        assert f["typo_bytes"] == list(f["typo"].encode("utf-8"))
        assert f["typo"].startswith(f["ladder"]["word"])
        for i in f["typo_ids"]:
            assert str(i) in b.built_texts                               # each piece with its id
    assert ch00.typo_of(" the") != " the" and len(tokenizer.encode(ch00.typo_of(" the"))) >= 2


def test_an_id_is_a_place_in_the_list_and_merges_come_in_the_order_learned():
    vf = tokenizer.vocab_facts()
    ranks = tokenizer.merge_ranks()
    for pair, rank in list(ranks.items())[:50] + list(ranks.items())[-50:]:
        token_id = tokenizer.symbol_id(pair[0] + pair[1])
        assert ch00.merge_rank_of(token_id) == rank                      # id = 256 + the merge's rank
    assert ch00.merge_rank_of(tokenizer.encode(" the")[0]) < 10        # one of the very first merges
    assert ch00.merge_rank_of(0) is None and ch00.merge_rank_of(vf.total - 1) is None
    strip = VocabStrip(vf.byte_tokens, vf.merges, vf.special, 12.0, 0.5, 0.4)
    xs = [strip.x_of(i) for i in (0, 255, 256, 262, 3797, vf.total - 2, vf.total - 1)]
    assert xs == sorted(xs)                                              # left to right in id order
    assert strip.get_left()[0] < xs[0] and xs[-1] < strip.get_right()[0]


def test_the_vocabulary_strip_marks_the_prompts_ids(tiny_bundle, tiny_long_bundle):
    marked = {}
    for b in (tiny_bundle, tiny_long_bundle):
        s = build_scene(b, "00", "Merges", draw=False)
        chips = s.callout_chips
        ids = [c.token_id for c in chips]
        assert ids == sorted(ids)                                        # chips in the order of the list
        expected = list(dict.fromkeys(b.ids))[:8]
        assert set(expected) <= set(ids)
        marked[b.prompt] = ids
        assert ch00.case_ids()[1] in ids                                 # “ the”, the line's example
    assert marked[tiny_bundle.prompt] != marked[tiny_long_bundle.prompt]


def spoken_numbers(text: str) -> list[str]:
    return re.findall(r"\d[\d,.]*\d|\d", text.replace("GPT-2", "GPT"))


def test_the_chapter_opens_on_a_question_and_reads_at_most_three_numbers_a_line(tiny_bundle):
    lines = script.chapter_lines("00", tiny_bundle, tiny_bundle.ledger(), EN)
    first = lines["intro"].text
    assert "?" in first.split(". ")[0]
    for beat, line in lines.items():
        assert len(spoken_numbers(line.text)) <= 3, (beat, line.text)
    # the whys are said: words vs characters vs pieces, frequent pairs first, English-heavy merges
    assert "never end" in lines["words"].text and "square of the length" in lines["letters"].text
    assert "any text at all" in lines["subwords"].text
    assert "most frequent" in lines["merges"].text and "mostly English" in lines["other"].text
    assert f"number {ch00.case_ids()[1]}" in lines["vocab"].text
    assert f"entry {tiny_bundle.ids[0]}" in lines["handoff"].text
