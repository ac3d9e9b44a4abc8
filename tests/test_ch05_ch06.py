"""Chapters 05 and 06: what they show comes from the bundle and from the ledger's formulas.

The expected figures are computed here from first principles (2 FLOPs per multiply-add,
the config's shapes), not by calling the helpers under test, wherever that is practical.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from tests.helpers import build_scene
from onepass.data import tokenizer
from onepass.data.facts.ch05 import VISIBLE_CHANGE, mask_facts
from onepass.data.facts.ch06 import family_facts, loop_facts
from onepass.data.flops import (
    GPT2_SMALL, GPT3, GPT3_N_POSITIONS, LONG_CONTEXT, REPLY_TOKENS, Shape, causal_pairs, decode_step_flops,
    forward_ledger, generation_flops, human, kv_cache_bytes, kv_cache_numbers_per_token,
)
from onepass.scenes import style as S
from onepass.words import numbers as N
from onepass.scenes.widgets import token_window
from onepass.engine.text import string_of


def build(bundle, chapter, scene):
    """Dry-run a scene, skipping frame drawing when the fixture supports it (same texts, faster)."""
    if "draw" in inspect.signature(build_scene).parameters:
        return build_scene(bundle, chapter, scene, draw=False)
    return build_scene(bundle, chapter, scene)


def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cached_step(cfg, context):
    """One new token with a KV cache over `context` tokens, counted by hand."""
    L, d, V = cfg["n_layer"], cfg["n_embd"], cfg["vocab_size"]
    dff = cfg.get("n_inner") or 4 * d
    per_layer = 2 * d * 3 * d + 2 * context * d + 2 * context * d + 2 * d * d + 2 * d * dff + 2 * dff * d
    return d + L * per_layer + 2 * d * V


def shape_of(bundle):
    return Shape.from_config(bundle.config)


# -- the ledger helpers chapter 06 relies on ---------------------------------------------

def test_ledger_helpers_match_the_seeds_figures():
    assert kv_cache_numbers_per_token(GPT2_SMALL) == 2 * 12 * 768 == 18_432
    assert kv_cache_bytes(GPT2_SMALL, 1) == 18_432 * 2
    assert kv_cache_bytes(GPT2_SMALL, 5) == 5 * 36_864
    assert causal_pairs(1024) == 524_800                       # "~525,000"
    assert causal_pairs(LONG_CONTEXT) == pytest.approx(5e11, rel=1e-5)   # "~500 billion"
    # GPT-3 pays ~350 GFLOPs per token, GPT-2 small ~0.25 (2 FLOPs per weight)
    assert decode_step_flops(GPT3, 1) == pytest.approx(350e9, rel=0.01)
    assert decode_step_flops(GPT2_SMALL, 6) == pytest.approx(0.25e9, rel=0.02)
    # a 100-token reply from GPT-2 small after the 5-token prompt: ~25 billion FLOPs with the cache
    assert REPLY_TOKENS == 100
    assert generation_flops(GPT2_SMALL, 5, REPLY_TOKENS) == pytest.approx(25e9, rel=0.05)
    assert human(3.69e16) == "36.9P"


def test_generation_flops_is_prefill_plus_steps():
    s = GPT2_SMALL
    assert generation_flops(s, 5, 1) == forward_ledger(s, 5).total
    assert generation_flops(s, 5, 4) == forward_ledger(s, 5).total + sum(decode_step_flops(s, c) for c in (6, 7, 8))
    assert generation_flops(s, 5, 4, cached=False) == sum(forward_ledger(s, c).total for c in (5, 6, 7, 8))
    assert generation_flops(s, 5, 0) == 0
    # with one token of context a cached step is a whole pass over one token
    assert decode_step_flops(s, 1) == forward_ledger(s, 1).total


# -- chapter 05 ------------------------------------------------------------------------------

def test_unmasked_grid_is_the_row_softmax_of_the_same_scores(tiny_bundle):
    b = tiny_bundle
    f = mask_facts(b)
    h = b.featured_head(0)
    scores = b["scores_scaled"][0, h].astype(np.float64)
    np.testing.assert_allclose(f["full"], softmax_rows(scores), atol=1e-12)
    np.testing.assert_allclose(f["full"].sum(axis=1), 1.0, atol=1e-12)
    # the masked grid is the model's own weights: the softmax of the same scores with −∞ above the diagonal
    np.testing.assert_allclose(f["causal"], b["probs"][0, h], atol=1e-7)
    masked = np.where(np.triu(np.ones((b.T, b.T), bool), 1), -np.inf, scores)
    np.testing.assert_allclose(f["causal"], softmax_rows(masked), atol=1e-5)
    # the last row already sees every token: it cannot change; every earlier row can
    assert f["row_change"][-1] < VISIBLE_CHANGE
    assert b.T - 1 not in f["changed"]
    assert f["changed"] == [r for r in range(b.T) if np.abs(f["full"][r] - f["causal"][r]).max() >= VISIBLE_CHANGE]


@pytest.mark.parametrize("which", ["tiny_bundle", "tiny_long_bundle"])
def test_mask_off_scene_shows_both_grids_and_holds_the_meter(which, request):
    b = request.getfixturevalue(which)
    f = mask_facts(b)
    scene = build(b, "05", "MaskOff")
    texts = set(scene.built_texts)
    rows = token_window(b.T)
    for r in rows:
        for c in rows:
            assert N.fmt_pct(f["causal"][r, c]) in texts
            assert N.fmt_pct(f["full"][r, c]) in texts
        assert f"{100 * f['row_change'][r]:.1f} pts" in texts
    assert f"{len(f['changed'])} of {b.T} rows change" + (
        f"  ·  showing the last {len(rows)} of {b.T} tokens" if len(rows) < b.T else "") in texts
    # the same arithmetic, a different mask: the meter holds at one pass
    assert scene.meter.value == b.ledger().total
    e = b.ledger()["L0.scores"]
    assert e.flops == 2 * b.T * b.T * b.config["n_embd"]
    assert f"{e.flops:,}" in texts


def test_chapter05_narration_reads_the_grid(tiny_bundle):
    from onepass.voiceover import script
    from onepass.words.catalog import Words
    f = mask_facts(tiny_bundle)
    lines = script.chapter_lines("05", tiny_bundle, tiny_bundle.ledger(), Words.load("en"))
    r, c = f["big_row"], f["big_col"]
    changes = lines["changes"]
    # said as a speaker says them: one decimal, but no '.0' ('100 percent', not '100.0 percent')
    for p in (f["causal"][r, c], f["full"][r, c]):
        said = f"{100 * p:.1f}".removesuffix(".0")
        assert f"{said} percent" in changes.text
    opening = ("Every row but the last changes." if len(f["changed"]) == tiny_bundle.T - 1
               else f"{len(f['changed'])} of the {tiny_bundle.T} rows change.")
    assert changes.text.startswith(opening)
    # random weights: the line says so, and the picture has a marker for it besides its four steps
    assert changes.mark_names == ["random", "biggest", "weight", "last", "sees"]
    # the examples said are the ones the family columns show, as a list
    assert "BERT and embedding models for search" in lines["encoder_only"].text
    assert "GPT-3, LLaMA and Qwen3" in lines["decoder_only"].text
    assert "the 2017 Transformer, T5 and BART" in lines["encoder_decoder"].text


def test_chapter05_lists_no_model_whose_architecture_is_unpublished():
    """A family's examples are facts: each names a model whose design is published (a paper, a report, a
    released config), or a class of models; a model known only by name (issue 52: Claude) is refused."""
    from dataclasses import replace
    from onepass.data.facts.ch05 import FAMILIES, unsourced_examples
    assert unsourced_examples() == []
    decoder = next(f for f in FAMILIES if f.mask == "causal")
    assert unsourced_examples((replace(decoder, examples=decoder.examples + ("Claude",)),)) == ["Claude"]


def test_chapter05_family_words_are_the_facts_families(tiny_bundle):
    """The columns' words are catalog messages; in English they are FAMILIES' own (data/facts/ch05.py)."""
    from onepass.data.facts.ch05 import FAMILIES, ORIGINAL
    scene = build(tiny_bundle, "05", "Families")
    for fam in FAMILIES:
        words = scene.family_words(fam.mask)
        assert words["name"] == fam.name
        assert tuple(words["examples"]) == fam.examples
        assert tuple(words["can"]) == fam.can and tuple(words["cannot"]) == fam.cannot
    assert ORIGINAL in build(tiny_bundle, "05", "Towers").built_texts


# -- chapter 06 ------------------------------------------------------------------------------

def test_generated_steps_come_from_the_bundle(tiny_bundle):
    b = tiny_bundle
    f = loop_facts(b)
    gen = b.meta["generated"]
    assert len(f["steps"]) == len(gen) >= 4           # the prompt's own pick plus at least three more
    for i, (s, g) in enumerate(zip(f["steps"], gen)):
        assert s["context"] == g["context_tokens"] == b.T + i
        assert s["id"] == g["id"] == int(b["gen_topk_ids"][i, 0])
        assert s["text"] == g["text"] == tokenizer.decode([s["id"]])
        assert s["prob"] == pytest.approx(float(b["gen_topk_probs"][i, 0]))
        assert s["prob"] == pytest.approx(g["prob"], rel=1e-6)
        assert s["full"] == forward_ledger(shape_of(b), b.T + i).total
        assert s["cached"] == cached_step(b.config, b.T + i)
    # the first pick is the prompt pass's own top token
    assert f["steps"][0]["id"] == int(np.argmax(b["logits"][-1]))


def test_loop_scene_shows_each_step_and_the_meter_adds_full_passes(tiny_bundle):
    b = tiny_bundle
    f = loop_facts(b)
    scene = build(b, "06", "Loop")
    texts = set(scene.built_texts)
    for s in f["steps"]:
        assert S.show_token(s["text"]) in texts
        assert N.fmt_prob(s["prob"]) in texts
        assert f"over {s['context']} tokens" in texts
    for s in f["steps"][1:]:
        assert f"+{forward_ledger(shape_of(b), s['context']).total:,}" in texts
    assert scene.meter.value == sum(forward_ledger(shape_of(b), b.T + i).total for i in range(len(f["steps"])))


@pytest.mark.parametrize("which", ["tiny_bundle", "tiny_long_bundle"])
def test_kv_cache_figures_equal_the_formula(which, request):
    b = request.getfixturevalue(which)
    cfg = b.config
    L, d = cfg["n_layer"], cfg["n_embd"]
    per = 2 * L * d
    n = len(b.meta["generated"])
    scene = build(b, "06", "Cache")
    texts = set(scene.built_texts)
    assert f"per token: 2 × {L} layers × {d} = {per:,} numbers = {2 * per:,} bytes in fp16" in texts
    for tokens in range(b.T, b.T + n):        # one more row per generated step
        assert f"cache: {tokens} tokens · {tokens * per:,} numbers · {2 * tokens * per:,} bytes (fp16)" in texts
    for i in range(1, n):
        c = b.T + i
        full, cached = forward_ledger(shape_of(b), c).total, cached_step(cfg, c)
        assert f"pass over {c} tokens" in texts
        assert f"{full:,}" in texts and f"{cached:,}" in texts
        assert f"× {full / cached:.1f}" in texts
    assert scene.meter.value == loop_facts(b)["loop_total"]


def test_n_squared_bill_figures_equal_the_formula(tiny_bundle):
    b = tiny_bundle
    cfg = b.config
    L, d, T = cfg["n_layer"], cfg["n_embd"], b.T
    scene = build(b, "06", "Square")
    texts = set(scene.built_texts)
    for n in (T, cfg["n_positions"], LONG_CONTEXT):
        assert f"{n:,} tokens" in texts and f"{n * n:,} pairs" in texts
        grid = L * (2 * n * n * d + 2 * n * n * d)          # scores + mixing, every layer
        share = grid / forward_ledger(shape_of(b), n).total
        percent = f"{100 * share:.1f}%" if share >= 0.001 else f"{100 * share:.2g}%"
        assert f"{percent} of a pass\nscore grid: {human(grid)} FLOPs" in texts
    mask_line = next(t for t in texts if t.startswith("the mask allows"))
    for n in (T, cfg["n_positions"], LONG_CONTEXT):
        assert f"{n * (n + 1) // 2:,}" in mask_line
    # prefill vs decode with the bundle's own prompt: FLOPs per weight fetched, from the ledger
    params = b.meta["parameters"]["total"]
    assert f"{forward_ledger(shape_of(b), T).total / params:.1f}" in texts
    assert f"{cached_step(cfg, T + 1) / params:.1f}" in texts
    assert f"prefill: this prompt, {T} tokens" in texts


def test_scale_scene_prices_gpt3_and_a_reply(tiny_bundle):
    b = tiny_bundle
    T = b.T
    scene = build(b, "06", "Scale")
    texts = set(scene.built_texts)
    g3 = {"n_layer": 96, "n_head": 96, "n_embd": 12288, "vocab_size": 50257}
    assert (GPT3.n_layer, GPT3.n_head, GPT3.n_embd) == (96, 96, 12288)
    d, L = 12288, 96
    params = 50257 * d + GPT3_N_POSITIONS * d + L * (12 * d * d + 9 * d) + (2 * L + 1) * 2 * d  # + LayerNorms
    assert params == pytest.approx(175e9, rel=0.01)
    # GPT-3's row of the family table (onepass.data.facts.ch06.family_facts), its large counts in short form
    gpt3 = family_facts(b)[-1]
    assert (gpt3["key"], gpt3["params"], gpt3["token_flops"]) == ("gpt3", params, cached_step(g3, T + 1))
    assert {"96", "12,288", "175G", "349G", "2,359,296"} <= texts
    assert (N.fmt_short(params), N.fmt_short(cached_step(g3, T + 1))) == ("175G", "349G")
    replies = [forward_ledger(shape_of(b), T).total + sum(cached_step(b.config, c) for c in range(T + 1, T + 100)),
               sum(forward_ledger(shape_of(b), c).total for c in range(T, T + 100))]
    for flops in replies:
        assert f"{flops:,} FLOPs" in texts


def test_chapter_06_ratios_are_worked_out_once_for_screen_and_voice(tiny_bundle):
    """The ratios chapter 06 shows and speaks (FLOPs per weight, the cached step's saving, GPT-3 over
    GPT-2 per token) come from loop_facts, and the screen and the narration show the same figures."""
    from onepass.voiceover import script
    from onepass.words.catalog import Words
    b = tiny_bundle
    f = loop_facts(b)
    assert f["prefill_per_param"] == f["prefill"] / f["params"]
    assert f["decode_per_param"] == f["decode"] / f["params"]
    assert f["gpt3_ratio"] == f["gpt3_token"] / f["gpt2_token"]
    assert all(s["saving"] == s["full"] / s["cached"] for s in f["steps"])
    assert f["loop_added"] == f["loop_total"] - f["steps"][0]["full"]
    assert [c["tokens"] for c in f["cache"]] == [b.T] + [s["context"] for s in f["steps"][1:]]
    lines = {beat: line.text for beat, line in script.chapter_lines("06", b, b.ledger(), Words.load("en")).items()}
    texts = set(build(b, "06", "Square").built_texts) | set(build(b, "06", "Scale").built_texts)
    for key, line in (("prefill_per_param", "prefill"), ("decode_per_param", "decode")):
        assert N.fmt_ratio(f[key]) in texts
        assert f"about {N.fmt_ratio(f[key])} FLOPs per weight" in lines[line]
    assert f"same blueprint, × {f['gpt3_ratio']:,.0f} the bill per token" in texts
    assert f"That is {f['gpt3_ratio']:,.0f} times the bill" in lines["gpt3"]
    assert f"about {N.fmt_ratio(f['steps'][1]['saving'])} times less" in lines["cached_step"]


# the markers each chapter 06 line gives the picture, in the order they are said
CH06_MARKS = {
    "append": ["question", "pick", "no-memory", "appended", "runs-again"],
    "loop": ["passes", "recomputes", "each-pass"],
    "redundant": ["never-sees", "keys-values", "every-layer", "exactly"],
    "cache": ["kept", "leaves", "layers", "per-token", "rows", "untouched"],
    "cached_step": ["cached", "computes-only", "drops", "grows"],
    "square": ["every-token", "here", "pairs", "limit", "million"],
    "square_share": ["share", "longer", "long-contexts"],
    "prefill": ["two", "prefill", "balance", "bound"],
    "long": ["long", "crossover"],
    "decode": ["decode", "memory", "pause", "streams"],
    "family": ["sizes", "rule", "ours"],
    "gpt3": ["gpt3", "prices", "times-bill"],
    "reply": ["reply", "without", "looped"],
}


@pytest.mark.parametrize("synthetic", [True, False])
def test_chapter06_lines_mark_where_the_picture_moves(tiny_bundle, monkeypatch, synthetic):
    """Both wordings (random weights and real) carry the markers the scenes wait on; the random one
    one more, where it says the pick is noise. Lists are joined by the catalog's words."""
    from onepass.data.bundle import Bundle
    from onepass.voiceover import script
    from onepass.words.catalog import Words
    monkeypatch.setattr(Bundle, "synthetic", property(lambda self: synthetic))
    b = tiny_bundle
    f = loop_facts(b)
    lines = script.chapter_lines("06", b, b.ledger(), Words.load("en"))
    for beat, marks in CH06_MARKS.items():
        want = (["question", "pick", "noise", *marks[2:]] if synthetic and beat == "append" else marks)
        assert lines[beat].mark_names == want, beat
    # the picks after the first, as a spoken list: "“a”, “b” and “c”"
    from onepass.words.numbers import spoken_token
    picks = [spoken_token(s["text"], Words.load("en")) for s in f["steps"][1:]]
    assert lines["loop"].text.startswith(f"Each new pass adds one more token: {', '.join(picks[:-1])} and {picks[-1]}")
    share = f["square"][0]["share"]
    assert (f"{100 * share:.1f} percent" if share >= 0.001 else f"{100 * share:.2g} percent") in lines["square_share"].text
    # the wording for real weights builds its scene too (no wait on the random wording's marker)
    scene = build(b, "06", "Loop")
    assert scene.meter.value == f["loop_total"]


