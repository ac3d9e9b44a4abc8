"""Marks on the right thing, numbers that never touch (issue 52, item 2).

* Two numbers side by side on a row keep a gap of at least MIN_NUMBER_GAP of their height: right-aligned
  numbers that fill their cells read as one ("0.00−0.01", "−6.03−12.76"). Checked at the end of every
  beat of every scene, on the short prompt (the dry runs the `built` fixture shares) and the longest
  (tests/test_input.py, in the dry runs of its 64-token prompt).
* A glow over some cells of a grid lights those cells and no other (a box around a triangle of the
  score grid lit its diagonal too).
* A text is inside a frame or highlight, or clear of its edges: never across one (ch01's row labels ran into
  the glow around their grid; ch06's stacked outlines ran through the k and v grids' numbers).
* What comes on screen stays long enough to read (ch06's ratio line went after 1.2 s, ch05's verdict came in
  over the chapter's last 3 s).
* Words change by a fade, never by a morph: a Transform of one string into another moves the glyphs'
  outlines point by point through shapes that are no letters (ch01's and ch03's titles did).
"""
from __future__ import annotations

import numpy as np
import pytest
from manim import RIGHT, Text, VGroup

from onepass.scenes import style as S
from onepass.scenes.registry import scenes_of
from onepass.scenes.text import LEGIBLE
from tests.helpers import (build_scene, covered_cells, crowded_numbers, shown_texts, string_of, text_morphs,
                           texts_across_frames, tips_on_numbers)

SCENES = [(chapter, cls.__name__) for chapter in ("00", "01", "02", "03", "04", "05", "06", "07")
          for cls in scenes_of(chapter)]


def test_the_check_catches_numbers_that_touch_and_lets_spaced_ones_be():
    a, b = Text("0.00", font_size=S.NUMBER_SIZE), Text("−0.01", font_size=S.NUMBER_SIZE)
    b.next_to(a, RIGHT, buff=0.02)
    assert len(crowded_numbers([a, b])) == 1                        # "0.00−0.01": one number to the eye
    b.next_to(a, RIGHT, buff=-0.05)
    assert "overlap" in crowded_numbers([a, b])[0]
    b.next_to(a, RIGHT, buff=a.height)
    assert crowded_numbers([a, b]) == []                            # a clear gap
    b.next_to(a, RIGHT, buff=0.02).shift(1.5 * a.height * np.array([0, 1, 0]))
    assert crowded_numbers([a, b]) == []                            # another row
    word = Text("tokens", font_size=S.NUMBER_SIZE).next_to(a, RIGHT, buff=0.02)
    assert crowded_numbers([a, word]) == []                         # "0.00 tokens" is a number and a word
    pct, inf = Text("12.5%", font_size=S.NUMBER_SIZE), Text("−∞", font_size=S.NUMBER_SIZE)
    inf.next_to(pct, RIGHT, buff=0.02)
    assert len(crowded_numbers([pct, inf])) == 1


@pytest.mark.parametrize("cell_w", [1.15, 1.0])
def test_a_grid_of_large_numbers_keeps_them_apart_and_legible(cell_w):
    """A trained model's logits and residuals ("−102.34", "−12.76") in the cells the tiny model's "0.03"
    fits: one size for the grid, a gap between neighbours, a decimal dropped before the size turns
    illegible."""
    from onepass.scenes.widgets import NumberGrid
    values = np.array([[0.0, -0.01, -6.03, -12.76, 5.5], [-102.34, -98.2, 3.1, -1000.5, 0.25]])
    grid = NumberGrid(values, cell_w=cell_w)
    assert crowded_numbers([grid]) == []
    sizes = {round(t.font_size, 2) for t in grid.values_mobs.values()}
    assert len(sizes) == 1 and min(sizes) >= LEGIBLE * S.SMALL - 0.05
    # the small numbers of the tiny model keep their decimals and their size
    small = NumberGrid(np.array([[0.0, -0.01, -0.04, 0.05]]), cell_w=1.0)
    assert [t.text for t in small.values_mobs.values()] == ["0.00", "−0.01", "−0.04", "0.05"]
    assert crowded_numbers([small]) == []


def test_the_check_catches_an_arrowhead_on_a_number():
    from manim import LEFT, Arrow
    value = Text("−1.00", font_size=S.NUMBER_SIZE)
    arrow = Arrow(RIGHT * 3, value.get_right() + LEFT * 0.1, buff=0)        # its head on the number's last digit
    assert len(tips_on_numbers([value, arrow])) == 1
    arrow = Arrow(RIGHT * 3, value.get_right() + RIGHT * 0.1, buff=0)       # all but touching it
    assert len(tips_on_numbers([value, arrow])) == 1
    arrow = Arrow(RIGHT * 3, value.get_right() + RIGHT * 2 * value.height, buff=0)   # stops short of it
    assert tips_on_numbers([value, arrow]) == []


