"""The numbers are the lesson, so they reach a blind student (issue 53 item 1), chapters 00, 01 and
03-06 (chapter 02's are in tests/test_accessibility_numbers.py): each description whose picture
turns on numbers says the few that matter, in every language, with the values of the facts the
scenes draw, and a changed bundle changes what is said.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import altered_bundle
from onepass.data.facts import ch00 as f00
from onepass.data.facts import ch01 as f01
from onepass.data.facts import ch03 as f03
from onepass.data.facts import ch04 as f04
from onepass.data.facts import ch05 as f05
from onepass.data.facts import ch06 as f06
from onepass.voiceover import script
from onepass.voiceover.scripts.ch02 import SAID_TOP
from onepass.words import numbers as N
from onepass.words.catalog import Words

LANGS = ("en", "es", "ur")


def said(chapter: str, bundle, words) -> dict[str, str]:
    """beat -> its description's text, as the described cut says it and the handout prints it."""
    return {b: d.text for b, d in script.chapter_descriptions(chapter, bundle, bundle.ledger(), words).items()}


def spoken(words, fn, *args) -> str:
    with N.language(words.lang):
        return fn(*args, words)


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_00s_descriptions_name_the_tokens_and_say_their_ids(tiny_bundle, lang):
    words = Words.load(lang)
    d, f = said("00", tiny_bundle, words), f00.token_facts(tiny_bundle)
    for t in f["tokens"]:                                    # the tiles, by name
        assert N.spoken_token(t, words) in d["split"]
    for t, i in list(zip(f["tokens"], f["ids"]))[:SAID_TOP]:  # the first tiles' ids, each with its token
        assert words.text("kit:describe-id", token=N.spoken_token(t, words), id=i) in d["ids"]
    assert str(f["ids"][SAID_TOP]) not in d["ids"]           # at most SAID_TOP ids: the rest are in the table
    with N.language(lang):                                    # characters per token, ours and the greeting's
        assert N.fmt_ratio(f["cpt"]) in d["other"] and N.fmt_ratio(f["other_cpt"]) in d["other"]


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_01s_descriptions_say_the_rows_first_numbers_and_the_pairs_cosine(tiny_bundle, tmp_path, lang):
    words = Words.load(lang)
    d, f = said("01", tiny_bundle, words), f01.embed_facts(tiny_bundle)
    row = tiny_bundle["wte_rows"][f["row_index"]]
    for x in row[:SAID_TOP]:
        assert N.spoken_signed(float(x), 2, words) in d["row"]
    assert N.spoken_signed(f["featured"]["cosine"], 2, words) in d["angle"]
    with N.language(lang):
        assert f"{N.fmt_whole(f['featured_angle'])} " in d["angle"]

    def lift(arrays):                  # the shown row's first numbers: 0.75, -0.5, 0.25
        arrays["wte_rows"][f["row_index"], :3] = [0.75, -0.5, 0.25]
    changed = said("01", altered_bundle(tiny_bundle, tmp_path / "row", tensors=lift), words)["row"]
    for x in (0.75, -0.5, 0.25):
        assert N.spoken_signed(x, 2, words) in changed and N.spoken_signed(x, 2, words) not in d["row"]


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_03s_descriptions_say_the_mlps_width_counts_and_the_layers_flops(tiny_bundle, lang):
    words = Words.load(lang)
    d, ledger = said("03", tiny_bundle, words), tiny_bundle.ledger()
    mlp, params, lens = f03.mlp_facts(tiny_bundle), f03.param_facts(tiny_bundle), f03.lens_facts(tiny_bundle)
    count = lambda n: N.spoken_count(n, words)        # noqa: E731
    with N.language(lang):
        assert N.fmt_int(tiny_bundle.shape.d_ff) in d["mlp_up"]
        assert N.fmt_int(mlp["n_pos"]) in d["mlp_up"] and N.fmt_int(mlp["n_neg"]) in d["mlp_up"]
        assert N.fmt_ratio(params["ratio"]) in d["params"]
    assert count(ledger["L0.mlp_down"].flops) in d["mlp_down"]          # what the meter adds there
    assert count(params["mlp"]) in d["params"] and count(params["attention"]) in d["params"]
    assert count(ledger.layer_flops(0)) in d["climb"]
    assert count(ledger.after(f"L{tiny_bundle.shape.n_layer - 1}.mlp_down")) in d["climb_total"]
    assert N.spoken_prob(lens[0]["prob"], words) in d["lens"] and N.spoken_prob(lens[-1]["prob"], words) in d["lens"]


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_04s_descriptions_say_the_top_candidates_and_the_watched_rank(tiny_bundle, tmp_path, lang):
    words = Words.load(lang)
    d, f = said("04", tiny_bundle, words), f04.vote_facts(tiny_bundle)
    top = f["top"]
    for c in top[:SAID_TOP]:
        assert words.text("kit:describe-prob", token=N.spoken_token(c["text"], words),
                          prob=N.spoken_prob(c["prob"], words)) in d["softmax"]
    assert N.spoken_token(top[SAID_TOP]["text"], words) not in d["softmax"]      # the rest: the table
    assert N.spoken_prob(f["watch"]["prob"], words) in d["interest"]
    with N.language(lang):
        assert N.fmt_int(f["watch"]["rank"]) in d["interest"]
        assert N.fmt_int(f["sample"]["rank"]) in d["sample"]
    for t in f["temps"]:
        assert N.spoken_prob(t["top"], words) in d["temperature"]
    assert N.spoken_prob(f["topk"][0], words) in d["topk"]
    assert N.spoken_prob(f["sample"]["prob"], words) in d["sample"]

    def peak(arrays):                   # the last row's logits: one token far ahead of the rest
        arrays["logits"][-1, tiny_bundle.ids[0]] = 60.0
    changed = said("04", altered_bundle(tiny_bundle, tmp_path / "peak", tensors=peak), words)["softmax"]
    first = words.text("kit:describe-prob", token=N.spoken_token(tiny_bundle.tokens[0], words),
                       prob=N.spoken_prob(1.0, words))
    assert first in changed and first not in d["softmax"]


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_05s_descriptions_say_the_biggest_shift_and_the_bill(tiny_bundle, lang):
    words = Words.load(lang)
    d, f, ledger = said("05", tiny_bundle, words), f05.mask_facts(tiny_bundle), tiny_bundle.ledger()
    r, c = f["big_row"], f["big_col"]
    assert N.spoken_pct(float(f["causal"][r, c]), words) in d["changes"]
    assert N.spoken_pct(float(f["full"][r, c]), words) in d["changes"]
    assert N.spoken_count(ledger["L0.scores"].flops, words) in d["same_cost"]
    assert N.spoken_count(ledger.total, words) in d["same_cost"]


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_06s_descriptions_say_the_picks_the_caches_size_and_the_replys_bill(tiny_bundle, lang):
    words = Words.load(lang)
    d, f = said("06", tiny_bundle, words), f06.loop_facts(tiny_bundle)
    steps = f["steps"]
    assert N.spoken_token(steps[0]["text"], words) in d["append"]
    assert N.spoken_prob(steps[0]["prob"], words) in d["append"]
    for s in steps[1:]:
        assert N.spoken_token(s["text"], words) in d["loop"]
    assert N.spoken_count(f["loop_added"], words) in d["loop"]
    last = f["cache"][-1]
    assert N.spoken_count(last["numbers"], words) in d["cache"] and N.spoken_count(last["bytes"], words) in d["cache"]
    assert N.spoken_count(steps[1]["full"], words) in d["cached_step"]
    assert N.spoken_count(steps[1]["cached"], words) in d["cached_step"]
    assert N.spoken_count(f["reply_cached"], words) in d["reply"] and N.spoken_count(f["reply_full"], words) in d["reply"]


