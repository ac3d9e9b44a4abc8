"""The Σ FLOPs meter: ChapterScene builds it from one hook, as wide as the film's largest total.

A prompt of 58 or more tokens makes one GPT-2-small pass a 14-character total, and chapter 06
adds several passes more: every scene's meter must show the widest of them, inside the frame.
The bundles here are light (config, tokens and the generated steps, no activations): the
meter reads nothing else.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from manim import Text, config, linear, rate_functions, there_and_back

from onepass.data.bundle import Bundle
from onepass.data.flops import GPT2_SMALL, forward_ledger, parameter_counts
from onepass.words.catalog import Words
from onepass.scenes import meter as M
from onepass.scenes import style as S
from onepass.words import numbers as N
from onepass.scenes import text as TX
from onepass.scenes.registry import chapters, scenes_of
from onepass.engine.text import glyphs_of, string_of

ROOT = Path(__file__).resolve().parents[1]
N_GENERATE = 4          # the steps extraction generates for chapter 06
HEADING_W = 6.5         # the chapter heading is fitted to this width, from the left margin


def light_bundle(T: int) -> Bundle:
    """A GPT-2-small-shaped bundle of T tokens with N_GENERATE generated steps, no activations."""
    cfg = {"n_layer": GPT2_SMALL.n_layer, "n_head": GPT2_SMALL.n_head, "n_embd": GPT2_SMALL.n_embd,
           "vocab_size": GPT2_SMALL.vocab, "n_positions": 1024}
    meta = {"config": cfg, "prompt": "x" * T, "token_ids": [87] * T, "token_texts": ["x"] * T,
            "weights": {"synthetic": True},
            "parameters": parameter_counts(GPT2_SMALL, cfg["n_positions"]),
            "generated": [{"context_tokens": T + i, "id": 87, "text": "x", "prob": 0.5}
                          for i in range(N_GENERATE)]}
    tensors = {"gen_topk_ids": np.full((N_GENERATE, 10), 87), "gen_topk_probs": np.full((N_GENERATE, 10), 0.05)}
    return Bundle(path=Path("/nonexistent"), meta=meta, tensors=tensors)


def scene_meters(bundle):
    """(chapter, scene name, scene, meter) for every scene of the film, built as ChapterScene builds it."""
    ledger, words = bundle.ledger(), Words.load("en")
    for chapter in chapters():
        for cls in scenes_of(chapter):
            scene = cls.__new__(cls)            # no manim set-up: the meter needs only these three
            scene.bundle, scene.ledger, scene.words = bundle, ledger, words
            yield chapter, cls.__name__, scene, scene.make_meter()


@pytest.mark.parametrize("T", [64, 1020])
def test_every_scenes_meter_fits_the_films_largest_total(T):
    b = light_bundle(T)
    one_pass = forward_ledger(GPT2_SMALL, T).total
    loop = sum(forward_ledger(GPT2_SMALL, T + i).total for i in range(N_GENERATE))   # chapter 06, no cache
    widest = max(one_pass, loop)
    if T == 64:
        assert len(N.fmt_int(one_pass)) == 14     # the case a fixed 13 slots could not show
    places = set()
    for chapter, name, scene, meter in scene_meters(b):
        where = f"{chapter} {name}"
        value, step = scene.meter_opening()
        assert meter.value == value, where
        assert scene.meter_widest() == widest, where
        # the largest total of the film fits: set_value raises rather than truncate
        meter.counter.set_value(widest)
        assert meter.counter.digits.get_left()[0] >= meter.counter.frame.get_left()[0] - 1e-6, where
        # inside the frame, clear of the heading on the left and above the content box
        assert meter.get_right()[0] <= config.frame_x_radius - S.MARGIN + 1e-6, where
        assert meter.get_top()[1] <= config.frame_y_radius - S.MARGIN + 1e-6, where
        assert meter.get_left()[0] > -config.frame_x_radius + S.MARGIN + HEADING_W, where
        assert meter.get_bottom()[1] > S.CONTENT_TOP, where
        places.add((round(meter.title.get_left()[0], 6), round(meter.counter.frame.get_left()[0], 6)))
    assert len(places) == 1       # one width, one place: the meter does not jump between chapters


def test_meter_openings_follow_the_ledger():
    b = light_bundle(64)
    led = b.ledger()
    openings = {(c, n): s.meter_opening()[0] for c, n, s, _ in scene_meters(b)}
    assert all(v == 0 for (c, _), v in openings.items() if c == "00")
    assert openings[("01", "Lookup")] == 0
    assert openings[("01", "Positions")] == led.before("positions")
    assert openings[("02", "Scores")] == led.before("L0.scores")
    assert openings[("03", "Climb")] == led.after("L0.mlp_down")
    assert openings[("03", "Lens")] == led.after(f"L{GPT2_SMALL.n_layer - 1}.mlp_down")
    assert openings[("04", "LastRow")] == led.before("unembed")
    assert all(v == led.total for (c, n), v in openings.items() if c in ("04", "05") and n != "LastRow")
    assert openings[("06", "Loop")] == led.total
    loop = sum(forward_ledger(GPT2_SMALL, 64 + i).total for i in range(N_GENERATE))
    assert all(v == loop for (c, n), v in openings.items() if c == "06" and n != "Loop")


def test_no_scene_builds_or_sets_the_meter_itself():
    """ChapterScene owns the meter: chapters say where it opens (meter_opening) and pay()."""
    for path in sorted((ROOT / "scenes").glob("ch*.py")):
        src = path.read_text(encoding="utf-8")
        for pattern in (r"FlopsMeter\(", r"self\.meter\s*=", r"counter\.set_value", r"remove\(self\.meter\)",
                        r"meter_slots", r"add_furniture"):
            assert not re.search(pattern, src), f"{path.name}: {pattern}"


@pytest.mark.parametrize("rate_func", [rate_functions.smooth, linear, there_and_back, lambda t: t ** 3])
def test_count_to_follows_its_rate_function(rate_func):
    counter = M.GlyphCounter(1_000, slots=8, size=28)
    anim = M.CountTo(counter, 101_000, rate_func=rate_func)
    for alpha in (0.0, 0.2, 0.5, 0.9, 1.0):
        anim.interpolate(alpha)
        assert counter.value == round(1_000 + 100_000 * rate_func(alpha))


def test_count_to_eases_unless_told():
    counter = M.GlyphCounter(0, slots=8, size=28)
    anim = M.CountTo(counter, 100_000)
    anim.interpolate(0.1)
    assert counter.value == round(100_000 * rate_functions.smooth(0.1)) < 10_000


def test_meter_digits_are_the_monospace_numbers_pango_draws():
    """One glyph mechanism: the counter's digits have the outline of the same number as Text."""
    counter = M.GlyphCounter(45_447_547_392, slots=15, size=28)
    pango = TX.compact_text(Text("45,447,547,392", font=S.MONO, font_size=28))
    ours, theirs = counter.digits.points, glyphs_of(pango)[0].points
    assert ours.shape == theirs.shape
    assert np.abs((ours - ours.min(axis=0)) - (theirs - theirs.min(axis=0))).max() < 1e-5
    # right-aligned in its frame, whatever the number of digits: the last digit keeps its place
    right = counter.digits.get_right()[0]
    assert right == pytest.approx(counter.frame.get_right()[0], abs=0.05)
    for value in (2, 12, 1_002, 547_392):
        counter.set_value(value)
        assert counter.digits.get_right()[0] == pytest.approx(right)
    with pytest.raises(ValueError):
        counter.set_value(10 ** 15)


