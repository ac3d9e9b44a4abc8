"""Fast text (render processes): cached labels and composed numbers look exactly like Pango's."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from onepass.engine.text import glyphs_of, string_of  # noqa: E402
from onepass.scenes import style as S  # noqa: E402
from onepass.scenes import text as TX  # noqa: E402


@pytest.fixture()
def fast_text():
    TX.enable_text_cache()
    yield
    TX.enable_text_cache(False)


def pango(text: str, size: int) -> TX.Text:
    return TX.compact_text(TX.Text(text, font=S.MONO, font_size=size, color=S.INK))


@pytest.mark.parametrize("text", ["+0.12", "−1.57", "12.3%", "−∞", "5 × 768", "24,379,392", "#31", "(8 × 64)"])
@pytest.mark.parametrize("size", [S.SMALL, S.NUMBER_SIZE])
def test_composed_numbers_have_pangos_outline(fast_text, text, size):
    fast = TX.label(text, size, S.INK, mono=True, compact=True)
    slow = pango(text, size)
    assert isinstance(fast, TX.Text) and string_of(fast) == text
    assert glyphs_of(fast)[0].points.shape == glyphs_of(slow)[0].points.shape
    assert np.abs(glyphs_of(fast)[0].points - glyphs_of(slow)[0].points).max() < 1e-5
    assert fast.font_size == pytest.approx(slow.font_size)
    assert fast.get_fill_color() == slow.get_fill_color()


def test_cached_label_is_an_independent_copy(fast_text):
    a = TX.label("head 3 of 12", S.SMALL, S.MUTED)
    b = TX.label("head 3 of 12", S.SMALL, S.MUTED)
    assert a is not b and np.allclose(a.get_all_points(), b.get_all_points())
    b.shift([1, 0, 0]).set_color(S.TOKEN)
    c = TX.label("head 3 of 12", S.SMALL, S.MUTED)
    assert np.allclose(c.get_all_points(), a.get_all_points()) and c.get_fill_color() == a.get_fill_color()


def test_compact_text_keeps_glyphs_and_place():
    plain = TX.Text("−0.57", font=S.MONO, font_size=S.NUMBER_SIZE)
    compact = TX.compact_text(TX.Text("−0.57", font=S.MONO, font_size=S.NUMBER_SIZE))
    assert len(glyphs_of(compact)) == 1
    assert np.allclose(compact.get_all_points(), np.concatenate([g.points for g in glyphs_of(plain)]))
    assert np.allclose(compact.get_center(), plain.get_center())


def family_state(mob):
    return [(type(m).__name__, m.points.tobytes(), m.get_fill_rgbas().tobytes(), m.get_stroke_width())
            for m in mob.get_family()]


def test_labels_kept_on_the_shelf_come_back_as_built_and_a_bad_file_is_built_again(tmp_path, monkeypatch):
    """A scene process loads the labels an earlier one built (onepass.scenes.text.Shelf) instead of
    shaping them again: the same outline, colours and attributes, never Pango's work twice; a
    file that cannot be read is built again and replaced."""
    built = []
    real = TX.Text

    def counting(*args, **kw):
        built.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(TX, "Text", counting)
    TX.enable_text_cache(folder=tmp_path)
    try:
        first = TX.label("the score grid", S.SMALL, S.MUTED, compact=True)
        assert built == ["the score grid"] and len(list(tmp_path.glob("*.label"))) == 1
        TX.enable_text_cache(folder=tmp_path)          # a new process: its memory cache is empty
        again = TX.label("the score grid", S.SMALL, S.MUTED, compact=True)
        assert built == ["the score grid"], "a kept label was shaped again"
        assert family_state(again) == family_state(first)
        assert string_of(again) == string_of(first) and again.font_size == first.font_size
        other = TX.label("the score grid", S.SMALL, S.TOKEN, compact=True)     # another colour: its own
        assert len(built) == 2 and family_state(other) != family_state(first)
        for f in tmp_path.glob("*.label"):
            f.write_bytes(b"not a label")
        TX.enable_text_cache(folder=tmp_path)
        rebuilt = TX.label("the score grid", S.SMALL, S.MUTED, compact=True)
        assert len(built) == 3 and family_state(rebuilt) == family_state(first)
        TX.enable_text_cache(folder=tmp_path)
        TX.label("the score grid", S.SMALL, S.MUTED, compact=True)
        assert len(built) == 3, "the damaged file was not replaced"
    finally:
        TX.enable_text_cache(False)
