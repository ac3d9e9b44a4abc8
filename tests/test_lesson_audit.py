"""bench/lesson_audit.py (issue 40's count of table-only beats): its rule on hand-made beats, and a
dry run of one chapter read beat by beat."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from manim import LEFT, RIGHT, UP, Arrow, Rectangle, RoundedRectangle, SurroundingRectangle

from bench import lesson_audit as A
from onepass.scenes.text import label
from onepass.scenes.widgets import NumberGrid


def verdict(*mobs) -> str:
    """The audit's verdict on one beat that brings `mobs` on (all still on screen at its end)."""
    rec = A.Recorder(SimpleNamespace(mobjects=list(mobs)))
    rec.start("beat")
    for m in mobs:
        rec.record(m)
    rec.end()
    return rec.beats[0]["verdict"]


def test_a_grid_of_numbers_with_words_and_highlights_is_table_only():
    grid = NumberGrid(np.arange(6.0).reshape(2, 3), row_labels=["a", "b"])
    assert verdict(grid, label("a headline"), SurroundingRectangle(grid.row_cells(0))) == "table-only"


def test_bars_a_heat_map_and_vectors_are_pictures_and_a_connecting_arrow_is_not():
    words = label("scores")
    bar = Rectangle(width=2.0, height=0.3, fill_opacity=1.0).next_to(words, RIGHT)
    assert verdict(words, bar) == "picture"
    assert verdict(NumberGrid(np.ones((2, 2)), show_values=False)) == "picture"
    # two arrows from one origin: vectors at their angles (chapter 01's rows, chapter 02's q and k)
    assert verdict(Arrow(np.zeros(3), RIGHT * 2, buff=0), Arrow(np.zeros(3), UP * 2, buff=0)) == "picture"
    # one arrow from a grid to a grid: still a beat of tables
    a, b = NumberGrid(np.ones((2, 2))), NumberGrid(np.zeros((2, 2))).shift(RIGHT * 4)
    assert verdict(a, b, Arrow(a.get_right(), b.get_left())) == "table-only"


def test_boxes_of_words_joined_by_an_arrow_are_a_diagram():
    left, right = label("encoder"), label("decoder").shift(RIGHT * 4)
    boxes = [RoundedRectangle(width=m.width + 0.4, height=m.height + 0.4).move_to(m) for m in (left, right)]
    arrow = Arrow(boxes[0].get_right(), boxes[1].get_left())
    assert verdict(left, right, *boxes, arrow) == "picture"
    assert verdict(left, right, *boxes) == "table-only"        # the same boxes, nothing joining them


def test_a_chapter_is_read_beat_by_beat(tiny_bundle):
    """Chapter 00 on the tiny bundle, drawn by a dry run: every narrated beat gets a verdict, in the
    catalog's order; the square of comparisons is a picture, the three ids of 'the' a table-only beat."""
    rows = A.audit_chapter(A.modules(A.HERE), "00", tiny_bundle)
    verdicts = {r["beat"]: r["verdict"] for r in rows}
    assert list(verdicts)[:2] == ["title", "intro"] and len(rows) == len(verdicts)
    assert verdicts["letters"] == "picture" and verdicts["subwords"] == "picture"
    assert verdicts["case"] == "table-only"
    assert all(v in {"title", "picture", "table-only", "hold"} for v in verdicts.values())


def test_a_modern_decoders_beats_are_named_by_the_wording_they_speak(tiny_bundle, bundle_root, capsys):
    """--model: a beat whose line takes its architecture's own wording (chNN-<beat>.<variant>) is a
    modern beat, counted per chapter in the table; GPT-2's beats keep their plain ids."""
    from onepass.data import extract
    smol = extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=bundle_root,
                           log=lambda m: None)
    mods = A.modules(A.HERE)
    assert A._line_of(mods, "03", "norm", smol) == {"line": "ch03-norm.rmsnorm"}
    assert A._line_of(mods, "03", "mlp_up", smol) == {"line": "ch03-mlp_up.swiglu"}
    assert A._line_of(mods, "03", "norm", tiny_bundle) == {"line": "ch03-norm"}
    rows = [{"beat": "title", "verdict": "title", "line": "ch03-title"},
            {"beat": "norm", "verdict": "picture", "line": "ch03-norm.rmsnorm"},
            {"beat": "params", "verdict": "table-only", "line": "ch03-params.swiglu"},
            {"beat": "lens", "verdict": "picture", "line": "ch03-lens"}]
    assert [r["beat"] for r in A.modern(rows)] == ["norm", "params"]
    A.print_table(None, {"commit": "x", "weights": "tiny", "prompt": "p", "model": "smollm2-135m-instruct",
                         "chapters": {"03": rows}})
    out = capsys.readouterr().out
    assert "| 03 | 2 | norm.rmsnorm, params.swiglu | params |" in out
