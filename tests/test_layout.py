"""Named layout: the regions in scenes/style.py and the placement helpers in scenes/layout.py."""
from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UL, Rectangle

from onepass.scenes import style as S
from onepass.scenes.layout import below, fit_to, keep_inside, place_in, place_row


def box(w: float, h: float) -> Rectangle:
    return Rectangle(width=w, height=h)


def test_regions_sit_between_the_furniture_and_the_caption_band():
    for region in (S.FULL, S.CONTENT, S.TEXT, S.LEFT_HALF, S.RIGHT_HALF, S.LEFT_COLUMN, S.SIDE_PANEL):
        assert region.bottom >= S.CAPTION_TOP and region.top <= S.CONTENT_TOP
        assert region.left >= S.LEFT_EDGE - 1e-9 and region.right <= S.RIGHT_EDGE + 1e-9
    assert S.FULL_W == S.FRAME_W - 2 * S.MARGIN
    assert np.isclose(S.CONTENT_W, S.FULL_W - 0.4) and np.isclose(S.CONTENT_Y, (S.CONTENT_TOP + S.CAPTION_TOP) / 2)
    assert S.LEFT_COLUMN.right <= S.SIDE_PANEL.left


def test_place_in_puts_a_corner_or_an_edge_where_the_region_has_it():
    m = place_in(box(2, 1), S.CONTENT, UL)
    assert np.allclose(m.get_corner(UL), [S.CONTENT.left, S.CONTENT.top, 0])
    m = place_in(box(2, 1), S.SIDE_PANEL, LEFT, y=1.4)
    assert np.allclose(m.get_left(), [S.SIDE_PANEL.left, 1.4, 0])
    m = place_in(box(2, 1), S.CONTENT, DOWN, buff=0.2)
    assert np.isclose(m.get_bottom()[1], S.CONTENT.bottom + 0.2) and np.isclose(m.get_x(), S.CONTENT.x)
    assert np.allclose(place_in(box(2, 1), S.CONTENT).get_center(), [S.CONTENT.x, S.CONTENT.y, 0])


def test_fit_to_shrinks_to_the_tighter_side_and_grows_only_as_far_as_allowed():
    m = fit_to(box(20, 2), S.CONTENT)
    assert np.isclose(m.width, S.CONTENT.width) and m.height < S.CONTENT.height
    m = fit_to(box(2, 20), width=10, height=4)
    assert np.isclose(m.height, 4)
    assert np.isclose(fit_to(box(2, 1), S.CONTENT).width, 2)               # never up by default
    assert np.isclose(fit_to(box(2, 1), S.CONTENT, grow=1.3).width, 2.6)   # up by at most `grow`


def test_keep_inside_moves_back_out_of_the_caption_band_and_off_the_edge():
    m = keep_inside(box(2, 1).move_to([0, S.CAPTION_TOP, 0]), S.CONTENT)
    assert np.isclose(m.get_bottom()[1], S.CONTENT.bottom) and np.isclose(m.width, 2)
    m = keep_inside(box(2, 1).move_to([S.RIGHT_EDGE, 0, 0]), S.FULL)
    assert np.isclose(m.get_right()[0], S.RIGHT_EDGE)
    inside = box(2, 1).move_to([1, 1, 0])
    assert np.allclose(keep_inside(inside, S.CONTENT).get_center(), [1, 1, 0])


def test_below_and_place_row():
    ref = box(4, 1).move_to([1, 1, 0])
    m = below(box(2, 1), ref, buff=0.3, aligned=LEFT)
    assert np.isclose(m.get_top()[1], ref.get_bottom()[1] - 0.3) and np.isclose(m.get_left()[0], ref.get_left()[0])
    cells = [box(1, 0.5), None, box(1, 0.5), box(1, 0.5)]
    row = place_row(cells, [S.TEXT.left, 0, 0, S.TEXT.right], "LLCR", 0.5)
    assert len(row) == 3
    assert np.isclose(cells[0].get_left()[0], S.TEXT.left) and np.isclose(cells[3].get_right()[0], S.TEXT.right)
    assert np.allclose(cells[2].get_center(), [0, 0.5, 0])
    assert np.isclose(cells[0].get_critical_point(RIGHT)[1], 0.5)


def test_a_swell_stays_inside_the_frame_and_is_manims_indicate_where_it_fits():
    """The film's Indicate (scenes/follow.Swell): a label at the frame's margin, a row as wide as the
    frame and a label grown from its edge all stay inside at their largest; in the middle of the
    frame the swell is manim's own."""
    from manim import Indicate

    from onepass.scenes.follow import SWELL_ROOM, Swell

    def inside(m):
        return (m.get_left()[0] >= SWELL_ROOM.left - 1e-6 and m.get_right()[0] <= SWELL_ROOM.right + 1e-6
                and m.get_top()[1] <= SWELL_ROOM.top + 1e-6 and m.get_bottom()[1] >= SWELL_ROOM.bottom - 1e-6)

    at_margin = box(5, 0.3).to_corner(UL, buff=S.MARGIN)
    full_row = box(S.FULL_W, 0.4)
    for mob, kw in [(at_margin, {}), (full_row, {}), (at_margin, {"about_edge": UL})]:
        assert not inside(mob.copy().scale(1.2))            # what manim's Indicate would reach
        target = Swell(mob, scale_factor=1.2, **kw).create_target()
        assert inside(target) and target.width > mob.width
    grown = Swell(at_margin, scale_factor=1.2, about_edge=UL).create_target()
    assert np.allclose(grown.get_corner(UL), at_margin.get_corner(UL))   # grown from its corner, not moved
    middle = box(2, 1)
    assert np.allclose(Swell(middle).create_target().points, Indicate(middle).create_target().points)
