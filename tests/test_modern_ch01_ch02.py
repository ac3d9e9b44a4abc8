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
from onepass.data.facts.ch02 import gqa_facts, qknorm_facts, rope_facts, rotate
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


_BUILT: dict = {}


def built_once(bundle, chapter: str, scene: str, lang: str = "en"):
    """A plain dry run (nothing patched, nothing recorded) of `bundle`'s scene in `lang`, made once for
    this module: several tests read the same Scores scene's texts (each dry run takes seconds)."""
    key = (str(bundle.path), chapter, scene, lang)
    if key not in _BUILT:
        _BUILT[key] = build_scene(bundle, chapter, scene, draw=False, lang=lang)
    return _BUILT[key]


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
    s = built_once(smollm2_bundle, "02", "Scores")
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
@pytest.fixture(scope="module")
def qwen_bundle(tmp_path_factory):
    """'The cat sat on the' through Qwen3-0.6B's architecture at the tiny size (random weights)."""
    return extract.extract("The cat sat on the", "tiny", model="qwen3-0.6b", root=tmp_path_factory.mktemp("qwen"),
                           log=lambda m: None)


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_a_qk_norm_is_said_and_drawn_before_the_turn_only_where_the_model_has_one(smollm2_bundle, qwen_bundle, lang):
    qwen = qwen_bundle
    assert qwen.shape.qk_norm and not smollm2_bundle.shape.qk_norm
    words = Words.load(lang)
    label = words.text("ch02:rope-qknorm")
    said = {b.shape.qk_norm: script.chapter_lines("02", b, b.ledger(), words)["agree"].text
            for b in (qwen, smollm2_bundle)}
    norm_sentence = words.template("ch02-agree.qknorm").split("RoPE")[0].split(".")[0].split("۔")[0]
    assert norm_sentence and norm_sentence in said[True] and norm_sentence not in said[False]
    plain = lambda t: "".join(c for c in t if c not in "\u200e\u200f\u2066\u2067\u2068\u2069")   # bidi isolates
    shown = {b.shape.qk_norm: [plain(t) for t in built_once(b, "02", "Scores", lang).built_texts]
             for b in (qwen, smollm2_bundle)}
    assert plain(label) in shown[True] and plain(label) not in shown[False]
    title = plain(words.text("ch02:qknorm-title"))
    assert title in shown[True] and title not in shown[False]


def bar_heights(bars) -> np.ndarray:
    """Signed heights of a signed_bars group's bars (up from the baseline positive)."""
    base = bars[0].get_y()
    return np.array([b.height if b.get_y() >= base else -b.height for b in bars[1]])


