"""Chapters 01 and 02 for a Llama-style decoder (issue 49): no position table (chapter 01 says where
positions went and what the rotation's speeds reach), RoPE and grouped-query attention (chapter 02).

Each picture is checked against the bundle's own numbers (SmolLM2-135M-Instruct's real weights),
then against a copy of the bundle with those numbers changed: the picture must change with them.
"""
from __future__ import annotations

import numpy as np
import pytest

from onepass.data import bundle as bundle_mod
from onepass.data import extract, flops
from onepass.data.facts.ch01 import rope_speeds, stretch_rule
from onepass.data.facts.ch02 import gqa_facts, rope_facts, rotate
from onepass.scenes import attention_pictures_ch02 as pictures
from onepass.scenes import ch01_embeddings
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words
from tests.helpers import build_scene


def recorded(bundle, chapter, scene, monkeypatch, kinds, module=pictures, method=None):
    """The scene dry-run, with `.pictures[kind]` = every picture of that kind it built."""
    seen = {kind: [] for kind in kinds}
    for kind in kinds:
        cls = getattr(module, kind)
        original = cls.__init__

        def init(self, *args, _original=original, _kind=kind, **kwargs):
            _original(self, *args, **kwargs)
            seen[_kind].append(self)
        monkeypatch.setattr(cls, "__init__", init)
    s = build_scene(bundle, chapter, scene, draw=False)
    s.pictures = seen
    return s


def copy_with(bundle, folder, change):
    t = {k: np.array(v) for k, v in bundle.tensors.items()}
    change(t)
    meta = {k: v for k, v in bundle.meta.items() if k not in ("schema_version", "tensors_sha256")}
    return bundle_mod.load(bundle_mod.save(folder, t, meta))


def angle_of(arrow) -> float:
    v = arrow.get_end() - arrow.get_start()
    return float(np.degrees(np.arctan2(v[1], v[0])))


