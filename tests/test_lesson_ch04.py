"""Chapter 04 as a lesson (issue 40): its pictures are drawn from the bundle's numbers, and its
lines teach without reading out a ledger.

Each picture test builds the scene on a copy of the tiny bundle whose tensors or meta were
changed, and sees the picture change with them: the die roll on the bar of all the probability
(meta["sample"]), the agreement of the last row with a token's embedding (ln_f, wte_rows), the
entropy scale (the last logits) and the greedy run (meta["generated"]).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from onepass.data.facts import ch04 as facts
from onepass.scenes import ch04_vote, pictures_ch04
from tests.helpers import altered_bundle, build_scene
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words


@pytest.fixture
def pictures(monkeypatch):
    """Every picture of pictures_ch04 the chapter's scenes build, by class name."""
    made: dict[str, list] = {}
    for name in ("AgreementStrips", "DieBar", "EntropyScale", "GreedyRun"):
        cls = getattr(pictures_ch04, name)

        def record(*args, _cls=cls, _name=name, **kw):
            obj = _cls(*args, **kw)
            made.setdefault(_name, []).append(obj)
            return obj
        monkeypatch.setattr(ch04_vote, name, record)
    return made


def x_span(mob) -> tuple[float, float]:
    return mob.get_left()[0], mob.get_right()[0]


# -- the die roll -----------------------------------------------------------------------------------
def test_the_roll_lands_in_the_slice_of_the_token_the_bundle_drew(tiny_bundle):
    f = facts.vote_facts(tiny_bundle)
    roll, probs, order = f["roll"], f["probs"], f["order"]
    sampled = tiny_bundle.meta["sample"]["id"]
    cum = np.concatenate([[0.0], np.cumsum(probs[order])])
    # the token whose slice of the cumulative bar holds u is the one the bundle sampled
    assert int(order[np.searchsorted(cum, roll["u"], side="right") - 1]) == sampled
    assert roll["start"] <= roll["u"] < roll["end"] and roll["rank"] == f["sample"]["rank"]


def test_the_die_picture_moves_with_the_bundles_draw(tiny_bundle, tmp_path, pictures):
    build_scene(tiny_bundle, "04", "Pick", draw=False)
    before = pictures["DieBar"][-1]
    f = facts.vote_facts(tiny_bundle)
    left, w = before.frame.get_left()[0], before.frame.width
    assert before.pointer[0].get_x() == pytest.approx(left + w * f["roll"]["u"], abs=1e-3)
    least = int(f["order"][-1])          # a draw of the least likely token instead: the far end of the bar

    def meta_fn(m):
        m["sample"] = dict(m["sample"], id=least, text=" x")
    b2 = altered_bundle(tiny_bundle, tmp_path, meta=meta_fn)
    scene = build_scene(b2, "04", "Pick", draw=False)
    after = pictures["DieBar"][-1]
    f2 = facts.vote_facts(b2)
    assert f2["roll"]["rank"] == len(f2["probs"]) and f2["roll"]["u"] >= 1 - f2["probs"][least] - 1e-9
    left2 = after.frame.get_left()[0]
    assert after.pointer[0].get_x() == pytest.approx(left2 + w * f2["roll"]["u"], abs=1e-3)
    assert after.pointer[0].get_x() - left2 > before.pointer[0].get_x() - left + w / 2
    assert x_span(after.chosen)[1] == pytest.approx(after.frame.get_right()[0], abs=1e-3)   # the last slice ends at 1
    digits = 2 if f2["roll"]["end"] - f2["roll"]["start"] >= 0.01 else 4
    assert f"die: {N.fmt_fixed(f2['roll']['u'], digits)}" in scene.built_texts


def test_a_thin_slice_is_magnified_and_a_wide_one_is_not(tiny_bundle, tiny_peaked_bundle, pictures):
    for b in (tiny_bundle, tiny_peaked_bundle):
        build_scene(b, "04", "Pick", draw=False)
        bar, f = pictures["DieBar"][-1], facts.vote_facts(b)
        assert bar.thin == ((f["roll"]["end"] - f["roll"]["start"]) * bar.frame.width < 0.12)
        if bar.thin:         # the sampled slice, magnified, holds the die's mark
            lit = [c for c in bar.zoom.cells if c.get_fill_opacity() == 1.0]
            assert len(lit) == 1
            lo, hi = x_span(lit[0])
            assert lo - 1e-3 <= bar.zoom[-1].get_x() <= hi + 1e-3


