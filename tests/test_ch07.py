"""Chapter 07, what changed since GPT-2: two models on one prompt.

The second model comes from its own bundle when the build attaches one (`bundle.compare`, the
request's `--compare`, else the other family's small model), else from its shape, tokenizer and
ledger alone; the pictures and the lines read the same facts (data/facts/ch07.py), so changing
either bundle changes what is shown and said. `--all` stays GPT-2's film, 00-06.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import (assert_picture_follows_words, build_scene, english_on_screen, frame_checks, run_main)
from onepass.data import bundle as bundle_io
from onepass.data import extract
from onepass.data.chapters import compares, film_chapters, titles
from onepass.data.facts import ch07
from onepass.data.flops import kv_cache_numbers_per_token
from onepass.film.make import request
from onepass.film.plan import jobs
from onepass.film.run.runner import Runner
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words

PROMPT = "The cat sat on the"


def fresh(bundle, compare=None):
    """The bundle loaded anew (a session fixture is never changed), with a second model attached."""
    b = bundle_io.load(bundle.path)
    if compare is not None:
        b.compare = compare
    return b


@pytest.fixture(scope="module")
def gpt2_mini(bundle_root):
    """GPT-2 small's layers and heads at a narrow width: a GPT-2-family bundle of another size."""
    return extract.extract(PROMPT, "mini", model="gpt2", root=bundle_root, log=lambda m: None)


# --- what --all and --list say ----------------------------------------------------------------------

def test_all_is_gpt2s_film_and_07_renders_when_named():
    assert "07" in titles() and compares("07") and not compares("02")
    assert film_chapters() == ["00", "01", "02", "03", "04", "05", "06"]
    req, problems = request.validate({"chapters": "all"}, Path.cwd(), needs_chapters=True)
    assert not problems and req.chapters == film_chapters() and req.all
    req, problems = request.validate({"chapters": ["07"], "compare": "gpt2"}, Path.cwd())
    assert not problems and req.chapters == ["07"] and req.compare == "gpt2"
    rc, out, _ = run_main("--list")
    assert rc == 0
    line = next(l for l in out.splitlines() if l.startswith("07"))
    assert "not in --all" in line and "--chapter 07" in line
    assert not any("not in --all" in l for l in out.splitlines() if not l.startswith("07"))


def test_compare_is_checked():
    _, problems = request.validate({"chapters": ["07"], "compare": "gpt5"}, Path.cwd())
    assert [k for k, _ in problems] == ["compare"] and "unknown model" in problems[0][1]
    _, problems = request.validate({"chapters": ["02"], "compare": "gpt2"}, Path.cwd())
    assert [k for k, _ in problems] == ["compare"] and "chapter 07" in problems[0][1]


def test_compare_of_the_same_design_is_refused(smollm2_bundle):
    req = request.Request(chapters=["07"], compare="qwen3-0.6b")
    with pytest.raises(extract.ExtractError, match="same design"):
        request.compare_bundle(req, fresh(smollm2_bundle), log=lambda m: None)


# --- the facts ------------------------------------------------------------------------------------

def test_pair_without_a_second_bundle_is_gpt2_small_by_its_shape(smollm2_bundle):
    f = ch07.pair_facts(fresh(smollm2_bundle))
    old, new = f["old"], f["new"]
    assert old.name == "gpt2" and old.weights == "none" and old.top is None
    assert new.name == "smollm2-135m-instruct" and new.weights == "real" and new.top[0] == " cat"
    assert old.tokens == ("The", " cat", " sat", " on", " the") and new.T == 5   # each model's own tokenizer
    assert (old.kv_per_token, new.kv_per_token) == (18_432, 11_520)            # 2·12·12·64 and 2·30·3·64
    assert f["new_changes"]["attention"]["group"] == 3
    assert f["new_changes"]["mlp"]["matrices"] == 3 and f["old_changes"]["mlp"]["matrices"] == 2
    # SwiGLU at 8/3 of d: three matrices cost per token what GPT-2's two at 4·d cost, at each model's d
    assert 3 * 576 * f["new_changes"]["mlp"]["d_ff"] == 2 * 576 * 4 * 576
    assert f["old_changes"]["positions"]["table_params"] == 1024 * 768
    assert f["new_changes"]["positions"]["table_params"] == 0
    assert not f["predictions"]


def test_pair_reads_the_second_bundle_and_follows_it(smollm2_bundle, gpt2_mini):
    alone = ch07.pair_facts(fresh(smollm2_bundle))
    paired = ch07.pair_facts(fresh(smollm2_bundle, gpt2_mini))
    old = paired["old"]
    assert old.weights == "synthetic" and old.shape == gpt2_mini.shape
    assert old.params != alone["old"].params and old.kv_per_token == kv_cache_numbers_per_token(gpt2_mini.shape)
    assert paired["rows"][2]["old"] == old.kv_per_token
    # and the other way round: a GPT-2-family bundle is set beside SmolLM2, GPT-2's design first
    flipped = ch07.pair_facts(fresh(gpt2_mini, fresh(smollm2_bundle)))
    assert flipped["old"].shape == gpt2_mini.shape and flipped["new"].name == "smollm2-135m-instruct"


