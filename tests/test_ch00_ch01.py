"""Chapters 00 and 01: what they show is read from the bundle, the tokenizer files and the ledger.

Scenes are dry-run with animations skipped (one update per play: the final state, same texts,
same meter), which keeps these tests to seconds per scene.
"""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from tests.helpers import build_scene
from data import tokenizer
from data.facts import ch00, ch01
from scenes import style as S
from words import numbers as N
from voiceover import script
from voiceover.scripts import ch01 as ch01_script

LONG_PROMPT_WORDS = ("Tokenization is unbelievable", "السلام علیکم", "naïve café — 日本語 😀 ok",
                     "  spaces\tand\nnewlines  ", "The cat sat on the")


def built(bundle, chapter: str, scene: str):
    """build_scene with animations skipped: only the final state of each play is computed."""
    from scenes.registry import scenes_of
    cls = {c.__name__: c for c in scenes_of(chapter)}[scene]
    init = cls.__init__
    with mock.patch.object(cls, "__init__", lambda self, inputs, **k: init(self, inputs, skip_animations=True)):
        return build_scene(bundle, chapter, scene)


_cache: dict = {}


def scene_of(bundle, chapter, scene):
    key = (str(bundle.path), chapter, scene)
    if key not in _cache:
        _cache[key] = built(bundle, chapter, scene)
    return _cache[key]


# -- the tokenizer side ---------------------------------------------------------------------

@pytest.mark.parametrize("text", LONG_PROMPT_WORDS)
def test_merge_replay_reproduces_tokenizer_ids_for_every_word(text):
    ids = []
    for word in tokenizer.pre_tokens(text):
        ladder = ch00.merge_ladder(word)
        assert ladder["ids"] == tokenizer.encode(word), word
        # every step keeps the same bytes, and each merge joins exactly one adjacent pair
        for step in ladder["steps"]:
            assert b"".join(tokenizer.symbol_bytes(s) for s in step) == word.encode("utf-8")
        for before, after, m in zip(ladder["steps"], ladder["steps"][1:], ladder["merges"]):
            assert after[m["index"]] == m["merged"] and len(after) < len(before)
            assert tokenizer.merge_ranks()[m["pair"]] == m["rank"]
        ids += ladder["ids"]
    assert ids == tokenizer.encode(text)


def test_merge_replay_matches_both_bundles(tiny_bundle, tiny_long_bundle):
    for b in (tiny_bundle, tiny_long_bundle):
        ids = [i for w in tokenizer.pre_tokens(b.prompt) for i in ch00.merge_ladder(w)["ids"]]
        assert ids == b.ids
        lad = ch00.pick_word(b.prompt)
        assert lad["word"] in tokenizer.pre_tokens(b.prompt)
        assert len(lad["ids"]) == 1 and 0 < len(lad["merges"]) <= ch00.MAX_MERGES_SHOWN


def test_case_ids_and_vocabulary_from_the_files():
    # DESIGN's figures for GPT-2's real vocabulary
    assert ch00.case_ids() == [464, 262, 1169]
    vf = tokenizer.vocab_facts()
    assert (vf.byte_tokens, vf.merges, vf.special) == (256, 50000, 1)
    assert vf.total == tokenizer.vocab_size() == 50257


def test_other_language_costs_more_tokens_than_characters():
    f_ids = tokenizer.encode(ch00.OTHER_LANGUAGE)
    assert len(f_ids) > len(ch00.OTHER_LANGUAGE)          # the lecture's 13 tokens for 12 characters
    assert ch00.partial_byte_tokens(f_ids) > 0
    from scenes.ch00_tokens import visible_bytes
    shown = [visible_bytes(tokenizer.token_bytes(i)) for i in f_ids]
    assert all(s for s in shown)
    assert any("<" in s for s in shown)                     # loose bytes are shown as <XX>, not U+FFFD
    assert not any("\ufffd" in s for s in shown)


def test_right_to_left_text_is_not_lost():
    from scenes.text import label
    from scenes.widgets import TokenChip
    for text in ("س", "ال", ch00.OTHER_LANGUAGE, "שלום"):
        assert label(text).width > 0.1, text
        assert TokenChip(text).text_mob.width > 0.1


# -- chapter 00 scenes ----------------------------------------------------------------------

@pytest.mark.parametrize("which", ["tiny_bundle", "tiny_long_bundle"])
def test_prompt_scene_shows_the_bundle_tokens_and_ids(which, request):
    b = request.getfixturevalue(which)
    s = scene_of(b, "00", "Prompt")
    texts = s.built_texts
    for tok, tid in zip(b.tokens, b.ids):
        assert S.show_token(tok) in texts
        assert str(tid) in texts
    start = next(k for k, t in enumerate(texts) if t.startswith("[") and t[1:2].isdigit())
    end = next(k for k in range(start, len(texts)) if texts[k].endswith("]"))
    shown = "".join(texts[start:end + 1]).replace(" ", "").strip("[]")
    assert [int(x) for x in shown.split(",")] == b.ids      # the model input, line-wrapped
    assert f"{len(b.prompt.split())} words · {len(b.prompt)} characters" in texts
    assert s.meter.value == 0


def test_same_word_and_merges_scenes(tiny_bundle):
    s = scene_of(tiny_bundle, "00", "SameWord")
    for tid in ch00.case_ids():
        assert str(tid) in s.built_texts
    assert s.meter.value == 0
    m = scene_of(tiny_bundle, "00", "Merges")
    lad = ch00.pick_word(tiny_bundle.prompt)
    assert f"→ id {lad['ids'][0]}" in m.built_texts
    ranks = [t for t in m.built_texts if "rank" in t]
    assert [int(t.split("rank")[1].replace(",", "")) for t in ranks] == [x["rank"] for x in lad["merges"]]
    vf = tokenizer.vocab_facts()
    for n in (vf.byte_tokens, vf.merges, vf.special, vf.total):
        assert N.fmt_int(n) in m.built_texts
    assert m.meter.value == 0