# -- the tied unembedding as agreement ---------------------------------------------------------------
def test_each_score_is_the_rows_agreement_with_that_tokens_embedding(tiny_bundle):
    """The claim the picture makes: a token's logit is the dot product of the last row with its
    embedding (the unembedding is the embedding table, transposed)."""
    for row in facts.agreement(tiny_bundle):
        assert row["score"] == pytest.approx(row["logit"], rel=1e-4, abs=1e-4)
        assert row["products"].sum() == pytest.approx(row["score"])


def test_the_agreement_strips_follow_the_last_row(tiny_bundle, tmp_path, pictures):
    build_scene(tiny_bundle, "04", "LastRow", draw=False)
    before = pictures["AgreementStrips"][-1]

    def flip(t):
        t["ln_f"][-1] = -t["ln_f"][-1]
    b2 = altered_bundle(tiny_bundle, tmp_path, tensors=flip)
    scene = build_scene(b2, "04", "LastRow", draw=False)
    after = pictures["AgreementStrips"][-1]
    best = facts.agreement(b2)[0]
    d = b2.config["n_embd"]
    assert f"sum of {d} products = score {N.fmt_signed(best['score'], 2)}" in scene.built_texts
    # the last row's strip shows the flipped numbers' colours
    assert before.h[0][0].get_fill_color() != after.h[0][0].get_fill_color()


# -- entropy on a scale ---------------------------------------------------------------------------
def test_the_entropy_scale_puts_each_temperature_at_its_entropy(tiny_peaked_bundle, tmp_path, pictures):
    build_scene(tiny_peaked_bundle, "04", "Shaping", draw=False)
    scale = pictures["EntropyScale"][-1]
    f = facts.vote_facts(tiny_peaked_bundle)
    x0, x1 = x_span(scale.axis)
    for dot, t in zip(scale.dots, f["temps"]):
        assert dot.get_x() == pytest.approx(x0 + (x1 - x0) * t["entropy"] / f["max_entropy"], abs=1e-3)

    def sharpen(t):
        t["logits"][-1] = t["logits"][-1] * 3
    b2 = altered_bundle(tiny_peaked_bundle, tmp_path, tensors=sharpen)
    build_scene(b2, "04", "Shaping", draw=False)
    moved = pictures["EntropyScale"][-1]
    assert moved.dots[1].get_x() < scale.dots[1].get_x()      # a sharper vote: less spread at T = 1


# -- greedy's loop ------------------------------------------------------------------------------------
def test_the_greedy_run_marks_the_bundles_own_repeats(tiny_bundle, tmp_path, pictures):
    build_scene(tiny_bundle, "04", "Pick", draw=False)
    run = facts.greedy_run(tiny_bundle)
    assert len(pictures["GreedyRun"][-1].marks) == run["repeats"]

    def distinct(m):
        m["generated"] = [dict(g, id=464 + i, text=f"t{i}") for i, g in enumerate(m["generated"])]
    b2 = altered_bundle(tiny_bundle, tmp_path, meta=distinct)
    build_scene(b2, "04", "Pick", draw=False)
    assert len(pictures["GreedyRun"][-1].marks) == 0
    words = Words.load("en")
    said = {k: v.text for k, v in script.chapter_lines("04", b2, b2.ledger(), words).items()}["greedy"]
    assert "have not repeated yet" in said
    said = {k: v.text for k, v in script.chapter_lines("04", tiny_bundle, tiny_bundle.ledger(), words).items()}
    assert ("goes on" in said["greedy"]) == (run["repeats"] > 0)


# -- the lines ---------------------------------------------------------------------------------------
NUMBER = re.compile(r"\d[\d,.]*(?:e-?\d+)?")
QUOTED = re.compile(r"“[^”]*”")