def test_the_picks_said_follow_the_bundles_generation(tiny_bundle, tmp_path):
    """Another generated token in the bundle is another token said (the loop's and the cache's)."""
    words = Words.load("en")
    before = said("06", tiny_bundle, words)

    def retoken(meta):
        meta["generated"][1]["id"] = tiny_bundle.ids[1]
    changed = said("06", altered_bundle(tiny_bundle, tmp_path / "gen", meta=retoken), words)
    name = N.spoken_token(tiny_bundle.tokenizer.readable(tiny_bundle.ids[1]), words)
    assert name in changed["loop"] and name not in before["loop"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_modern_decoders_descriptions_say_its_own_numbers(smollm2_bundle, lang):
    """SmolLM2's wording (SwiGLU's three products, RMSNorm, no position table, grouped-query
    attention's cache) says the same kind of numbers, from its own bundle and ledger."""
    words, b = Words.load(lang), smollm2_bundle
    ledger = b.ledger()
    d3, d6 = said("03", b, words), said("06", b, words)
    mlp, params = f03.mlp_facts(b), f03.param_facts(b)
    with N.language(lang):
        assert N.fmt_int(mlp["n_pos"]) in d3["mlp_up"] and N.fmt_int(mlp["n_neg"]) in d3["mlp_up"]
    assert N.spoken_count(ledger["L0.mlp_down"].flops, words) in d3["mlp_down"]
    assert N.spoken_count(params["mlp"], words) in d3["params"]
    assert N.spoken_count(ledger.after(f"L{b.shape.n_layer - 1}.mlp_down"), words) in d3["climb_total"]
    last = f06.loop_facts(b)["cache"][-1]
    assert N.spoken_count(last["bytes"], words) in d6["cache"]
    d0 = said("00", b, words)
    f = f00.token_facts(b)
    for t in f["tokens"]:
        assert N.spoken_token(t, words) in d0["split"]
