"""Chapters 00 and 01: what they show is read from the bundle, the tokenizer files and the ledger.

Scenes are dry-run with animations skipped (one update per play: the final state, same texts,
same meter), which keeps these tests to seconds per scene.
"""
from __future__ import annotations

import re
from unittest import mock

import numpy as np
import pytest

from onepass.data import tokenizer
from onepass.data.facts import ch00, ch01
from onepass.scenes import style as S
from tests.helpers import build_scene
from onepass.voiceover import script
from onepass.voiceover.scripts import ch00 as ch00_script
from onepass.voiceover.scripts import ch01 as ch01_script
from onepass.words import catalog, markup
from onepass.words import numbers as N
from onepass.words.catalog import Words
from onepass.engine.text import string_of

EN = Words.load("en")

LONG_PROMPT_WORDS = ("Tokenization is unbelievable", "السلام علیکم", "naïve café — 日本語 😀 ok",
                     "  spaces\tand\nnewlines  ", "The cat sat on the")


def built(bundle, chapter: str, scene: str):
    """build_scene with animations skipped: only the final state of each play is computed."""
    from onepass.scenes.registry import scenes_of
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
    from onepass.scenes.ch00_tokens import visible_bytes
    shown = [visible_bytes(tokenizer.token_bytes(i)) for i in f_ids]
    assert all(s for s in shown)
    assert any("<" in s for s in shown)                     # loose bytes are shown as <XX>, not U+FFFD
    assert not any("\ufffd" in s for s in shown)


def test_right_to_left_text_is_not_lost():
    from onepass.scenes.text import label
    from onepass.scenes.widgets import TokenChip
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
    ranks = [t for t in m.built_texts if "   rank " in t]     # the ladder's rows (not the note under it)
    assert [int(t.split("rank")[1].replace(",", "")) for t in ranks] == [x["rank"] for x in lad["merges"]]
    vf = tokenizer.vocab_facts()
    for n in (vf.byte_tokens, vf.merges, vf.special, vf.total):
        assert N.fmt_int(n) in m.built_texts
    assert m.meter.value == 0


def test_long_prompt_merge_ladder_fits(tiny_long_bundle):
    m = scene_of(tiny_long_bundle, "00", "Merges")
    lad = ch00.pick_word(tiny_long_bundle.prompt)
    assert sum("   rank " in t for t in m.built_texts) == len(lad["merges"])


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
        lines = {k: v.text for k, v in script.chapter_lines("00", b, b.ledger(), EN).items()}
        assert f"{b.T} tokens" in lines["split"]
        assert f"{len(b.prompt) / b.T:.1f} characters per token" in lines["ratio"]
        lad = ch00.pick_word(b.prompt)
        assert f"id {lad['ids'][0]}" in lines["merges"]
        assert "50,257 tokens in all" in lines["vocab"]
    short = script.chapter_lines("00", tiny_bundle, tiny_bundle.ledger(), EN)
    b = tiny_bundle   # at most about three numbers a line: the first and the last id are read, the rest are on screen
    assert f"{b.ids[0]} for “{b.tokens[0].strip()}”, and so on up to {b.ids[-1]}" in short["ids"].text


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
    lines = {k: v.text for k, v in script.chapter_lines("01", b, led, EN).items()}
    assert b.synthetic
    assert "Nobody programmed" not in lines["cosine"] and "random" in lines["cosine"]
    assert "noise" in lines["row"] and "noise" in lines["tables"]
    assert f"{led['positions'].flops:,} additions" in lines["add"]
    params = b.meta["parameters"]
    assert f"{100 * params['wte'] / params['total']:.0f} percent" in lines["table"]
    real = dict(b.meta, weights=dict(b.meta["weights"], synthetic=False))
    with mock.patch.object(b, "meta", real):
        honest = {k: v.text for k, v in script.chapter_lines("01", b, led, EN).items()}
    for p in ch01.embed_facts(b)["spoken_pairs"]:       # the pairs read aloud (all of them are on screen)
        assert ch01_script.spoken_cos(p["cosine"], EN) in honest["cosine"]
    assert "Nobody programmed" in honest["cosine"] and "noise" not in honest["row"]


# -- words as data: the catalog's English is the film's English, markers where the picture moves -----

def test_composed_narration_reads_as_it_always_did():
    """The pieces the scripts compose from catalog messages, character for character."""
    lad = {"word": " cat", "merges": [{}, {}, {}], "ids": [3797]}
    assert ch00_script.merge_outcome(lad, EN) == "After 3 merges, “cat” is one token: id 3797."
    assert (ch00_script.merge_outcome(dict(lad, merges=[{}], ids=[1, 2]), EN)
            == "After 1 merge no listed pair is left, and “cat” stays 2 tokens.")
    assert (ch00_script.merge_outcome(dict(lad, word="a", merges=[], ids=[64]), EN)
            == "“a” is a single byte already, so there is nothing to merge: it is token 64.")
    assert ch00_script.ids_said([464, 3797], ["The", " cat"], EN) == "464, 3797"
    assert (ch00_script.ids_said(list(range(7)), ["In"] + ["x"] * 5 + [" end"], EN)
            == "0 for “In”, and so on up to 6 for “end”")
    pairs = [{"a": "king", "b": "queen", "cosine": 0.5}, {"a": "king", "b": "banana", "cosine": -0.125}]
    assert ch01_script.pairs_said(pairs, EN) == "king and queen score 0.50, and king and banana score minus 0.12"
    assert ch01_script.pairs_said(pairs * 2, EN).count(", ") == 3
    assert ch01_script.pairs_said(pairs[:1], EN) == "king and queen score 0.50"