# --- lines and pictures ---------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_every_beat_is_said_and_described(smollm2_bundle, gpt2_mini, lang):
    b = fresh(smollm2_bundle, gpt2_mini)
    words = Words.load(lang)
    lines = script.chapter_lines("07", b, b.ledger(), words)
    described = script.chapter_descriptions("07", b, b.ledger(), words)
    beats = [k for k in lines if k != "title"]
    assert beats == ["two", "norm", "positions", "mlp", "attention", "scale", "same", "next"]
    assert set(beats) <= set(described)
    for k in beats:
        assert [m for m, _ in lines[k].marks] == [m for m, _ in described[k].marks], k
    with N.language(lang):
        kv = N.fmt_int(11_520) if lang != "en" else "11,520"
    assert kv.replace("\u202f", " ") in lines["attention"].text.replace("\u202f", " ")
    # GPT-2's weights are random here: the predictions are not compared, and the line says why
    assert words.model_name("gpt2") in lines["same"].text


def test_predictions_compared_only_with_real_weights_on_both_sides(smollm2_bundle, gpt2_mini, bundle_root):
    words = Words.load("en")
    b = fresh(smollm2_bundle, gpt2_mini)
    said = script.chapter_lines("07", b, b.ledger(), words)["same"].text
    assert "random" in said and "expects" not in said
    b = fresh(smollm2_bundle)
    assert "no weights" in script.chapter_lines("07", b, b.ledger(), words)["same"].text
    tiny_llama = extract.extract(PROMPT, "tiny", model="smollm2-135m-instruct", root=bundle_root,
                                 log=lambda m: None)
    b = fresh(gpt2_mini, tiny_llama)
    assert "Neither model" in script.chapter_lines("07", b, b.ledger(), words)["same"].text
    assert ch07.pair(b)[1].name == "smollm2-135m-instruct"        # a synthetic Llama-style bundle: its card's name


def test_pictures_follow_the_words_and_the_bundles(smollm2_bundle, gpt2_mini, monkeypatch):
    alone, paired = fresh(smollm2_bundle), fresh(smollm2_bundle, gpt2_mini)
    texts = {}
    for name in ("Changes", "Scale"):
        built = []
        assert frame_checks(paired, "07", name, monkeypatch, built=built) == []
        assert_picture_follows_words(built[0], name)
        texts[name] = set(built[0].built_texts)
    mini_params = N.fmt_int(ch07.pair_facts(paired)["old"].params)
    assert mini_params in texts["Scale"]
    assert "random weights: predictions are noise" in texts["Changes"]
    other = set(build_scene(alone, "07", "Scale", draw=False).built_texts)
    assert N.fmt_int(124_439_808) in other and mini_params not in other     # GPT-2 small's own count
    assert "11,520" in other and "18,432" in other


@pytest.mark.parametrize("lang", ["es", "ur"])
def test_no_english_on_screen(smollm2_bundle, lang, monkeypatch):
    b = fresh(smollm2_bundle)
    for name in ("Changes", "Scale"):
        built = []
        assert frame_checks(b, "07", name, monkeypatch, lang=lang, built=built) == []
        assert english_on_screen(built[0], b, lang) == []


# --- the plumbing: only chapter 07's scenes read the second bundle --------------------------------

def test_only_chapter_07_is_keyed_and_run_with_the_second_bundle(tiny_bundle, smollm2_bundle):
    options = jobs.BuildOptions()
    plain = jobs.plan(["02", "07"], fresh(tiny_bundle), options)
    paired = jobs.plan(["02", "07"], fresh(tiny_bundle, fresh(smollm2_bundle)), options)
    assert [j.key for j in plain["02"]] == [j.key for j in paired["02"]]
    assert all(a.key != b.key for a, b in zip(plain["07"], paired["07"]))
    runner = Runner(tiny_bundle.path, "low", None, None, compare=smollm2_bundle.path)
    argv = {c: runner.argv(paired[c][0], Path("cues.json")) for c in ("02", "07")}
    assert "--compare" not in argv["02"]
    assert argv["07"][argv["07"].index("--compare") + 1] == str(smollm2_bundle.path)


def test_two_compare_models_write_two_chapter_files(smollm2_bundle, gpt2_mini, bundle_root):
    """`--chapter 07 --compare gpt2` then `--compare distilgpt2` into one folder: two films, the
    second model named in each file (the second used to overwrite the first)."""
    distil = extract.extract(PROMPT, "mini", model="distilgpt2", root=bundle_root, log=lambda m: None)
    options = jobs.BuildOptions()
    names = {}
    for other in (gpt2_mini, distil):
        b = fresh(smollm2_bundle, fresh(other))
        titled = jobs.file_titles(options.chapter_titles(), b)
        names[other.model] = jobs.chapter_file("07", titled["07"])
        assert titled["02"] == titles()["02"]                 # the other chapters keep their names
        assert {j.stem.name.rsplit(".", 1)[0] for j in jobs.plan(["07"], b, options)["07"]} == \
            {f"{names[other.model]}-{j.scene}" for j in jobs.plan(["07"], b, options)["07"]}
    assert names["gpt2"] != names["distilgpt2"]
    assert names["gpt2"].endswith("-gpt2") and names["distilgpt2"].endswith("-distilgpt2")
    assert jobs.file_titles(titles(), fresh(smollm2_bundle)) == titles()     # no second bundle: as before
