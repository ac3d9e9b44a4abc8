"""Attention drawn as arcs (onepass.scenes.widgets.AttentionArcs): the lines are the matrix, nothing else."""
from __future__ import annotations

import numpy as np
import pytest

from onepass.scenes.widgets import GRID_TOKENS, AttentionArcs, token_window


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def causal_weights(T: int, seed: int = 0, sharp: float = 3.0) -> np.ndarray:
    s = np.random.default_rng(seed).normal(size=(T, T)) * sharp
    s[np.triu_indices(T, 1)] = -np.inf
    return softmax_rows(s)


def full_weights(T: int, seed: int = 1, sharp: float = 3.0) -> np.ndarray:
    return softmax_rows(np.random.default_rng(seed).normal(size=(T, T)) * sharp)


TOKENS = ["The", " cat", " sat", " on", " the", " mat"]


@pytest.mark.parametrize("layout", ["row", "columns"])
def test_one_line_per_visible_weight_with_that_weight(layout):
    w = causal_weights(6)
    arcs = AttentionArcs(w, labels=TOKENS if layout == "row" else None, layout=layout)
    expected = {(q, k) for q in range(6) for k in range(6) if w[q, k] >= AttentionArcs.FLOOR}
    assert set(arcs.arcs) == expected
    assert len(arcs.lines) == len(expected)
    for (q, k), v in arcs.weight_of.items():
        assert v == pytest.approx(w[q, k])
    # heavier weight, thicker and more opaque line
    by_weight = sorted(arcs.arcs.items(), key=lambda kv: w[kv[0]])
    widths = [p.get_stroke_width() for _, p in by_weight]
    opacities = [p.get_stroke_opacity() for _, p in by_weight]
    assert widths == sorted(widths) and opacities == sorted(opacities)
    assert widths[-1] > 3 * widths[0]


def test_masked_and_zero_weights_draw_nothing():
    w = causal_weights(6)
    w[5] = 0.0
    w[5, 2] = 1.0                      # the last token reads one token only
    arcs = AttentionArcs(w, labels=TOKENS)
    assert not any(k > q for q, k in arcs.arcs)      # the mask: backwards only
    assert [k for q, k in arcs.arcs if q == 5] == [2]
    assert len(arcs.row(5)) == 1


def test_causal_lines_bow_above_the_row_and_unmasked_ones_below_as_well():
    causal = AttentionArcs(causal_weights(6), labels=TOKENS)
    top_of_row = causal.marks.get_top()[1]
    assert all(p.get_bottom()[1] >= top_of_row - 1e-6 for p in causal.lines)
    full = AttentionArcs(full_weights(6), labels=TOKENS)
    below = [(q, k) for (q, k), p in full.arcs.items() if p.get_top()[1] <= full.marks.get_bottom()[1] + 1e-6]
    assert below and all(k > q for q, k in below)    # reading a later token: below the row


def test_one_token_builds():
    arcs = AttentionArcs(np.ones((1, 1)), labels=["Hi"])
    assert list(arcs.arcs) == [(0, 0)] and len(arcs.marks) == 1
    small = AttentionArcs(np.ones((1, 1)), layout="columns", width=0.8, height=1.2)
    assert list(small.arcs) == [(0, 0)]


def test_long_prompt_uses_the_grid_window():
    T = GRID_TOKENS + 7
    arcs = AttentionArcs(causal_weights(T), labels=[f"t{i}" for i in range(T)])
    assert arcs.positions == token_window(T)
    assert len(arcs.marks) == GRID_TOKENS
    assert all(q in arcs.positions and k in arcs.positions for q, k in arcs.arcs)


def test_highlight_fades_every_other_row():
    w = causal_weights(6)
    arcs = AttentionArcs(w, labels=TOKENS, highlight=5)
    for (q, _), p in arcs.arcs.items():
        expected = p.base_opacity * (1.0 if q == 5 else AttentionArcs.FADED)
        assert p.get_stroke_opacity() == pytest.approx(expected)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        AttentionArcs(np.ones((2, 3)))
    with pytest.raises(ValueError):
        AttentionArcs(np.ones((2, 2)), layout="circle")


def test_columns_hang_on_anchors_level_with_their_rows():
    """A grid's rows as the queries: each line leaves its row's right edge; the keys stand level with the rows."""
    from manim import Rectangle
    w = causal_weights(4)
    rows = [Rectangle(width=2, height=0.4).move_to([0, -0.5 * i, 0]) for i in range(4)]
    arcs = AttentionArcs(w, labels=["a", "b", "c", "d"], layout="columns", anchors=rows, width=1.5)
    for (q, k), p in arcs.arcs.items():
        start, end = p.get_start(), p.get_end()
        assert start[0] > rows[q].get_right()[0] and abs(start[1] - rows[q].get_y()) < 1e-6
        assert abs(end[1] - arcs.key_marks[k].get_y()) < 1e-6
    assert all(abs(m.get_y() - r.get_y()) < 1e-6 for m, r in zip(arcs.key_marks, rows))
    # only the anchored rows draw lines
    one = AttentionArcs(w, labels=["a", "b", "c", "d"], layout="columns", anchors=[None, None, None, rows[3]])
    assert {q for q, _ in one.arcs} == {3}


def test_a_curve_copied_from_the_blank_one_is_the_curve_cubicbezier_makes():
    """scenes/widgets.curve (every attention line, made by copying one blank curve): the same class,
    points and every attribute as CubicBezier(...) with those points (and the id of what it was copied
    from, which manim's copies carry), and a new object each time."""
    from manim import CubicBezier

    from onepass.scenes.widgets import curve
    ends = [np.array(p, dtype=float) for p in ([0, 0, 0], [0.4, 1.2, 0], [1.1, 1.3, 0], [1.5, 0.2, 0])]
    made, built = curve(*ends), CubicBezier(*ends)
    again = curve(*[p + 1 for p in ends])
    assert type(made) is CubicBezier and made is not again and not np.shares_memory(made.points, again.points)
    assert set(made.__dict__) == set(built.__dict__) | {"original_id"}     # a copy's mark (hashing skips it)
    for name, value in built.__dict__.items():
        ours = made.__dict__[name]
        if isinstance(value, np.ndarray):
            assert ours.dtype == value.dtype and np.array_equal(ours, value), name
        elif not callable(value):
            assert ours == value, name
    assert np.array_equal(again.points, built.points + 1)