def test_the_check_catches_a_frame_across_a_text_and_lets_texts_in_or_clear_of_it_be():
    from manim import LEFT, Square

    from onepass.scenes.follow import glow, glow_cells
    from onepass.scenes.widgets import NumberGrid
    grid = NumberGrid(np.arange(12.0).reshape(3, 4), row_labels=["The", " cat", " sat"])
    around = glow(grid.cell_group, opacity=0)           # grown 0.1 out: into the labels 0.12 to the left
    assert len(texts_across_frames([grid, around])) == 3
    assert texts_across_frames([grid, glow_cells(grid, list(grid.cells))]) == []     # on the cells' edges
    # a text inside a glow made around it is fine; one its edge runs through is not
    word = Text("scores", font_size=S.NUMBER_SIZE)
    assert texts_across_frames([word, glow(word, buff=0.05)]) == []
    box = Square(side_length=1.0).next_to(word, LEFT, buff=-0.2)
    assert len(texts_across_frames([word, box])) == 1
    assert texts_across_frames([word, box.next_to(word, LEFT, buff=word.height)]) == []


@pytest.mark.parametrize("chapter,name", SCENES)
def test_no_two_numbers_touch_at_the_end_of_any_beat(built, chapter, name):
    """(nor does an arrowhead land on a number, nor a frame's edge run across a text:
    tests/helpers.crowding_check)"""
    assert built(chapter, name).crowded == []


# The longest prompt (64 tokens): tests/test_input.py checks it in the dry run of every scene it already makes.


# ---------------------------------------------------------------------------------------
# Glows in the shape of what they light

def test_a_glow_over_cells_lights_those_cells_and_no_other():
    from onepass.scenes.follow import glow, glow_cells
    from onepass.scenes.widgets import NumberGrid
    grid = NumberGrid(np.arange(36.0).reshape(6, 6))
    upper = {(r, c) for r in range(6) for c in range(6) if c > r}
    assert covered_cells(glow_cells(grid, sorted(upper)), grid.cells) == upper
    # the box around them lights the diagonal and below as well: the check can fail
    boxed = covered_cells(glow(VGroup(*[grid.cells[k] for k in upper])), grid.cells)
    assert (1, 1) in boxed and boxed > upper
    # patches that share no edge: one outline each
    apart = {(0, 0), (5, 5), (2, 3), (3, 3)}
    assert covered_cells(glow_cells(grid, sorted(apart)), grid.cells) == apart


GLOWING = [("01", "Lookup"), ("01", "Positions"), ("02", "Scores"), ("06", "Cache")]


@pytest.mark.parametrize("chapter,name", GLOWING)
def test_every_glow_over_a_grids_cells_lights_only_those(tiny_bundle, chapter, name, monkeypatch):
    """Every glow a scene makes over cells of a NumberGrid (alone or with their labels) covers the
    cells it was asked to light and no other cell of that grid."""
    import importlib
    import pkgutil

    import onepass.scenes as scenes
    from onepass.scenes import follow
    from onepass.scenes.widgets import NumberGrid
    grids, glows = [], []
    original_init = NumberGrid.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        grids.append(self)
    monkeypatch.setattr(NumberGrid, "__init__", recording_init)

    def recorded(make, kind):
        def wrapper(*args, **kwargs):
            shape = make(*args, **kwargs)
            for grid in grids:      # measured as made: the grid and its glow move together later
                if kind == "cells":
                    asked = set(args[1]) if args[0] is grid else set()
                else:
                    family = {id(m) for m in args[0].get_family()}
                    asked = {key for key, cell in grid.cells.items() if id(cell) in family}
                if asked:
                    glows.append((asked, covered_cells(shape, grid.cells)))
            return shape
        return wrapper
    for info in pkgutil.iter_modules(scenes.__path__):
        module = importlib.import_module(f"onepass.scenes.{info.name}")
        for attr, kind in (("glow", "box"), ("glow_cells", "cells")):
            if getattr(module, attr, None) is getattr(follow, attr):
                monkeypatch.setattr(module, attr, recorded(getattr(follow, attr), kind))
    build_scene(tiny_bundle, chapter, name, draw=False)
    assert glows, f"{name} glows over no grid's cells"
    for asked, covered in glows:
        assert covered == asked, f"{name}: a glow over {sorted(asked)} lights {sorted(covered)}"


# ---------------------------------------------------------------------------------------
# Words change by a fade

def test_the_check_catches_a_morph_between_strings_and_lets_fades_and_moves_be():
    from manim import FadeTransform, ReplacementTransform, Square, Transform
    a, b = Text("scores"), Text("weights")
    assert len(text_morphs([Transform(a, b)])) == 1
    assert len(text_morphs([ReplacementTransform(VGroup(Square(), a), VGroup(Square(), b))])) == 1
    from manim import AnimationGroup, LaggedStart
    assert len(text_morphs([LaggedStart(AnimationGroup(Transform(a, b)))])) == 1      # inside groups too
    assert text_morphs([FadeTransform(a, b)]) == []                                  # a fade: the right way
    assert text_morphs([Transform(a, Text("scores").shift(RIGHT))]) == []            # the same words, moved
    assert text_morphs([Transform(Square(), Square().shift(RIGHT))]) == []           # shapes, not words


