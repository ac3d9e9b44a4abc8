"""Chapter 05 as a lesson (issue 40): the chapter opens on its question, says why each family exists,
and its picture of the bill (every score computed in both, the mask overwriting some afterwards) is
built from the bundle and the ledger.

Scenes are dry-run (tests/helpers.build_scene, draw=False).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from onepass.data.facts.ch05 import mask_facts
from onepass.scenes.widgets import token_window
from tests.helpers import build_scene
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words
from onepass.engine.text import string_of

EN = Words.load("en")


@pytest.mark.parametrize("which", ["tiny_bundle", "tiny_long_bundle"])
def test_the_bill_is_the_same_grid_of_scores_for_both_and_the_mask_comes_after(which, request):
    b = request.getfixturevalue(which)
    scene = build_scene(b, "05", "MaskOff", draw=False)
    bill = scene.bill()
    n = len(token_window(b.T))
    e = b.ledger()["L0.scores"]
    dec, enc = bill.grids
    for g in (dec, enc):
        assert len(g.cells) == n * n                                # every score of the window, in both
        assert string_of(g.cost[1]) == N.fmt_int(e.flops)                 # the same ledger line, the bundle's T
    assert len(dec.ahead) == n * (n - 1) // 2                       # the mask overwrites the cells above
    assert e.flops == 2 * b.T * b.T * b.config["n_embd"]
    assert scene.meter.value == b.ledger().total                    # nothing new computed: the meter holds


def test_the_bill_follows_the_bundle(tiny_bundle, tiny_long_bundle):
    """Another prompt (another T): another ledger line and grid on the bill."""
    shown = {}
    for b in (tiny_bundle, tiny_long_bundle):
        bill = build_scene(b, "05", "MaskOff", draw=False).bill()
        shown[b.T] = (string_of(bill.grids[0].cost[1]), len(bill.grids[0].cells))
    assert len(set(shown.values())) == 2


def test_the_unmasked_row_shift_read_out_is_the_bundles(tiny_bundle):
    """The one cell the line reads out is the biggest change between the two softmaxes of the bundle's scores."""
    f = mask_facts(tiny_bundle)
    delta = np.abs(f["full"] - f["causal"])
    assert delta[f["big_row"], f["big_col"]] == delta.max()
    lines = script.chapter_lines("05", tiny_bundle, tiny_bundle.ledger(), EN)
    assert N.spoken_pct(float(f["full"][f["big_row"], f["big_col"]]), EN) in lines["changes"].text


def spoken_numbers(text: str) -> list[str]:
    text = re.sub(r"GPT-\d|T5", "", text)
    return re.findall(r"\d[\d,.]*\d|\d", text)


def test_the_chapter_opens_on_a_question_says_why_and_reads_few_numbers(tiny_bundle):
    lines = script.chapter_lines("05", tiny_bundle, tiny_bundle.ledger(), EN)
    assert "?" in lines["decoder"].text.split(". ")[0]
    assert "does not move at all" in lines["changes"].text             # what already worked stays
    # why a decoder hides the future, why an encoder needs no mask, what cross-attention reads
    assert "copy" in lines["decoder"].text and "next token" in lines["decoder"].text
    # an encoder is trained to fill blanks from both sides, so nothing is hidden, and so it cannot write
    assert "understand" in lines["encoder_only"].text and "fill in blanked-out words" in lines["encoder_only"].text
    assert "nothing is hidden" in lines["encoder_only"].text and "never learns to predict" in lines["encoder_only"].text
    assert "must never see ahead" in lines["decoder_only"].text
    assert "text being written" in lines["cross"].text and "source" in lines["cross"].text
    assert "Nothing new is computed" in lines["same_cost"].text
    for beat, line in lines.items():
        assert len(spoken_numbers(line.text)) <= 3, (beat, line.text)