def test_scenes_pay_only_through_chapter_scene():
    """One way to pay: chapters call self.pay / self.pay_total, never the meter's own pay."""
    for path in sorted((ROOT / "scenes").glob("ch[0-9][0-9]_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "pay" and isinstance(node.value, ast.Attribute):
                assert node.value.attr != "meter", f"{path.name}:{node.lineno} pays through the meter itself"
            if isinstance(node, ast.FunctionDef):
                assert "pay" not in node.name, f"{path.name}:{node.lineno} defines its own {node.name}()"


def test_pay_plays_the_alongside_animations_then_the_meters_to_the_ledger_total():
    b = light_bundle(64)
    _, _, scene, meter = next(scene_meters(b))
    scene.meter, played = meter, []
    scene.play = lambda *anims, run_time: played.append((anims, run_time))
    marker = object()
    scene.pay("L0.qkv", marker, run_time=0.7, through="L0.mlp_down", step="layer 1")
    (anims, run_time), = played
    assert anims[0] is marker and run_time == 0.7
    assert isinstance(anims[1], M.CountTo) and anims[1].target == scene.ledger.after("L0.mlp_down")
    assert string_of(meter.step_mob) == "layer 1"
    scene.pay("unembed", run_time=0.5)
    assert played[-1][0][0].target == scene.ledger.total and string_of(meter.step_mob) == scene.ledger["unembed"].step
    scene.pay_total(scene.ledger.total, "+0")
    assert played[-1][0][0].target == scene.ledger.total and played[-1][1] == 1.5