def test_a_cross_fade_shows_the_old_words_or_the_new_never_both():
    """CrossFade (scenes/follow.py change()) faded the old look out while the new faded in: for a
    second two notes lay over each other. The old look is gone by half the play, the new one comes
    after it; the mobject ends saying the new words."""
    from manim import linear
    from onepass.engine.animation import CrossFade
    old, new = Text("scores"), Text("weights").shift(RIGHT)
    fade = CrossFade(old, new, rate_func=linear)
    fade.begin()
    leaving = {id(m) for m in fade.leaving.family_members_with_points()}

    def seen(alpha):
        fade.interpolate(alpha)
        parts = old.family_members_with_points()
        return (max(m.get_fill_opacity() for m in parts if id(m) in leaving),
                max(m.get_fill_opacity() for m in parts if id(m) not in leaving))

    assert seen(0.0) == pytest.approx((1, 0))
    gone, coming = seen(0.25)
    assert 0 < gone < 1 and coming == pytest.approx(0)       # the old fading, the new not yet
    assert seen(0.5) == pytest.approx((0, 0), abs=1e-6)      # between them: neither
    gone, coming = seen(0.75)
    assert gone == pytest.approx(0) and 0 < coming < 1       # the new coming, the old gone
    assert seen(1.0) == pytest.approx((0, 1))
    for alpha in np.linspace(0, 1, 21):
        assert min(seen(alpha)) < 1e-6, f"both looks seen at {alpha:.2f}"
    fade.finish()
    fade.clean_up_from_scene(type("Scene", (), {"remove": lambda *a: None, "add": lambda *a: None})())
    assert string_of(old) == "weights"


def test_a_cross_fade_brings_in_every_letter_of_the_new_words_where_it_stands():
    """Transform paired the new string's glyphs with padding copies (the old note longer than the new):
    mid-fade chapter 03's Spanish note lacked the i and the ó of "dispersión", and a glyph paired with
    another letter moves towards its outline. Every glyph of the new words shows, in its place."""
    from manim import linear
    from onepass.engine.animation import CrossFade
    old = Text("·the al entrar en la capa 1: media 0,00 · dispersión 0,03")
    new = Text("tras la LayerNorm: media 0,00 · dispersión 0,99")
    places = {tuple(np.round(m.get_center(), 3)) for m in new.family_members_with_points()}
    fade = CrossFade(old, new, rate_func=linear)
    fade.begin()
    fade.interpolate(0.75)
    leaving = {id(m) for m in fade.leaving.get_family()}
    seen = {}
    for m in old.family_members_with_points():
        if id(m) not in leaving:
            at = tuple(np.round(m.get_center(), 3))
            seen[at] = max(seen.get(at, 0.0), m.get_fill_opacity())
    assert set(seen) == places                                  # nothing moved off a letter's place
    assert min(seen.values()) == pytest.approx(0.5)             # every letter half in at three quarters


@pytest.mark.parametrize("chapter,name", SCENES)
def test_no_play_morphs_one_string_into_another(built, chapter, name):
    morphs = built(chapter, name).morphs
    assert not morphs, "\n".join(morphs)


# ---------------------------------------------------------------------------------------
# Long enough to read

# a line on screen stays at least this long; one still there at the scene's end came in at least as long
# before it as its words take to read at READ_WORDS_S a second
READ_S, READ_WORDS_S = 2.0, 3.0


def on_screen(bundle, chapter, name, lang="en"):
    """Each text the scene shows (by string): (first seen, last seen) in scene time, the scene's end
    counting as the last; and the scene's end."""
    import onepass.scenes.base as base
    seen = {}

    def note(scene):
        for mob in scene.mobjects:
            for t in shown_texts(mob):
                first, _ = seen.get(string_of(t), (scene.time, 0))
                seen[string_of(t)] = (first, scene.time)
    play = base.ChapterScene.play

    def played(self, *args, **kwargs):
        note(self)
        out = play(self, *args, **kwargs)
        note(self)
        return out
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(base.ChapterScene, "play", played)
        scene = build_scene(bundle, chapter, name, draw=False, lang=lang)
    return seen, scene.time


# the scenes whose lines came and went (or came at the end) too fast to read
@pytest.mark.parametrize("chapter,name", [("05", "Families"), ("06", "Scale")])
@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_every_line_stays_long_enough_to_read(tiny_bundle, chapter, name, lang):
    seen, end = on_screen(tiny_bundle, chapter, name, lang)
    assert seen
    for text, (first, last) in seen.items():
        need = READ_S
        if last >= end - 1e-6:
            last, need = end, max(READ_S, len(text.split()) / READ_WORDS_S)
        assert last - first >= need - 0.05, f"{chapter} {name} ({lang}): {text!r} on screen {last - first:.1f} s, under {need:.1f}"