# -- RoPE: the model's own pairing and speeds ----------------------------------------------------------
def test_rope_facts_turn_the_unturned_q_and_k_into_the_bundles_own(smollm2_bundle):
    r = rope_facts(smollm2_bundle)
    assert r["check"] < 1e-4                    # pairing i with i + dh/2 at rope_inv_freq: the model's q and k
    np.testing.assert_allclose(r["inv_freq"], smollm2_bundle["rope_inv_freq"])
    assert r["pairs"][0]["i"] == 0 and r["pairs"][-1]["i"] == len(r["inv_freq"]) - 1
    assert r["pairs"][0]["dims"] == (0, smollm2_bundle.shape.d_head // 2)
    # the score sees only the distance: every position moved on, the same number
    assert r["score_moved"] == pytest.approx(r["score"], rel=1e-6)
    h, kv = r["head_index"], r["kv_head"]
    assert kv == int(smollm2_bundle["kv_head"][h])
    assert r["score"] == pytest.approx(float(smollm2_bundle["scores_raw"][0, h, -1, r["key"]]), rel=1e-4)


def test_rotation_is_relative_for_any_vectors():
    rng = np.random.default_rng(0)
    inv = 1.0 / 10000 ** (np.arange(0, 8, 2) / 8)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
    for m, n, s in ((5, 2, 0), (5, 2, 37), (9, 6, 1000)):
        a = rotate(q, np.array([m + s]), inv)[0] @ rotate(k, np.array([n + s]), inv)[0]
        b = rotate(q, np.array([m]), inv)[0] @ rotate(k, np.array([n]), inv)[0]
        assert a == pytest.approx(b, rel=1e-9)


def check_dials(scene, bundle):
    r = rope_facts(bundle)
    (dials,) = scene.pictures["RopeDials"]
    for k, (dial, p) in enumerate(zip(dials.dials, r["pairs"])):
        _, before, after, _ = dial
        assert angle_of(before) == pytest.approx(np.degrees(np.arctan2(*p["before"][::-1])), abs=0.5)
        # the fastest pair's hand ends turned on by `shift` more positions (the relative-position demo)
        moved = p["per_token"] * r["shift"] if k == 0 else 0.0
        want = np.degrees(np.arctan2(*p["after"][::-1])) + moved
        assert (angle_of(after) - want + 180) % 360 - 180 == pytest.approx(0, abs=0.5)
    return [angle_of(d[2]) for d in dials.dials]


def test_the_rope_dials_are_the_bundles_q_before_and_after_and_change_with_it(smollm2_bundle, tmp_path, monkeypatch):
    s = recorded(smollm2_bundle, "02", "Scores", monkeypatch, ("RopeDials",))
    before = check_dials(s, smollm2_bundle)
    r = rope_facts(smollm2_bundle)
    assert N.fmt_fixed(r["score"], 2) in " ".join(s.built_texts)
    h = r["head_index"]

    def flip(t):      # the featured head's query turned half a turn: q_prerot and q negated
        t["q_prerot"][0, h] *= -1.0
        t["q"][0, h] *= -1.0
    changed = copy_with(smollm2_bundle, tmp_path / "b", flip)
    monkeypatch.undo()
    with pytest.MonkeyPatch.context() as mp:
        after = check_dials(recorded(changed, "02", "Scores", mp, ("RopeDials",)), changed)
    for a, b in zip(before, after):
        assert abs(((a - b) % 360) - 180) < 1.0


# -- grouped-query attention ---------------------------------------------------------------------------
def test_the_head_groups_are_the_bundles_kv_heads(smollm2_bundle, monkeypatch):
    s = recorded(smollm2_bundle, "02", "Projections", monkeypatch, ("HeadGroups",))
    (groups,) = s.pictures["HeadGroups"]
    kv = [int(x) for x in smollm2_bundle["kv_head"]]
    assert len(groups.queries) == 9 and len(groups.keys) == 3 and len(groups.values) == 3
    for h, link in enumerate(groups.links):
        assert np.allclose(link.get_end(), groups.keys[kv[h]].get_top(), atol=1e-6)
    g = gqa_facts(smollm2_bundle, smollm2_bundle.ledger())
    assert (g["cache"], g["cache_full"]) == (11_520, 34_560)
    assert g["cache"] == flops.kv_cache_numbers_per_token(smollm2_bundle.shape)
    assert g["qkv"] < g["qkv_full"] and g["scores"] == smollm2_bundle.ledger()["L0.scores"].flops
    shown = " ".join(s.built_texts)
    for n in (g["qkv"], g["qkv_full"], g["cache"], g["cache_full"]):
        assert N.fmt_int(n) in shown


def test_chapter_02_pays_the_rotation_on_the_meter(smollm2_bundle):
    s = build_scene(smollm2_bundle, "02", "Scores", draw=False)
    rope = s.step_text("L0.rope")
    assert rope in s.built_texts


# -- chapter 01 without a position table ---------------------------------------------------------------
def test_chapter_01_adds_no_positions_and_the_meter_holds(smollm2_bundle):
    s = build_scene(smollm2_bundle, "01", "Positions", draw=False)
    led = smollm2_bundle.ledger()
    assert s.meter_opening()[0] == led.before("L0.qkv")
    shown = " ".join(s.built_texts)
    assert s.text("no-table") in shown and s.text("no-additions") in shown
    assert N.fmt_int(smollm2_bundle.shape.n_positions) in shown
    assert s.text("position-vectors") not in s.built_texts          # no position grid is drawn


def chart_heights(bundle, monkeypatch):
    seen = []
    original = ch01_embeddings.Positions.speed_chart

    def spy(self, r):
        out = original(self, r)
        seen.append(out)
        return out
    monkeypatch.setattr(ch01_embeddings.Positions, "speed_chart", spy)
    build_scene(bundle, "01", "Positions", draw=False)
    (chart,) = seen
    return np.array([bar.height for bar in chart.bars]), chart


def test_the_speed_chart_is_the_models_own_frequencies_and_changes_with_them(smollm2_bundle, tmp_path, monkeypatch):
    heights, chart = chart_heights(smollm2_bundle, monkeypatch)
    r = rope_speeds(smollm2_bundle)
    logs = np.log10(r["turn"])
    np.testing.assert_allclose(heights / heights.max(), logs / logs.max(), rtol=1e-3)
    assert len(chart.over) == r["unfinished"] == int((r["turn"] > 8192).sum())
    assert len(chart.ghosts) == r["slowed"] > 0
    monkeypatch.undo()

    def slower(t):
        t["rope_inv_freq"] = t["rope_inv_freq"] / 4.0
    changed = copy_with(smollm2_bundle, tmp_path / "c", slower)
    with pytest.MonkeyPatch.context() as mp:
        heights2, chart2 = chart_heights(changed, mp)
    assert len(chart2.over) > len(chart.over)
    assert heights2[0] > heights[0]


def test_llama3_rule_slows_slow_pairs_by_its_factor_and_keeps_fast_ones(smollm2_bundle):
    r = rope_speeds(smollm2_bundle)
    assert r["stretch_factor"] == 32
    inv = np.asarray(smollm2_bundle["rope_inv_freq"], dtype=np.float64)
    params = {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    new = stretch_rule(inv, params)
    assert new[0] == inv[0] and new[-1] == pytest.approx(inv[-1] / 32)


# -- the words ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_modern_lines_say_what_is_true_for_the_model(smollm2_bundle, lang):
    words = Words.load(lang)
    led = smollm2_bundle.ledger()
    for chapter in ("01", "02"):
        lines = script.chapter_lines(chapter, smollm2_bundle, led, words)
        described = script.chapter_descriptions(chapter, smollm2_bundle, led, words)
        text = " ".join(l.text for l in lines.values()) + " ".join(d.text for d in described.values())
        assert "GPT-2" not in text, (chapter, lang)
        assert "LayerNorm" not in text
    ch02 = script.chapter_lines("02", smollm2_bundle, led, words)
    assert "11" in ch02["qkv"].text and "34" in ch02["qkv"].text      # 11,520 and 34,560 as this language says them


def test_gpt2_lines_keep_their_wording(tiny_bundle):
    words = Words.load("en")
    led = tiny_bundle.ledger()
    ch01 = script.chapter_lines("01", tiny_bundle, led, words)
    assert "GPT-2" in ch01["table"].text and "additions" in ch01["add"].text
    ch02 = script.chapter_lines("02", tiny_bundle, led, words)
    assert "LayerNorm" in ch02["inputs"].text and "pair" not in ch02["agree"].text


def test_random_weight_llama_lines_keep_their_caveats(tmp_path):
    b = extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=tmp_path, log=lambda m: None)
    assert b.synthetic
    words = Words.load("en")
    ch01 = script.chapter_lines("01", b, b.ledger(), words)
    assert "never trained" in ch01["learned"].text and "GPT-2" not in ch01["learned"].text
    for scene in ("Lookup", "Meaning", "Positions"):
        build_scene(b, "01", scene, draw=False)
    build_scene(b, "02", "Projections", draw=False)


# -- Qwen3's q/k norm: shown where it acts, before the turn ---------------------------------------------
@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_a_qk_norm_is_said_and_drawn_before_the_turn_only_where_the_model_has_one(smollm2_bundle, tmp_path, lang):
    qwen = extract.extract("The cat sat on the", "tiny", model="qwen3-0.6b", root=tmp_path, log=lambda m: None)
    assert qwen.shape.qk_norm and not smollm2_bundle.shape.qk_norm
    words = Words.load(lang)
    label = words.text("ch02:rope-qknorm")
    said = {b.shape.qk_norm: script.chapter_lines("02", b, b.ledger(), words)["agree"].text
            for b in (qwen, smollm2_bundle)}
    norm_sentence = words.template("ch02-agree.qknorm").split("RoPE")[0].split(".")[0].split("۔")[0]
    assert norm_sentence and norm_sentence in said[True] and norm_sentence not in said[False]
    plain = lambda t: "".join(c for c in t if c not in "\u200e\u200f\u2066\u2067\u2068\u2069")   # bidi isolates
    shown = {b.shape.qk_norm: [plain(t) for t in build_scene(b, "02", "Scores", draw=False, lang=lang).built_texts]
             for b in (qwen, smollm2_bundle)}
    assert plain(label) in shown[True] and plain(label) not in shown[False]