@pytest.mark.parametrize("which", ["tiny_bundle", "tiny_long_bundle"])
@pytest.mark.parametrize("name", ["Loop", "Cache", "Square", "Scale"])
def test_chapter06_words_come_from_the_catalog_and_fit_when_longer(which, name, request, monkeypatch):
    """In the pseudo-language every worded text on screen is a catalog message (wrapped in ⟦ ⟧; token
    texts are GPT-2's own), and the longer words fit: at the end of every beat no text is beyond the
    margins or in the caption band, and none is smaller than frame_checks allows unless it is as small
    in English (GPT-2's tokens squeezed into a column, a long prompt's strip: frames kept as they are)."""
    from contextlib import contextmanager

    from manim import Text

    from onepass.scenes import base
    from onepass.scenes.text import LEGIBLE
    from tests import helpers
    from onepass.words.pseudo import pseudo
    b = request.getfixturevalue(which)
    english_beat = base.ChapterScene.beat
    found: set = set()

    @contextmanager
    def beat(self, key):
        """frame_checks' measures, kept apart per text (a Text's own points are its glyphs': it is
        measured by its width), and the margins besides the frame's edges."""
        with english_beat(self, key) as line:
            yield line
        for mob in self.mobjects:
            for sub in mob.get_family():
                if not isinstance(sub, Text) or sub.get_fill_opacity() == 0 or sub.width == 0:
                    continue
                text = string_of(sub)
                left, right, bottom, _ = helpers.box(sub)
                if left < S.LEFT_EDGE - 0.01 or right > S.RIGHT_EDGE + 0.01:
                    found.add((key, text, "beyond the margins"))
                if bottom < S.CAPTION_TOP - 0.05:
                    found.add((key, text, "in the caption band"))
                if sub.font_size < LEGIBLE * S.SMALL - 0.05:
                    found.add((key, text, "too small"))
    monkeypatch.setattr(base.ChapterScene, "beat", beat)
    problems, scenes = {}, {}
    for lang in ("en", "qps"):
        found.clear()
        scenes[lang] = helpers.build_scene(b, "06", name, draw=False, lang=lang)
        problems[lang] = set(found)
    assert {p for p in problems["en"] if p[2] != "too small"} == set()
    as_in_english = problems["en"] | {(key, pseudo(text), what) for key, text, what in problems["en"]}
    assert problems["qps"] - as_in_english == set()
    assert helpers.outside_the_catalog(scenes["qps"], b) == []