def test_the_qk_norm_picture_draws_the_bundles_rows_and_changes_with_them(qwen_bundle, tmp_path, monkeypatch):
    """The query's bars are its numbers before the norm (and after: the bundle's q_prerot), the rms under
    them is the row's; a bundle whose pre-norm query is three times larger draws and says a three times
    larger rms, and the same row after the norm."""
    f = qknorm_facts(qwen_bundle)
    assert f["q"]["check"] < 1e-5 and f["k"]["check"] < 1e-5        # row / rms × gain == the model's output
    np.testing.assert_allclose(f["q"]["rms_unit"], 1.0, atol=1e-4)
    h = f["head_index"]

    def picture(bundle):
        s = recorded(bundle, "02", "Scores", monkeypatch, ["NormColumn"])
        q, k = s.pictures["NormColumn"]
        return q, k, s.built_texts

    q, k, texts = picture(qwen_bundle)
    before = bar_heights(q.before)
    scale = before[np.argmax(np.abs(before))] / f["q"]["before"][np.argmax(np.abs(before))]
    np.testing.assert_allclose(before, f["q"]["before"] * scale, rtol=1e-3, atol=0.011)   # min bar 0.01
    np.testing.assert_allclose(bar_heights(q.after), f["q"]["after"] * scale, rtol=1e-3, atol=0.011)
    rms = N.fmt_fixed(float(f["q"]["rms"][-1]), 2)
    assert q.rms.text.endswith(rms)

    def triple(t):      # the featured head's last query, three times larger before the norm
        t["q_prenorm"][0, h, -1] *= 3.0
    bigger = copy_with(qwen_bundle, tmp_path / "big", triple)
    g = qknorm_facts(bigger)
    assert g["q"]["rms"][-1] == pytest.approx(3 * f["q"]["rms"][-1], rel=1e-4)   # ε inside the root
    q3, _, texts3 = picture(bigger)
    tripled = N.fmt_fixed(float(g["q"]["rms"][-1]), 2)
    assert tripled != rms and q3.rms.text.endswith(tripled)
    after3 = bar_heights(q3.after)                   # the row after the norm: the same numbers as before
    i = int(np.argmax(np.abs(after3)))
    np.testing.assert_allclose(g["q"]["after"], f["q"]["after"], rtol=1e-5, atol=1e-6)
    # before and after on one scale: the bars before grew three times against the bars after
    np.testing.assert_allclose(bar_heights(q3.before), g["q"]["before"] * after3[i] / g["q"]["after"][i],
                               rtol=1e-3, atol=0.011)
    said = script.chapter_lines("02", bigger, bigger.ledger(), Words.load("en"))["agree"].text
    assert N.fmt_fixed(float(g["q"]["rms"][-1]), 2) in said


def test_the_qk_norm_bars_grow_out_of_their_baseline_both_ways():
    """Each bar grows from the baseline: a positive one upward, a negative one downward (grown from its
    own bottom edge, a negative bar came down from its far end)."""
    from onepass.scenes.ch02_attention import grow_from_base
    vec = np.array([0.5, -0.8, 0.0, -0.01, 1.0])
    bars = pictures.signed_bars(vec, scale=1.0, width=2.0, colour=pictures.S.QUERY)
    base = bars[0].get_y()
    grows = grow_from_base(bars)
    assert len(grows) == len(vec)
    for g, bar, v in zip(grows, bars[1], vec):
        assert g.point[1] == pytest.approx(base, abs=1e-9)          # every bar starts on the baseline
        assert (bar.get_y() > base) == (v >= 0)                      # and grows away from it, its own way


def qknorm_table(scene, f):
    """The q/k norm's 'why' table among the NumberGrids a Scores dry run built: rms before and after."""
    grids = [g for g in scene.pictures["NumberGrid"] if g.values.shape[0] == 4
             and np.allclose(g.values[1], f["q"]["rms_after"]) and np.allclose(g.values[2], f["k"]["rms"])]
    assert len(grids) == 1
    return grids[0]


