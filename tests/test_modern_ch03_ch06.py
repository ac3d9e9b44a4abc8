"""Chapters 03 and 06 for a Llama-style decoder (issue 49): heads grouped over key/value heads,
RMSNorm on the bundle's own rms, SwiGLU's three matrices against GPT-2's two at 4·d (chapter 03);
the KV cache with grouped-query attention against the same model without it and against GPT-2
small, a full trained context's bytes, the trained length in the n² squares, and the model drawn
beside GPT-2's family as a model of its own (chapter 06).

Each figure is checked against the bundle's own numbers (SmolLM2-135M-Instruct's real weights);
the pictures are then built from a copy of a bundle with those numbers changed, and must change.
"""
from __future__ import annotations

import numpy as np
import pytest

from onepass.data import extract, flops
from onepass.data.facts.ch03 import head_groups, head_panels, rms_facts, swiglu_facts
from onepass.data.facts.ch06 import family_facts, kv_facts, loop_facts
from onepass.voiceover import script
from onepass.words.catalog import Words
from tests.helpers import altered_bundle, build_scene


@pytest.fixture(scope="module")
def small_llama(bundle_root):
    """A fast two-layer bundle of SmolLM2's architecture (random weights)."""
    return extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=bundle_root,
                           log=lambda m: None)


def lines(chapter, bundle, lang="en"):
    words = Words.load(lang)
    return {beat: line.text for beat, line in
            script.chapter_lines(chapter, bundle, flops.forward_ledger(bundle.shape, bundle.T), words).items()}


# ---------------------------------------------------------------------------------------------- ch03
def test_heads_grouped_over_key_value_heads(smollm2_bundle):
    b = smollm2_bundle
    heads = head_panels(b, 8)
    assert heads == list(range(9))
    assert head_groups(b, heads) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]      # 9 query heads over 3


def test_gpt2_heads_are_not_grouped(tiny_bundle):
    heads = head_panels(tiny_bundle, 0)
    assert head_groups(tiny_bundle, heads) == [[h] for h in heads]


def test_rmsnorm_divides_by_the_bundles_rms(smollm2_bundle):
    b = smollm2_bundle
    f = rms_facts(b)
    last = b.T - 1
    assert f["rms"] == pytest.approx(float(b["rms1"][0, last]))
    x = np.asarray(b["resid_pre"][0, last], dtype=np.float64)
    assert f["rms"] == pytest.approx(float(np.sqrt(np.mean(x ** 2))), rel=1e-3)       # root mean square
    assert f["normed_rms"] == pytest.approx(1.0, abs=1e-3)
    assert f["normed_mean"] == pytest.approx(f["mean"] / f["rms"])       # no mean taken off
    assert f["per_token"] == pytest.approx([float(v) for v in b["rms1"][0]])
    assert all(r == pytest.approx(1.0, abs=1e-3) for r in f["reads"])


def test_swiglu_at_eight_thirds_costs_what_two_cost_at_four(smollm2_bundle):
    b = smollm2_bundle
    ledger = flops.forward_ledger(b.shape, b.T)
    sw = swiglu_facts(b, ledger)
    assert b.shape.d_ff == 1536 and b.shape.n_embd == 576
    assert sw["width_ratio"] == pytest.approx(8 / 3)
    assert sw["three"] == sw["two_at_4d"] == 2 * 576 * 4 * 576
    share = sum(ledger[f"L0.{k}"].flops for k in ("mlp_gate", "mlp_up", "mlp_down")) / ledger.layer_flops(0)
    assert sw["mlp_share"] == pytest.approx(share)


def test_swiglu_ratio_is_computed_not_assumed(smollm2_bundle):
    """Another width gives another ratio (Qwen3-0.6B's 3,072 at d 1,024: 9/8)."""
    from dataclasses import replace
    from types import SimpleNamespace
    shape = replace(smollm2_bundle.shape, n_embd=1024, n_inner=3072)
    sw = swiglu_facts(SimpleNamespace(shape=shape), flops.forward_ledger(shape, 5))
    assert sw["vs_two"] == pytest.approx(9 / 8)


def test_ch03_lines_say_what_is_true_of_smollm2(smollm2_bundle):
    for lang in ("en", "es", "ur"):
        said = lines("03", smollm2_bundle, lang)
        assert "GELU" not in " ".join(said.values()), lang
        assert "RMSNorm" in said["norm"] and "RMSNorm" in said["mlp_up"] or "SiLU" in said["mlp_up"], lang
        assert "9" in said["heads"] and "3" in said["heads"], lang
    said = lines("03", smollm2_bundle)
    assert "just as many parameters as" in said["params"]
    assert "position" not in said["climb_total"].replace("no position table", "")
    assert "three products" in said["mlp_down"]


def test_gpt2_ch03_lines_unchanged(tiny_bundle):
    said = lines("03", tiny_bundle)
    assert "LayerNorm" in said["norm"] and "GELU" in said["mlp_up"]
    assert "positions from chapter one" in said["climb_total"]


