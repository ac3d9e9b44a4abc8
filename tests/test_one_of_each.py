"""One of each (issue 42 item 6): knowledge that lived in two places now lives in one, and the
places that used both still agree."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from onepass.film.kit import handout


def numbers_in(text: str) -> set[int]:
    """The whole numbers a line holds, in any script's digits (int() reads them all)."""
    return {int(n) for n in re.findall(r"\d+", text)}


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_handout_ledger_says_each_step_as_the_meter_does(tiny_bundle, lang):
    """The handout's ledger rows name every step with the words the scene's Σ FLOPs meter shows
    for it, MLP widths (d, d_ff) included (onepass.data.flops.Entry.message, read from bundle.shape)."""
    from onepass.scenes.base import ChapterScene
    from onepass.words.catalog import Words
    words = Words.load(lang)
    scene = SimpleNamespace(chapter="02", bundle=tiny_bundle, ledger=tiny_bundle.ledger(), words=words)
    scene.text = ChapterScene.text.__get__(scene)           # what a scene's meter reads, without a scene
    for e in tiny_bundle.ledger().entries:
        said = ChapterScene.step_text(scene, e.key)
        assert handout.step_words(e, tiny_bundle, words) == said and said.strip(), e.key
        if e.key.endswith("mlp_up"):
            assert numbers_in(said) >= {tiny_bundle.shape.n_embd, tiny_bundle.shape.d_ff}, said


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
@pytest.mark.parametrize("model", ["gpt2", "smollm2-135m-instruct"])
def test_the_meters_widths_are_numbers_in_the_films_style(lang, model):
    """The meter's 'MLP up 576→1536' (a bare int through str()): every step's widths as N.fmt_int writes
    them in the film's language (576→1,536; es 576→1.536), on the scene's meter and in the kit alike."""
    from onepass.data import flops
    from onepass.data.models import MODELS
    from onepass.scenes.base import ChapterScene
    from onepass.words import numbers as N
    from onepass.words.catalog import Words
    shape = MODELS[model].shape()
    N.set_language(lang)
    try:
        words = Words.load(lang)
        ledger = flops.forward_ledger(shape, 5)
        bundle = SimpleNamespace(shape=shape)
        scene = SimpleNamespace(chapter="03", bundle=bundle, ledger=ledger, words=words)
        scene.text = ChapterScene.text.__get__(scene)
        for key, (a, b) in {"L0.mlp_up": (shape.n_embd, shape.d_ff), "L0.mlp_down": (shape.d_ff, shape.n_embd)}.items():
            said = ChapterScene.step_text(scene, key)
            assert f"{N.fmt_int(a)}→{N.fmt_int(b)}" in said, said
            assert handout.step_words(ledger[key], bundle, words) == said
        assert N.fmt_int(shape.d_ff) != str(shape.d_ff)         # a width of four digits or more, grouped
    finally:
        N.set_language("en")


def test_one_flow_lays_items_out_like_words_in_a_paragraph():
    """onepass.scenes.layout.flow, the one line-wrapping helper (chapter 00's prompt chips, chapter 04's
    token rows, chapter 05's examples): as many items to a line as fit, in reading order, lines
    under each other, none wider than asked."""
    from manim import LEFT, Square, VGroup
    from onepass.scenes.layout import GAP, flow
    items = [Square(side_length=1.0 + 0.1 * i) for i in range(7)]
    lines = flow(items, 4.0, GAP.s, GAP.m)
    assert [m for line in lines for m in line] == items and len(lines) >= 3
    for line in lines:
        assert line.width <= 4.0 + 1e-9
        assert all(a.get_right()[0] < b.get_left()[0] for a, b in zip(line, line[1:]))
        assert abs(line.get_left()[0] - lines[0].get_left()[0]) < 1e-9       # flush left
    assert all(a.get_bottom()[1] > b.get_top()[1] for a, b in zip(lines, lines[1:]))
    # placed from the right, lines centred (chapter 05's examples in an RTL film)
    items = VGroup(*[Square(side_length=1.0) for _ in range(5)])
    lines = flow(items, 2.5, GAP.s, GAP.xs, along=LEFT, edge=None,
                 lines_aligned=None)
    assert [len(line) for line in lines] == [2, 2, 1]
    assert items[1].get_center()[0] < items[0].get_center()[0]
    assert abs(lines[2].get_center()[0] - lines[0].get_center()[0]) < 1e-9


def test_trimming_a_clip_and_placing_a_recordings_pieces_agree_on_where_speech_is():
    """One test of voice against silence (onepass.voiceover.audio.voiced): the clip a voice makes is trimmed
    to the same speech that alignment (voiceover/align.py) finds a recorded piece's bounds by."""
    import numpy as np
    from onepass.voiceover import align, audio
    sr = audio.SR
    rng = np.random.default_rng(7)
    quiet, said = np.zeros(int(0.5 * sr), np.float32), (0.2 * rng.standard_normal(int(0.8 * sr))).astype(np.float32)
    x = np.concatenate([quiet, said, quiet])
    start, end = align._speech_bounds(x, sr, 0.0, len(x) / sr)
    assert abs(start - 0.5) <= 0.01 and abs(end - 1.3) <= 0.01
    trimmed = audio.trim(x, sr)
    assert abs(len(trimmed) / sr - (end - start + 2 * audio.EDGE)) <= 0.011
    assert audio.runs([0, 1, 1, 0, 1]) == [(1, 3), (4, 5)]
    assert audio.silent_stretches(x, sr, min_s=0.4) == [(0.0, 0.5), (1.3, 1.8)]


SIZES = {"n_embd", "n_head", "n_layer", "vocab_size", "n_inner", "n_positions"}


def test_model_sizes_are_read_through_bundle_shape_only():
    """Scenes, narration, facts and the film read a model's sizes from `bundle.shape` (onepass.data.flops.Shape,
    made from the config in one place), never from the raw config: no `config["n_embd"]` (or
    `.get("n_head")`, ...) in their code. data/ itself (extraction, the bundle's checks) may."""
    root = Path(__file__).resolve().parents[1]
    wrong = []
    for folder in ("scenes", "voiceover", "data/facts", "film", "words", "engine"):
        for path in sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                key, of = None, ""
                if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                    key, of = node.slice.value, ast.unparse(node.value)
                elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "get" and node.args \
                        and isinstance(node.args[0], ast.Constant):
                    key, of = node.args[0].value, ast.unparse(node.func.value)
                if key in SIZES and ("config" in of or of == "cfg"):     # a config, not a dict of facts
                    wrong.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    assert wrong == [], wrong