# every marker a scene of these chapters waits on, per line (both wordings where there are two);
# the scenes raise on a missing one, but only the wording of the bundle they are run with is exercised
MARKERS = {
    "ch00-intro": {"count"}, "ch00-split": {"dot"}, "ch00-ids": {"swap", "list", "meter"},
    "ch00-case": {"capital", "invisible", "letters"}, "ch00-words": {"endless", "unknown"}, "ch00-letters": {"long", "square"},
    "ch00-subwords": {"common", "bytes"}, "ch00-bytes": {"question", "bpe", "word"},
    "ch00-merges": {"merge", "outcome", "common"}, "ch00-vocab": {"parts", "total", "order"},
    "ch00-ratio": {"became", "letters"}, "ch00-other": {"greeting", "loose", "english", "cost"},
    "ch00-handoff": {"places", "next"},
    "ch01-question": {"line", "ask", "compute", "more", "number", "bigger", "near"},
    "ch01-table": {"table", "keeps", "one-row", "parameters", "percent"},
    "ch01-row": {"becomes", "numbers"}, "ch01-row.synthetic": {"becomes", "numbers", "noise"},
    "ch01-learned": {"training", "corpus", "guess", "nudge", "little", "every", "all"},
    "ch01-learned.synthetic": {"training", "corpus", "guess", "nudge", "little", "every", "all", "random", "never"},
    "ch01-grid": {"grid", "copying", "none", "meter"},
    "ch01-angle": {"space", "both", "measure", "agree", "same", "square", "opposite", "pair", "value"},
    "ch01-angle.synthetic": {"space", "both", "measure", "agree", "same", "square", "opposite", "pair", "value",
                             "chance"},
    "ch01-cosine": {"pairs", "meaning", "pulled"},
    "ch01-cosine.synthetic": {"pairs", "scores", "meaning", "related", "unrelated"},
    "ch01-order": {"attn", "sum", "shuffle", "same", "alike", "position", "lost", "written", "vector"},
    "ch01-add": {"second", "row-zero", "row-one", "so-on", "additions", "width", "grow"},
    "ch01-tables": {"left", "ceiling", "past", "limit", "right", "waves", "formula", "longer", "every", "own-pattern",
                    "rope"},
    "ch01-tables.synthetic": {"left", "noise", "structured", "ceiling", "past", "limit", "right", "waves", "formula",
                              "longer", "every", "own-pattern", "rope"},
    "ch01-stream": {"rows", "flow", "reads", "computes", "adds", "layers-add", "erase", "keep", "path", "short"},
    "ch01-handoff": {"layer-one", "next"},
}


def test_every_line_marks_where_its_picture_moves(tiny_bundle, tiny_long_bundle):
    english = {k: m for k, m in catalog.english().items() if k.startswith(("ch00-", "ch01-"))
               and not catalog.is_description(k) and not catalog.is_still(k) and catalog.variant_of(k) is None}     # GPT-2's lines
    assert set(english) == set(MARKERS)
    for mid, names in MARKERS.items():
        assert set(markup.marks(english[mid].forms[0])) == names, mid
    # a marker falls where its sentence starts or right before the words it moves on
    for b in (tiny_bundle, tiny_long_bundle):
        lines = script.chapter_lines("01", b, b.ledger(), EN)
        table = lines["table"]
        at = dict(table.marks)
        assert table.text[at["percent"]:].startswith("percent of all the model's parameters")
        assert table.text[at["table"]:].startswith("GPT-2 keeps a table")
        assert lines["add"].text[dict(lines["add"].marks)["additions"]:].startswith(f"{b.T} positions")


def test_every_word_these_chapters_show_comes_from_the_catalog(tiny_bundle):
    """In the pseudo-language every message is wrapped in ⟦ ⟧: a text with letters and no ⟦ is
    GPT-2's (a token, the prompt, the greeting, a merge's bytes: the scene's gpt2_texts) or was
    written in the scene."""
    letters = re.compile(r"[^\W\d_]{2,}")
    for chapter, name in (("00", "Compression"), ("01", "Meaning")):
        s = build_scene(tiny_bundle, chapter, name, draw=False, lang="qps")
        gpt2 = {tiny_bundle.prompt, *tiny_bundle.tokens, *(S.show_token(t) for t in tiny_bundle.ids), *s.gpt2_texts}
        assert [t for t in s.built_texts if letters.search(t) and "⟦" not in t and t not in gpt2] == [], name
        assert not any("⟦" in t for t in s.gpt2_texts)


def test_a_label_too_long_for_its_panel_takes_two_lines_rather_than_an_illegible_size():
    from onepass.scenes.text import fit_lines
    short = fit_lines("trained GPT-2: structured patterns", S.SMALL, S.INK, 5.0)
    assert "\n" not in string_of(short) and short.width <= 5.0
    longer = fit_lines("⟦ţŕààííñééđ ĜPŢŢ-2: šţŕûûçţûûŕééđđ pààţţééŕñšš⟧", S.SMALL, S.INK, 4.0)
    assert string_of(longer).count("\n") == 1 and longer.width <= 4.0 + 1e-6
    assert longer.font_size >= 0.93 * S.SMALL