def test_long_prompt_merge_ladder_fits(tiny_long_bundle):
    m = scene_of(tiny_long_bundle, "00", "Merges")
    lad = ch00.pick_word(tiny_long_bundle.prompt)
    assert sum("rank" in t for t in m.built_texts) == len(lad["merges"])


def test_compression_scene_ratios(tiny_bundle):
    s = scene_of(tiny_bundle, "00", "Compression")
    b = tiny_bundle
    ratio = f"{len(b.prompt) / b.T:.1f}"
    assert f"{len(b.prompt)} characters ÷ {b.T} tokens = {ratio} characters per token" in s.built_texts
    other = tokenizer.encode(ch00.OTHER_LANGUAGE)
    assert f"{len(ch00.OTHER_LANGUAGE) / len(other):.1f}" in s.built_texts
    assert any(t.startswith(f"{len(other)} tokens") for t in s.built_texts)
    assert s.meter.value == 0


def test_chapter00_narration_reads_the_bundle(tiny_bundle, tiny_long_bundle):
    for b in (tiny_bundle, tiny_long_bundle):
        lines = script.chapter_lines("00", b, b.ledger())
        assert f"{b.T} tokens" in lines["split"]
        assert f"{len(b.prompt) / b.T:.1f} characters per token" in lines["ratio"]
        lad = ch00.pick_word(b.prompt)
        assert f"id {lad['ids'][0]}" in lines["merges"]
        assert "50,257 tokens in all" in lines["vocab"]
    short = script.chapter_lines("00", tiny_bundle, tiny_bundle.ledger())
    assert ", ".join(str(i) for i in tiny_bundle.ids) in short["ids"]


# -- chapter 01 scenes ----------------------------------------------------------------------

def test_lookup_scene_numbers_come_from_the_bundle(tiny_bundle):
    b = tiny_bundle
    s = scene_of(b, "01", "Lookup")
    cfg, params = b.config, b.meta["parameters"]
    texts = s.built_texts
    assert f"token table: {cfg['vocab_size']:,} × {cfg['n_embd']:,}" in texts
    assert (f"{params['wte']:,} parameters = {100 * params['wte'] / params['total']:.1f}% of "
            f"{params['total']:,}") in texts
    i = ch01.row_index(b.tokens)
    assert f"id {b.ids[i]} → row {b.ids[i]}" in texts
    for v in b["wte_rows"][i][:7]:
        assert N.fmt_signed(float(v), 2) in texts
    assert f"{b.T} × {cfg['n_embd']:,}" in texts
    assert s.meter.value == 0


def test_meaning_scene_shows_the_bundle_cosines(tiny_bundle):
    s = scene_of(tiny_bundle, "01", "Meaning")
    for p in tiny_bundle.meta["cosine"]:
        assert N.fmt_cos(p["cosine"]) in s.built_texts
        assert S.show_token(" " + p["a"]) in s.built_texts
    assert s.meter.value == 0


@pytest.mark.parametrize("which", ["tiny_bundle", "tiny_long_bundle"])
def test_positions_scene_pays_exactly_T_times_d(which, request):
    b = request.getfixturevalue(which)
    s = scene_of(b, "01", "Positions")
    led = b.ledger()
    d = b.config["n_embd"]
    assert led["positions"].flops == b.T * d
    assert led.before("positions") == 0
    assert s.meter.value == led.after("positions") == b.T * d
    assert f"{led['positions'].formula} = {b.T * d:,} additions" in s.built_texts
    for v in b["resid_pre"][0, 0, :3]:                    # the sum column is the model's layer-1 input
        assert N.fmt_signed(float(v), 2) in s.built_texts
    np.testing.assert_allclose(b["wte_rows"] + b["wpe_rows"], b["resid_pre"][0], atol=1e-6)


def test_residual_scene_holds_the_meter(tiny_bundle):
    s = scene_of(tiny_bundle, "01", "Residual")
    assert s.meter.value == tiny_bundle.ledger().after("positions")
    assert f"{tiny_bundle.config['n_layer']} layers" in s.built_texts


def test_sinusoidal_table_is_the_2017_formula():
    table = ch01.sinusoidal_table(50, 64)
    pos, i = 7, 5
    assert table[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / 64)))
    assert table[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / 64)))
    assert np.allclose(table[0, 0::2], 0) and np.allclose(table[0, 1::2], 1)


def test_chapter01_narration_is_honest_about_random_weights(tiny_bundle):
    b = tiny_bundle
    led = b.ledger()
    lines = script.chapter_lines("01", b, led)
    assert b.synthetic
    assert "Nobody programmed" not in lines["cosine"] and "random" in lines["cosine"]
    assert "noise" in lines["row"] and "noise" in lines["tables"]
    assert f"{led['positions'].flops:,} additions" in lines["add"]
    params = b.meta["parameters"]
    assert f"{100 * params['wte'] / params['total']:.0f} percent" in lines["table"]
    real = dict(b.meta, weights=dict(b.meta["weights"], synthetic=False))
    with mock.patch.object(b, "meta", real):
        honest = script.chapter_lines("01", b, led)
    for p in b.meta["cosine"]:
        assert ch01_script.spoken_cos(p["cosine"]) in honest["cosine"]
