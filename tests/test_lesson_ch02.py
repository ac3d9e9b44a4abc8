"""Chapter 02 as a lesson (issue 40): its pictures of why are drawn from the bundle, and its lines
say the whys.

The pictures (scenes/attention_pictures_ch02.py) are recorded while a scene is dry-run; each is
checked against the bundle's own numbers, then against a copy of the bundle whose featured head
was changed (its queries sharpened, its values flipped): the picture must change with it.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from onepass.data import bundle as bundle_mod
from onepass.data.facts.ch02 import (
    agreement_facts, blend_facts, budget_facts, cost_facts, head_facts, projection_facts, root_facts, softmax,
    softmax_row, softmax_row_index,
)
from onepass.scenes import attention_pictures_ch02 as pictures
from onepass.scenes import style as S
from tests.helpers import build_scene
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words

PICTURES = ("AgreementFan", "BarRow", "BudgetBar", "BlendStrips", "ProjectionFan", "SoftmaxRow", "CostSquares")


def recorded(bundle, name, monkeypatch):
    """The scene dry-run, with `.pictures[kind]` = every picture of that kind it built, in order."""
    seen = {kind: [] for kind in PICTURES}
    for kind in PICTURES:
        cls = getattr(pictures, kind)
        original = cls.__init__

        def init(self, *args, _original=original, _kind=kind, **kwargs):
            _original(self, *args, **kwargs)
            seen[_kind].append(self)
        monkeypatch.setattr(cls, "__init__", init)
    scene = build_scene(bundle, "02", name, draw=False)
    scene.pictures = seen
    return scene


def altered(bundle, folder, q_scale=3.0):
    """A copy of the bundle whose featured head's queries are `q_scale` times as long (its scores,
    mask and weights recomputed as the model would: sharper) and whose values are negated."""
    t = {k: np.array(v) for k, v in bundle.tensors.items()}
    h = bundle.featured_head()
    dh = t["q"].shape[-1]
    t["q"][0, h] *= q_scale
    raw = t["q"][0, h].astype(np.float64) @ t["k"][0, h].astype(np.float64).T
    T = raw.shape[0]
    t["scores_raw"][0, h] = raw
    t["scores_scaled"][0, h] = raw / np.sqrt(dh)
    masked = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, raw / np.sqrt(dh))
    t["scores_masked"][0, h] = masked
    probs = np.stack([softmax(row) for row in masked])
    t["probs"][0, h] = probs
    t["v"][0, h] *= -1.0
    t["head_out"][0, h] = probs @ t["v"][0, h].astype(np.float64)
    meta = {k: v for k, v in bundle.meta.items() if k not in ("schema_version", "tensors_sha256")}
    changed = bundle_mod.load(bundle_mod.save(folder, t, meta))
    assert changed.featured_head() == h          # a sharper head stays the least uniform one
    return changed


@pytest.fixture(scope="module")
def changed_bundle(tiny_bundle, tmp_path_factory):
    return altered(tiny_bundle, tmp_path_factory.mktemp("altered") / "bundle")


@pytest.fixture(scope="module")
def scores_of():
    cache = {}

    def get(bundle):
        if bundle.path not in cache:
            with pytest.MonkeyPatch.context() as mp:
                cache[bundle.path] = recorded(bundle, "Scores", mp)
        return cache[bundle.path]
    return get


def arrow_vector(arrow) -> np.ndarray:
    return (arrow.get_end() - arrow.get_start())[:2]


# -- q · k as agreement ------------------------------------------------------------------------------
def check_fan(scene, bundle):
    f = agreement_facts(bundle)
    (fan,) = scene.pictures["AgreementFan"]
    q = arrow_vector(fan.query)
    assert q[1] == pytest.approx(0, abs=1e-6) and q[0] > 0              # the query lies along +x
    scale = q[0] / f["q_norm"]
    for arrow, j in zip(fan.keys, fan.positions):
        v = arrow_vector(arrow)
        angle = np.degrees(np.arctan2(abs(v[1]), v[0]))
        assert angle == pytest.approx(f["angle"][j], abs=0.5)            # its true angle to the query
        assert np.linalg.norm(v) == pytest.approx(f["k_norm"][j] * scale, rel=0.02)   # its true length
        assert v[0] * f["q_norm"] / scale == pytest.approx(f["dots"][j], rel=0.02, abs=1e-3)   # x is k·q/|q|
        assert N.fmt_signed(float(f["dots"][j]), 2) in scene.built_texts   # its score beside it
    assert pictures.degrees(f["angle"][f["top_index"]]) in scene.built_texts
    return f


def test_the_alignment_picture_is_the_last_query_and_the_keys_of_the_bundle(tiny_bundle, changed_bundle, scores_of):
    before = check_fan(scores_of(tiny_bundle), tiny_bundle)
    after = check_fan(scores_of(changed_bundle), changed_bundle)
    assert not np.allclose(before["dots"], after["dots"])                    # the picture changed with the bundle
    np.testing.assert_allclose(after["dots"], 3.0 * before["dots"], rtol=1e-4)
    np.testing.assert_allclose(after["angle"], before["angle"], atol=1e-3)  # a longer query: the same angles


def test_the_dot_product_is_the_agreement_the_picture_says(tiny_bundle):
    f = agreement_facts(tiny_bundle)
    np.testing.assert_allclose(f["dots"], f["q_norm"] * f["k_norm"] * f["cos"], rtol=1e-6, atol=1e-9)
    h = head_facts(tiny_bundle)["head_index"]
    np.testing.assert_allclose(f["dots"], tiny_bundle["scores_raw"][0, h, -1], rtol=1e-4, atol=1e-6)
    assert f["top_index"] == int(np.argmax(tiny_bundle["scores_scaled"][0, h, -1]))


# -- √d_head: the same row with and without the division ----------------------------------------------
def check_root(scene, bundle):
    f = root_facts(bundle)
    h = head_facts(bundle)["head_index"]
    divided, undivided = scene.pictures["BarRow"]
    np.testing.assert_allclose(f["divided"], bundle["probs"][0, h, -1], rtol=1e-6)
    q, k = bundle["q"][0, h, -1].astype(np.float64), bundle["k"][0, h].astype(np.float64)
    np.testing.assert_allclose(f["undivided"], softmax(k @ q), rtol=1e-6)
    rows = scene.rows
    scales = []
    for bars, weights in ((divided, f["divided"]), (undivided, f["undivided"])):
        heights = np.array([bar.height for bar in bars.bars])
        scale = heights.max() / weights[rows].max()           # the height of a weight of one
        np.testing.assert_allclose(heights, np.maximum(weights[rows] * scale, 0.02), atol=1e-3)
        scales.append(scale)
        for j in rows:
            assert N.fmt_pct(float(weights[j])) in scene.built_texts
    assert scales[0] == pytest.approx(scales[1], rel=1e-3)     # one scale: the same height is the same weight
    return f


def test_the_root_picture_is_the_same_rows_softmax_with_and_without_the_division(tiny_bundle, changed_bundle,
                                                                                scores_of):
    before = check_root(scores_of(tiny_bundle), tiny_bundle)
    after = check_root(scores_of(changed_bundle), changed_bundle)
    assert not np.allclose(before["undivided"], after["undivided"])
    # the claim the line makes: undivided, the top token takes more (softmax saturates as scores grow)
    for f in (before, after):
        assert f["undivided"].max() >= f["divided"].max()
    assert after["undivided"].max() > before["undivided"].max()


# -- a row as a budget ----------------------------------------------------------------------------------
def check_budget(scene, bundle):
    f = budget_facts(bundle)
    (bar,) = scene.pictures["BudgetBar"]
    widths = np.array([p.width for p in bar.pieces])
    assert widths.sum() == pytest.approx(bar.frame.width, rel=0.01)        # one unit, all of it spent
    np.testing.assert_allclose(widths / bar.frame.width, f["weights"], atol=2e-3)
    lefts = np.array([p.get_left()[0] for p in bar.pieces]) - bar.frame.get_left()[0]
    np.testing.assert_allclose(lefts / bar.frame.width, f["starts"], atol=2e-3)   # in the tokens' order
    for j, tag in bar.tags.items():
        assert N.fmt_pct(float(f["weights"][j])) in scene.built_texts
        assert tag.width <= widths[j] or j == f["top_index"]          # a tag under its own piece
    return f


def test_the_budget_is_the_last_row_split_into_its_weights(tiny_bundle, changed_bundle, scores_of):
    before = check_budget(scores_of(tiny_bundle), tiny_bundle)
    after = check_budget(scores_of(changed_bundle), changed_bundle)
    assert before["total"] == pytest.approx(1.0, abs=1e-5) and after["total"] == pytest.approx(1.0, abs=1e-5)
    assert not np.allclose(before["weights"], after["weights"])


def test_the_mask_gives_exactly_zero_and_every_row_a_unit(tiny_bundle):
    h = head_facts(tiny_bundle)["head_index"]
    p = tiny_bundle["probs"][0, h].astype(np.float64)
    assert np.all(p[np.triu_indices(tiny_bundle.T, 1)] == 0.0)              # e^−∞ = 0, exactly
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert softmax([0.0, -np.inf])[1] == 0.0


# -- the output as a blend of value vectors ----------------------------------------------------------------
def test_the_output_is_the_weighted_blend_of_the_values(tiny_bundle, changed_bundle, monkeypatch):
    outputs = []
    for bundle in (tiny_bundle, changed_bundle):
        f = blend_facts(bundle)
        h = f["head_index"]
        np.testing.assert_allclose(f["output"], bundle["head_out"][0, h, -1], rtol=1e-4, atol=1e-6)
        with pytest.MonkeyPatch.context() as mp:
            scene = recorded(bundle, "Mixing", mp)
        (blend,) = scene.pictures["BlendStrips"]
        cells = blend.output[0]
        assert len(cells) == f["output"].shape[0]
        for cell, x in zip(cells, f["output"]):
            assert cell.get_fill_color().to_hex() == S.diverging(float(x), f["vmax"]).to_hex()
        for strip, j in zip(blend.scaled, scene.rows):      # each value times its weight
            for cell, x in zip(strip[0], f["scaled"][j]):
                assert cell.get_fill_color().to_hex() == S.diverging(float(x), f["vmax"]).to_hex()
        outputs.append(f["output"])
    assert not np.allclose(outputs[0], outputs[1])


# -- the lines: a lesson, not a ledger ----------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_chapter_opens_on_a_question(tiny_bundle, lang):
    lines = script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger(), Words.load(lang))
    first = script.split_sentences(lines["intro"].text)[0]
    assert first.rstrip().endswith(("?", "؟")), first


def test_no_line_reads_out_more_than_three_numbers(tiny_bundle):
    lines = script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger(), Words.load("en"))
    for beat, line in lines.items():
        numbers = re.findall(r"\d[\d,.]*", line.text)
        assert len(numbers) <= 3, (beat, line.text)


def test_the_lines_say_the_whys(tiny_bundle):
    lines = {b: l.text for b, l in script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger(),
                                                       Words.load("en")).items()}
    assert "left to right" not in lines["mask"] and "predicting the next token" in lines["mask"]
    assert "at once" in lines["mask"]                                          # every position in one pass
    assert "looking for" in lines["qkv"] and "offers" in lines["qkv"] and "passes on" in lines["qkv"]
    assert "budget" in lines["last_row"] and "one unit" in lines["last_row"]
    assert "minus infinity is zero" in lines["softmax"]
    assert "added to the residual stream rather than written over" in lines["out"]
    f = root_facts(tiny_bundle)
    words = Words.load("en")
    assert N.spoken_pct(float(f["undivided"].max()), words) in lines["root"]
    assert N.spoken_pct(float(f["divided"].max()), words) in lines["root"]
    assert "random weights" in lines["mix"]           # no meaning claimed for a synthetic bundle's mix


# -- one row through the three projections ------------------------------------------------------------------
def strip_colours(strip) -> list[str]:
    return [cell.get_fill_color().to_hex() for cell in strip[0]]


def test_the_qkv_picture_is_the_last_rows_three_projections(tiny_bundle, changed_bundle):
    seen = []
    for bundle in (tiny_bundle, changed_bundle):
        f = projection_facts(bundle)
        h = head_facts(bundle)["head_index"]
        with pytest.MonkeyPatch.context() as mp:
            scene = recorded(bundle, "Projections", mp)
        (fan,) = scene.pictures["ProjectionFan"]
        x = bundle["ln1"][0, -1]
        assert len(fan.x[0]) == bundle.shape.n_embd                      # the whole row, every number
        assert strip_colours(fan.x) == [S.diverging(float(v), f["x_vmax"]).to_hex() for v in x]
        for strip, name in zip(fan.outs, ("q", "k", "v")):
            vec = bundle[name][0, h, -1]
            assert len(strip[0]) == bundle.shape.d_head                  # d numbers in, d_head out
            assert strip_colours(strip) == [S.diverging(float(v), f["vmax"]).to_hex() for v in vec]
            # drawn to scale: d_head numbers are d_head/d of the row they come from, never longer than it
            assert strip[1].width / fan.x[1].width == pytest.approx(bundle.shape.d_head / bundle.shape.n_embd)
        assert len(fan.roles) == 3 and "what I am looking for" in scene.built_texts   # what each is for
        seen.append([strip_colours(o) for o in fan.outs])
    assert seen[0][0] != seen[1][0] and seen[0][2] != seen[1][2]         # sharper queries, flipped values


# -- softmax: exponentiate, then normalise; e^−∞ = 0 ---------------------------------------------------------
def check_softmax_row(scene, bundle):
    (row,) = scene.pictures["SoftmaxRow"]
    r = softmax_row_index(scene.rows)
    f = softmax_row(bundle, r)
    np.testing.assert_allclose(f["weights"], f["model"], rtol=1e-5, atol=1e-7)   # the head's own weights
    assert 0 < r < bundle.T - 1 or bundle.T <= 2                  # a row that keeps some tokens and loses some
    shown = scene.rows
    heights = np.array([bar.height for bar in row.bars])
    scale = heights.max() / f["exp"][shown].max()
    np.testing.assert_allclose(heights, np.maximum(f["exp"][shown] * scale, 0.02), atol=1e-3)   # height eˢ
    assert row.masked == [i for i, j in enumerate(shown) if j > r]               # −∞ right of the diagonal
    for i in row.masked:
        assert f["exp"][shown[i]] == 0.0 and heights[i] == pytest.approx(0.02)  # e^−∞ = 0: no bar
    for j in shown:
        assert N.fmt_general(float(f["exp"][j]), 3) in scene.built_texts
        assert N.fmt_pct(float(f["weights"][j])) in scene.built_texts
        assert N.fmt_signed(float(f["scores"][j]), 2) in scene.built_texts
    assert f"Σ eˢ = {N.fmt_general(f['total'], 3)}" in scene.built_texts
    return f


def test_the_softmax_picture_exponentiates_and_normalises_a_row_of_the_bundle(tiny_bundle, changed_bundle,
                                                                             scores_of):
    before = check_softmax_row(scores_of(tiny_bundle), tiny_bundle)
    after = check_softmax_row(scores_of(changed_bundle), changed_bundle)
    assert not np.allclose(before["exp"], after["exp"])
    assert not np.allclose(before["weights"], after["weights"])


# -- the receipt: FLOPs as areas ------------------------------------------------------------------------------
def check_costs(bundle):
    with pytest.MonkeyPatch.context() as mp:
        scene = recorded(bundle, "Mixing", mp)
    (squares,) = scene.pictures["CostSquares"]
    f = cost_facts(bundle.ledger())
    areas = np.array([sq.width * sq.height for sq in squares.squares])
    big = f["sides"] * squares.squares[0].width >= 0.03          # drawn to scale (a speck has a least size)
    np.testing.assert_allclose(areas[big] / areas[0], f["flops"][big] / f["flops"][0], rtol=1e-3)
    for n in f["flops"]:
        assert N.fmt_int(int(n)) in scene.built_texts
    assert N.fmt_int(f["total"]) in scene.built_texts and f["total"] == f["flops"].sum()
    return f


def test_the_receipt_draws_each_steps_flops_as_an_area(tiny_bundle, tiny_long_bundle):
    short, long = check_costs(tiny_bundle), check_costs(tiny_long_bundle)
    assert long["share"][1] > short["share"][1]      # more tokens: the score grid's share of the bill grows
