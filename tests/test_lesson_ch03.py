"""Chapter 03 as a lesson (issue 40): its teaching pictures are made of the bundle's numbers, and its
lines say the why with few numbers each.

* the MLP as per-token work: each token's row, hidden activations and row out are that token's own
  (change one token's activations in a copy of the bundle and only its row of the picture changes);
* LayerNorm on a real row: the row's spread is the bundle's, and scaling the row leaves what
  LayerNorm makes of it unchanged (what "a standard size" means);
* the logit lens as one guess sharpening: each floor's bar is its top guess's probability;
* every English line reads out at most three numbers; the chapter opens on a question.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from onepass.data.facts import ch03 as facts
from onepass.scenes import style as S
from onepass.scenes.ch03_stack import FLOOR_H
from onepass.scenes.pictures_ch03 import norm_picture, token_paths
from tests.helpers import altered_bundle, build_scene
from onepass.voiceover import script
from onepass.words.catalog import Words


class Stand:
    """What the pictures read of a scene: its bundle, widths and words."""

    def __init__(self, bundle, lang: str = "en"):
        self.bundle, self.words = bundle, Words.load(lang)
        self.d, self.dff = bundle.shape.n_embd, bundle.shape.d_ff

    def text(self, name, count=None, **values):
        return self.words.text(f"ch03:{name}", count, **values)


def strips(bundle):
    paths = token_paths(Stand(bundle), facts.token_mlp_rows(bundle))
    return [[np.array(getattr(r, k).pixel_array) for k in ("x", "h", "out")] for r in paths.rows], paths


# -- the MLP as per-token work ---------------------------------------------------------------------
def test_each_tokens_path_through_the_mlp_is_its_own_row_of_the_bundle(tiny_bundle, tmp_path):
    before, paths = strips(tiny_bundle)
    f = facts.token_mlp_rows(tiny_bundle)
    assert f["tokens"] == list(range(tiny_bundle.T))[-len(paths.rows):]
    np.testing.assert_array_equal(f["hidden"][-1], tiny_bundle["mlp_hidden"][0, -1])
    np.testing.assert_array_equal(f["x"][0], tiny_bundle["ln2"][0, f["tokens"][0]])
    # the second token's hidden activations turned over: its hidden strip changes, no other strip does
    k = 1

    def flip(t):
        t["mlp_hidden"][0, f["tokens"][k]] *= -1
    after, _ = strips(altered_bundle(tiny_bundle, tmp_path, flip))
    for row in range(len(before)):
        for stage in range(3):
            same = np.array_equal(before[row][stage], after[row][stage])
            assert same == (row != k or stage != 1), (row, stage)
    # attention's lines come from the layer's own weights between those tokens; the MLP has none
    assert len(paths.mix) == sum(1 for a in range(len(paths.rows)) for c in range(a) if f["mix"][a, c] > 0)


# -- LayerNorm on a real row -----------------------------------------------------------------------
def test_layernorm_picture_reads_the_row_and_a_scaled_row_normalises_the_same(tiny_bundle, tmp_path):
    f = facts.norm_facts(tiny_bundle)
    row = tiny_bundle["resid_pre"][0, -1].astype(np.float64)
    assert f["std"] == pytest.approx(row.std()) and f["mean"] == pytest.approx(row.mean())
    assert f["normed"].mean() == pytest.approx(0.0, abs=1e-9)
    assert f["normed"].std() == pytest.approx(1.0, abs=0.02)
    # the model's own LayerNorm output (random weights: unit gain, no bias) is the normalised row
    np.testing.assert_allclose(f["ln"], f["normed"], atol=1e-3)
    spread = tiny_bundle["resid_pre"][:, -1].astype(np.float64).std(axis=-1)
    assert f["growth"] == pytest.approx(spread[-1] / spread[0])

    def scale(t):
        t["resid_pre"][0, -1] *= 4.0
    big = altered_bundle(tiny_bundle, tmp_path, scale)
    g = facts.norm_facts(big)
    assert g["std"] == pytest.approx(4 * f["std"], rel=1e-5)
    np.testing.assert_allclose(g["normed"], f["normed"], rtol=1e-2, atol=1e-3)      # the standard size, whatever came in
    # the picture: the raw histogram's bars follow the row; the normalised ones hardly move
    one, two = norm_picture(Stand(tiny_bundle), f), norm_picture(Stand(big), g)
    assert [b.height for b in one.raw] != [b.height for b in two.raw]
    words = Words.load("en")
    line = script.chapter_lines("03", big, big.ledger(), words)["norm"].text
    from onepass.words.numbers import spoken_signed
    assert spoken_signed(g["std"], 2, words) in line


# -- the logit lens as one guess sharpening --------------------------------------------------------
def lens_bars(scene):
    """Each one-layer floor's bar in the Lens scene, bottom floor first (width, fill opacity)."""
    bars = [m for top in scene.mobjects for m in top.get_family()
            if m.__class__.__name__ == "Rectangle" and abs(m.height - (FLOOR_H - 0.06)) < 1e-6
            and m.get_fill_color().to_hex().lower() == S.LOGIT.to_hex().lower()]
    return sorted(bars, key=lambda m: m.get_y())


def test_lens_bars_are_each_layers_top_guess_probability(tiny_bundle, tmp_path):
    rows = facts.lens_facts(tiny_bundle)
    scene = build_scene(tiny_bundle, "03", "Lens", draw=False)
    bars = lens_bars(scene)
    assert len(bars) == len(rows)
    top = max(r["prob"] for r in rows)
    widths = [b.width for b in bars]
    for r, w in zip(rows, widths):
        assert w == pytest.approx(max(0.03, widths[int(np.argmax([x["prob"] for x in rows]))] * r["prob"] / top),
                                  rel=1e-3, abs=1e-3)

    def sharpen(t):                       # the first floor's guess made far less sure than the last's
        t["lens_probs"][0, 0] = t["lens_probs"][-1, 0] / 4
    changed = build_scene(altered_bundle(tiny_bundle, tmp_path, sharpen), "03", "Lens", draw=False)
    new = [b.width for b in lens_bars(changed)]
    assert new[0] < new[-1] and new[0] != widths[0]


# -- the lines ---------------------------------------------------------------------------------------
NUMBER = re.compile(r"\d[\d,.]*")


def test_each_english_line_reads_out_at_most_three_numbers(tiny_bundle):
    words = Words.load("en")
    name = words.model_name(tiny_bundle.model)
    for beat, line in script.chapter_lines("03", tiny_bundle, tiny_bundle.ledger(), words).items():
        said = NUMBER.findall(line.text.replace(name, "").replace("GPT-2", ""))
        assert len(said) <= 3, (beat, said)


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_chapter_opens_on_its_question(tiny_bundle, lang):
    words = Words.load(lang)
    lines = script.chapter_lines("03", tiny_bundle, tiny_bundle.ledger(), words)
    first = script.split_sentences(lines["heads"].text)[:2]
    assert any(s.rstrip().endswith(("?", "؟")) for s in first)
    assert script.split_sentences(lines["lens"].text)[0].rstrip().endswith(("?", "؟"))