@pytest.mark.parametrize("which", ["tiny", "peaked", "trained"])
def test_no_line_reads_out_more_than_three_numbers(which, tiny_bundle, tiny_peaked_bundle, tmp_path):
    b = {"tiny": tiny_bundle, "peaked": tiny_peaked_bundle}.get(which)
    if b is None:       # the wording for trained weights (not the .synthetic one)
        b = altered_bundle(tiny_bundle, tmp_path, meta=lambda m: m["weights"].update(synthetic=False))
    lines = script.chapter_lines("04", b, b.ledger(), Words.load("en"))
    counts = {k: len(NUMBER.findall(QUOTED.sub("", v.text.replace("GPT-2", "")))) for k, v in lines.items()}
    assert max(counts.values()) <= 3, counts


def test_the_chapter_opens_on_its_question_and_says_why(tiny_bundle, tmp_path):
    lines = {k: v.text for k, v in script.chapter_lines("04", tiny_bundle, tiny_bundle.ledger(),
                                                          Words.load("en")).items()}
    first = script.split_sentences(lines["last_row"])[0]
    assert first.endswith("?")
    assert "only randomness" in lines["sample"] and "loop" in lines["greedy"] and "nats" in lines["spread"]
    trained = altered_bundle(tiny_bundle, tmp_path, meta=lambda m: m["weights"].update(synthetic=False))
    said = script.chapter_lines("04", trained, trained.ledger(), Words.load("en"))["softmax"].text
    # the tiny model's favourite has a sliver of the vote: the line says the model is unsure
    assert facts.vote_facts(trained)["top"][0]["prob"] < 0.2 and "unsure" in said


def test_a_far_down_candidate_shows_its_share_not_zero():
    """The token of interest ranked far below the bars (random weights put ' mat' near 46,718th) is
    said as 'less than 0.0001 percent': its row shows that, not the bars' '0.0%'."""
    from manim import Text

    from onepass.engine.text import string_of
    from onepass.scenes.widgets import ProbBars
    bars = ProbBars(["a", "b", "c"], [0.56, 0.33, 0.046], ranks=[1, 2, 3])
    shown = [string_of(m) for m in ch04_vote.extra_row(bars, {"rank": 46718, "text": " mat", "prob": 3e-9})[1]
             if isinstance(m, Text)]
    assert N.fmt_prob(3e-9) in shown and N.fmt_prob(0.0, bars.decimals) not in shown
    # a share the bars' decimals can show keeps them (one column of numbers)
    shown = [string_of(m) for m in ch04_vote.extra_row(bars, {"rank": 12, "text": " mat", "prob": 0.0123})[1]
             if isinstance(m, Text)]
    assert N.fmt_prob(0.0123, bars.decimals) in shown


def test_the_unembedding_is_called_the_costliest_product_only_when_the_ledger_makes_it_so():
    """ch04-unembed says the last product is the pass's costliest, and dearer than a whole layer, only when
    the ledger says so (issue 52): true for GPT-2 small at 5 tokens (77.2M against a layer's 70.9M), a
    layer overtakes it at 10 tokens, and at 30 one of a layer's own products does."""
    from onepass.data.flops import GPT2_SMALL, forward_ledger
    from onepass.voiceover.scripts import ch04 as spoken
    en = Words.load("en")
    said = {}
    for T in (5, 10, 30):
        ledger = forward_ledger(GPT2_SMALL, T)
        r = facts.unembed_rank(ledger)
        assert r["unembed"] == ledger["unembed"].flops == 2 * 768 * 50257
        assert r["layer_flops"] == ledger.layer_flops(0)
        assert r["costliest"] == all(e.flops < r["unembed"] for e in ledger.entries if e.key != "unembed")
        said[T] = (r["costliest"], r["over_layer"], spoken.unembed_cost(ledger, en))
    assert said[5][:2] == (True, True) and "costliest" in said[5][2] and "whole layer" in said[5][2]
    assert said[10][:2] == (True, False) and "costliest" in said[10][2] and "layer" not in said[10][2]
    assert said[30][:2] == (False, False) and "costliest" not in said[30][2]
    for T, (_, _, line) in said.items():
        assert "77.2 million FLOPs" in line


def test_the_unembed_line_says_what_its_bundles_ledger_decides(tiny_bundle, tiny_long_bundle):
    for b in (tiny_bundle, tiny_long_bundle):
        text = script.chapter_lines("04", b, b.ledger(), Words.load("en"))["unembed"].text
        r = facts.unembed_rank(b.ledger())
        assert ("costliest" in text) == r["costliest"] and ("whole layer" in text) == (r["costliest"] and r["over_layer"])