def test_norm_picture_follows_the_bundles_rms(small_llama, tmp_path):
    """Doubling the stream (and so its rms) changes what the RMSNorm picture writes."""
    before = build_scene(small_llama, "03", "Mlp", draw=False)
    changed = altered_bundle(small_llama, tmp_path, tensors=lambda t: (t.__setitem__("rms1", t["rms1"] * 2),
                                                                       t.__setitem__("resid_pre", t["resid_pre"] * 2)))
    after = build_scene(changed, "03", "Mlp", draw=False)
    rms_line = [t for t in before.built_texts if t.startswith("rms entering layer 1")]
    assert rms_line and rms_line != [t for t in after.built_texts if t.startswith("rms entering layer 1")]
    assert any("SiLU(x · W_gate)" in t for t in before.built_texts)
    assert not any("GELU" in t for t in before.built_texts)


def test_split_draws_key_value_slices(small_llama):
    s = build_scene(small_llama, "03", "Heads", draw=False)
    sh = small_llama.shape
    assert any(t.startswith(f"k, v: {sh.kv_heads} heads × {sh.d_head}") for t in s.built_texts)
    assert any(t.startswith("outlined:") for t in s.built_texts)


# ---------------------------------------------------------------------------------------------- ch06
def test_kv_cache_with_and_without_gqa(smollm2_bundle):
    f = loop_facts(smollm2_bundle)
    assert f["per_token"] == 2 * 30 * 3 * 64 == 11_520
    assert f["per_token_full"] == 2 * 30 * 9 * 64 == 34_560
    assert f["gpt2_small_kv"] == 18_432
    assert f["context_bytes"] == flops.kv_cache_bytes(smollm2_bundle.shape, 8192) == 8192 * 11_520 * 2


def test_cache_grids_read_the_key_value_head(smollm2_bundle):
    b = smollm2_bundle
    kv = kv_facts(b)
    g = b.shape.kv_head_of(kv["head"])
    assert kv["kv_head"] == g
    assert np.array_equal(kv["k"], b["k"][0, g]) and np.array_equal(kv["v"], b["v"][0, g])
    assert np.array_equal(kv["q"], b["q"][0, kv["head"]])


def test_family_row_is_the_model_itself(smollm2_bundle):
    rows = family_facts(smollm2_bundle)
    ours = next(r for r in rows if r["ours"])
    assert ours["model"] == "smollm2-135m-instruct" and ours["kv_numbers"] == 11_520
    assert Words.load().model_name(ours["model"]) == "SmolLM2-135M-Instruct"


def test_ch06_lines_say_what_is_true_of_smollm2(smollm2_bundle):
    said = lines("06", smollm2_bundle)
    assert "11,520" in said["cache"] and "34,560" in said["cache"] and "8,192" in said["cache"]
    assert "18,432" in said["family"] and "fewer than" in said["family"]
    assert "1,024" not in " ".join(said.values())
    assert "GPT-2's limit" not in " ".join(said.values())
    assert "SmolLM2-135M-Instruct" in said["family"] and "GPT-2-shaped" not in " ".join(said.values())
    for lang in ("es", "ur"):
        said = lines("06", smollm2_bundle, lang)
        assert "GPT-2-shaped" not in " ".join(said.values())


def test_cache_formula_follows_the_shape(small_llama):
    s = build_scene(small_llama, "06", "Cache", draw=False)
    sh = small_llama.shape
    per = 2 * sh.n_layer * sh.kv_heads * sh.d_head
    assert any(t.startswith(f"per token: 2 × {sh.n_layer} layers × {sh.kv_heads} heads × {sh.d_head}") and f"{per:,}" in t
               for t in s.built_texts)
    assert any(t.startswith("without GQA") for t in s.built_texts)


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_gated_mlps_value_windows_are_legible_in_every_language(smollm2_bundle, lang, monkeypatch):
    """Issue 49: beside SmolLM2's wide gated MLP the output window's caption (Spanish 'salida: primeros 3 de
    576') shrank under the film's size floor; a caption that would goes on two lines, name over count. Issue 52:
    English's chart title over the stream's rms ('the stream's rms entering each layer') drew at 18.3 pt."""
    from tests.helpers import frame_checks
    built = []
    problems = frame_checks(smollm2_bundle, "03", "Mlp", monkeypatch, lang=lang, built=built)
    assert problems == [], "\n".join(problems)
    assert lang != "es" or any(t.startswith("salida:") for t in built[0].built_texts), built[0].built_texts


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_serving_plot_keeps_ticks_and_picks_apart_in_every_language(smollm2_bundle, lang, monkeypatch):
    """SmolLM2's chapter 06 in Spanish: the longer regime ('depende del cómputo') narrowed the log axis until
    '10.000' touched '100.000', and the two-line balance notes lowered the plot onto the footer, where the
    answer's picks then streamed in over the tick values. Each share bar fills from the reading start."""
    from manim import LEFT, RIGHT

    from tests.helpers import box, frame_checks
    built = []
    problems = frame_checks(smollm2_bundle, "06", "Square", monkeypatch, lang=lang, built=built)
    assert problems == [], "\n".join(problems)
    scene = built[0]
    p = scene.plot_parts
    values = [tick[0] for tick in p["ticks"]]
    ordered = sorted(values, key=lambda m: m.get_x())
    gaps = [box(b)[0] - box(a)[1] for a, b in zip(ordered, ordered[1:])]
    assert min(gaps) >= 0.1, gaps                      # GAP.s apart, within the outlines' rounding
    picks = box(p["stream"])
    for m in [*values, *[r[k] for r in p["bars"].values() for k in ("tag", "value", "name", "rect")]]:
        left, right, bottom, top = box(m)
        assert right <= picks[0] or left >= picks[1] or top <= picks[2] or bottom >= picks[3], string_or(m)
    start = RIGHT if lang == "ur" else LEFT
    for panel in scene.square_parts:
        edge = panel["fill"].get_edge_center(start)[0]
        assert edge == pytest.approx(panel["track"].get_edge_center(start)[0], abs=1e-6)