def test_the_qk_norm_table_draws_after_the_norm_in_one_quiet_fill_its_numbers_readable(qwen_bundle, monkeypatch):
    """Before the norm each token's rms takes the signed scale's colour (its own size); after it, every
    cell one fill, not the scale's loud top (every rms after a synthetic norm is 1, the table's largest),
    and its numbers read on it at 4.5:1 (WCAG 1.4.3)."""
    from onepass.scenes import ch02_attention, widgets
    f = qknorm_facts(qwen_bundle)
    s = recorded(qwen_bundle, "02", "Scores", monkeypatch, ["NumberGrid"], module=widgets)
    table = qknorm_table(s, f)
    after = ch02_attention.AFTER_NORM
    assert after not in (pictures.S.POSITIVE, pictures.S.NEGATIVE)
    ground = pictures.S._luminance(after)
    for r in (1, 3):
        for cell in table.row_cells(r):
            assert cell.get_fill_color().to_hex() == after.to_hex()
        for number in table.row_values(r):
            ink = pictures.S._luminance(number.get_color())
            assert (max(ink, ground) + 0.05) / (min(ink, ground) + 0.05) >= 4.5
    fills = {c.get_fill_color().to_hex() for r in (0, 2) for c in table.row_cells(r)}
    assert after.to_hex() not in fills                               # before: the scale's colours, not the quiet one


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_the_qk_norm_gain_says_synthetic_gains_are_untrained_only_for_synthetic_weights(qwen_bundle, tmp_path, lang):
    """Synthetic weights' gains are all 1: the gain line says they were never trained; the same bundle
    marked as real weights shows the plain line."""
    plain = lambda t: "".join(c for c in t if c not in "\u200e\u200f\u2066\u2067\u2068\u2069")   # bidi isolates
    words = Words.load(lang)
    gains = np.concatenate([qknorm_facts(qwen_bundle)[x]["gain"] for x in "qk"])
    with N.language(lang):
        low, high = (N.fmt_fixed(float(v), 2) for v in (gains.min(), gains.max()))
    t = {k: np.array(v) for k, v in qwen_bundle.tensors.items()}
    meta = {k: v for k, v in qwen_bundle.meta.items() if k not in ("schema_version", "tensors_sha256")}
    meta["weights"] = dict(meta["weights"], synthetic=False)
    real = bundle_mod.load(bundle_mod.save(tmp_path / "real", t, meta))
    assert qwen_bundle.synthetic and not real.synthetic
    shown = {b.synthetic: [plain(x) for x in built_once(b, "02", "Scores", lang).built_texts]
             for b in (qwen_bundle, real)}
    for key, synthetic in (("ch02:qknorm-gain-synthetic", True), ("ch02:qknorm-gain", False)):
        line = plain(words.text(key, low=low, high=high))
        assert line in shown[synthetic] and line not in shown[not synthetic]


@pytest.mark.parametrize("lang", ["es", "ur"])
def test_the_qk_norm_beat_reads_on_frame_in_spanish_and_urdu_with_no_english(qwen_bundle, lang, monkeypatch):
    """Qwen3's chapter 02 (the q/k norm's bars, steps, gain line and table) in Spanish and Urdu: nothing
    off-frame, too small or touching at any beat's end, and no English word on screen ('rms' is a symbol,
    as 'exp' is: Urdu writes it in Latin letters, as chapter 03's RMSNorm notes do)."""
    from tests.helpers import english_on_screen, frame_checks
    built = []
    problems = frame_checks(qwen_bundle, "02", "Scores", monkeypatch, lang=lang, built=built)
    assert problems == [], "\n".join(problems)
    assert english_on_screen(built[0], qwen_bundle, lang) == []


@pytest.mark.parametrize("which", ["smollm2", "gpt2"])
def test_a_model_without_a_qk_norm_has_no_qk_norm_beat(smollm2_bundle, tiny_bundle, which, monkeypatch):
    b = smollm2_bundle if which == "smollm2" else tiny_bundle
    assert qknorm_facts(b) is None and "q_prenorm" not in b.tensors
    s = recorded(b, "02", "Scores", monkeypatch, ["NormColumn"])
    assert s.pictures["NormColumn"] == []


def test_the_captures_cross_check_fails_on_a_wrong_qk_norm_gain():
    """capture.cross_check recomputes the q/k norm from the captured pre-norm rows and the gain: a
    gain off by a little is a bug in the hooks, caught before a bundle is written."""
    import torch
    from onepass.data import models
    from onepass.data.arch.base.spec import CaptureError
    import importlib
    capture = importlib.import_module("onepass.data.arch.llama.capture")   # the package's `capture` is the function
    card = models.get("qwen3-0.6b")
    model = capture.synthetic_model(card.tiny_config(), card.hf_class)
    with torch.no_grad():                       # gains other than the init's ones, so a wrong one shows
        for layer in model.model.layers:
            layer.self_attn.q_norm.weight.uniform_(0.5, 2.0)
            layer.self_attn.k_norm.weight.uniform_(0.5, 2.0)
    c = capture.capture(model, [1, 2, 3, 4])
    t = capture.derive(c, [1, 2, 3, 4], extract.model_shape(model, card)[0])
    checks = capture.cross_check(t, c)
    assert checks["qk_norm_q_vs_model"] < 1e-5 and checks["qk_norm_k_vs_model"] < 1e-5
    assert t["q_prenorm"].shape == t["q_prerot"].shape                  # [L, H, T, dh]
    assert t["k_prenorm"].shape == t["k_prerot"].shape and t["q_norm_w"].shape == (2, 16)   # [L, KV, T, dh], [L, dh]
    for name in ("q_norm_w", "k_norm_w"):
        wrong = dict(t, **{name: t[name] * 1.01})
        with pytest.raises(CaptureError, match=f"qk_norm_{name[0]}_vs_model"):
            capture.cross_check(wrong, c)