def string_or(m) -> str:
    return getattr(m, "text", type(m).__name__)


def test_the_reply_bills_start_on_the_reading_side_in_urdu(smollm2_bundle):
    """Right to left, the reply's two bills (with and without the cache) grow from the right, their names over
    them on the right, as the cost table's bars do."""
    from onepass.scenes import style as S
    scene = build_scene(smollm2_bundle, "06", "Scale", draw=False, lang="ur")
    for name, bar, num in scene.reply_parts:
        assert bar.get_right()[0] == pytest.approx(S.TEXT.right, abs=1e-6)
        assert name.get_right()[0] == pytest.approx(bar.get_right()[0], abs=1e-6)
        assert num.get_right()[0] < bar.get_left()[0]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_group_outlines_share_one_width_and_the_settle_note_stays_under_the_header(smollm2_bundle, lang):
    """SmolLM2's chapter 03: Spanish 'cabeza 9 · primer token' widened only its own group's outline (a group
    that looked different), and the two-line '= final answer / layer 30' beside the lens's top row rose into
    the header over it."""
    heads = build_scene(smollm2_bundle, "03", "Heads", draw=False, lang=lang)
    boxes = heads.panels()[1]["boxes"]
    assert len(boxes) == smollm2_bundle.shape.kv_heads
    assert len({round(x.width, 6) for x in boxes}) == 1
    lens = build_scene(smollm2_bundle, "03", "Lens", draw=False, lang=lang).lens_parts
    assert lens["note"].get_top()[1] < lens["header"].get_bottom()[1]
    assert lens["note"].get_top()[1] <= lens["box"].get_top()[1] + 1e-6


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_the_heads_are_laid_out_from_the_reading_side(smollm2_bundle, lang):
    """Chapter 03's head panels and the width's slices under them read in the film's direction: head 1 on the
    left in English, on the right in Urdu (the film lays sequences out from where its reader starts, as
    chapter 06's bars fill), each row of panels and the row of slices alike."""
    import re

    from onepass.engine.text import string_of
    from tests.helpers import after_every_beat, shown_texts
    before = Words.load(lang).text("ch03:head-title", head="\0", habit="").split("\0")[0]     # "head " / "ہیڈ "
    head = re.compile(re.escape(before) + r"(\d+) · ")
    seen = {}

    def check(scene, key):
        seen[key] = [(int(m.group(1)), t.get_x(), round(t.get_y(), 1)) for mob in scene.mobjects
                     for t in shown_texts(mob) if (m := head.match(string_of(t).strip("\u200e\u2066\u2067\u2069")))]
        seen[key + "/numbers"] = [(int(string_of(t)), t.get_x(), round(t.get_y(), 1)) for mob in scene.mobjects
                                  for t in shown_texts(mob) if string_of(t).isdigit()]
    with pytest.MonkeyPatch.context() as mp, after_every_beat(mp, check):
        build_scene(smollm2_bundle, "03", "Heads", draw=False, lang=lang)
    sign = -1 if lang == "ur" else 1
    titles = sorted(seen["heads"])
    assert [h for h, _, _ in titles] == list(range(1, smollm2_bundle.shape.n_head + 1))
    for row in {y for _, _, y in titles}:
        xs = [x for _, x, y in titles if y == row]
        assert all(sign * (b - a) > 0 for a, b in zip(xs, xs[1:])), (row, xs)
    H = smollm2_bundle.shape.n_head
    rows = {y for n, _, y in seen["split/numbers"]}       # the slices' numbers: the row that holds 1 … H
    row = next(y for y in rows if sorted(n for n, _, y2 in seen["split/numbers"] if y2 == y) == list(range(1, H + 1)))
    slices = [x for _, x, y in sorted(seen["split/numbers"]) if y == row]
    assert all(sign * (b - a) > 0 for a, b in zip(slices, slices[1:])), slices