def test_the_agreement_fan_keeps_each_tag_off_other_arrowheads_and_inside_its_height(smollm2_bundle):
    """SmolLM2's keys 'The', '·sat' and '·on' point nearly the same way: '·on''s tag sat on the arrowhead of
    'The', and the tags stacked above them rose into the subtitle over the picture."""
    from onepass.data.facts.ch02 import agreement_facts
    b = smollm2_bundle
    f, rows = agreement_facts(b), list(range(b.T))
    free = pictures.AgreementFan(f, b.tokens, rows, b.T - 1, radius=2.0)

    def apart(a, c):
        return (a.get_left()[0] >= c.get_right()[0] or a.get_right()[0] <= c.get_left()[0]
                or a.get_bottom()[1] >= c.get_top()[1] or a.get_top()[1] <= c.get_bottom()[1])
    for i, tag in enumerate(free.tags):
        assert all(apart(tag, key.tip) for j, key in enumerate(free.keys) if j != i), i
    fitted = pictures.AgreementFan(f, b.tokens, rows, b.T - 1, radius=2.0, height=free.height - 0.5)
    assert fitted.height <= free.height - 0.5
    assert all(apart(tag, key.tip) for i, tag in enumerate(fitted.tags) for j, key in enumerate(fitted.keys) if j != i)


def test_the_head_groups_names_keep_the_films_size_in_spanish():
    """'cabezas de consulta' was squeezed into the 1.6 an English name fits, to about 60% of S.SMALL."""
    from onepass.scenes import style as S
    from onepass.scenes.text import label
    names = ("cabezas de consulta", "cabezas de clave", "cabezas de valor")
    picture = pictures.HeadGroups([0, 0, 0, 1, 1, 1, 2, 2, 2], 8, names, width=S.TEXT_W * 0.6)
    for shown, text in zip(picture.names, names):
        assert shown.height == pytest.approx(label(text, S.SMALL, S.QUERY).height, rel=0.01)
    assert picture.width <= S.TEXT_W * 0.6 + 1e-6


def test_the_speed_charts_labels_and_note_boxes_keep_clear_of_the_frames(smollm2_bundle, monkeypatch):
    """The review (issue 49): the axis title on the tick labels' glow, 'a turn every 6 tokens' and the trained
    length's name starting on its edge, the Llama 3.2 note's box on the box above it. Frames against frames
    are not in tests/helpers.texts_across_frames (it checks texts against frames), so here: a gap of GAP.s
    (the chart's GAP.m, fit to the content)."""
    from onepass.scenes.layout import GAP
    _, c = chart_heights(smollm2_bundle, monkeypatch)
    frame = c.tick_frame
    assert c.name.get_bottom()[1] - frame.get_top()[1] >= GAP.xs
    for words in (c.fast, c.line_name):
        assert words.get_left()[0] - frame.get_right()[0] >= GAP.s
    assert c.beyond_glow.get_bottom()[1] - c.ghost_glow.get_top()[1] >= GAP.s
    assert c.line_name.get_right()[0] < min(bar.get_left()[0] for bar in c.over)
