"""Pictures that follow the words: each marker of a beat's line brings its own step.

A narration line marks where the picture moves with named markers (`<bookmark mark="mask"/>` in
the catalog, words/markup.py). `say(scene, beat, mark, *animations)` holds the picture until the
marker is spoken, then plays the step that shows what is said there; `beat.at(mark)` only holds.
Scenes name markers; they never match wording or count sentences, so any wording in any language
that keeps the markers moves the same pictures.

A step must change enough of the frame for a viewer to see it (and for the review's still detector,
ffmpeg freezedetect at noise 0.001, to count it): a small label fading in is not a step; a filled
highlight behind the thing named (`glow`), a growing bar, an arrow or a column appearing is.
"""
from __future__ import annotations

import numpy as np
from manim import AnimationGroup, DecimalNumber, FadeIn, FadeOut, MarkupText, Polygon, SingleStringMathTex, SurroundingRectangle, \
    Text, Transform, VGroup, Wait

from onepass.engine.animation import CrossFade, Indication
from onepass.engine.text import string_of
from onepass.scenes import style as S
from onepass.scenes.layout import keep_inside


def glow(mob, color=S.TOKEN, buff: float = 0.1, opacity: float = 0.10, stroke: float = 3.0):
    """A filled, outlined box over `mob`: the thing a sentence names, lit up. The outline carries the
    highlight; the tint stays light (10%) because it lies over the words it lights, and a 22% tint
    took their contrast under 4.5:1 (bench/accessibility.py contrast)."""
    return SurroundingRectangle(mob, color=color, buff=buff, stroke_width=stroke, fill_color=color,
                                fill_opacity=opacity, corner_radius=0.08)



def glow_cells(grid, keys, color=S.TOKEN, buff: float = 0.0, opacity: float = 0.0, stroke: float = 3.0):
    """A glow in the shape of some of a NumberGrid's cells (`keys`: (row, col) of grid.cells): an outline
    along their edges (`buff` outside them: none by default, since grown outward it runs through the
    right-aligned numbers of the cells beside), so it lights those cells and no other (a triangle of a score
    grid stays a staircase; glow's box around it would light the diagonal too). One polygon per
    connected patch of cells that share edges. No tint by default: a cell's number takes S.ink_on(the
    cell), which may read at just 4.5:1, and any tint over both takes it below."""
    index = {key: (grid.rows.index(key[0]), grid.cols.index(key[1])) for key in keys}
    # the grid's column and row edges as drawn: column i spans xs[i]..xs[i + 1], row j ys[j]..ys[j + 1]
    first_row, first_col = grid.rows[0], grid.cols[0]
    xs = [grid.cells[(first_row, c)].get_left()[0] for c in grid.cols] + [grid.cells[(first_row, grid.cols[-1])].get_right()[0]]
    ys = [grid.cells[(r, first_col)].get_top()[1] for r in grid.rows] + [grid.cells[(grid.rows[-1], first_col)].get_bottom()[1]]
    # each cell's edges, counter-clockwise on the screen (rows go down); an edge two cells share cancels
    edges = {}
    for j, i in index.values():
        corners = [(i, j), (i, j + 1), (i + 1, j + 1), (i + 1, j)]       # (column edge, row edge)
        for a, b in zip(corners, corners[1:] + corners[:1]):
            if (b, a) in edges:
                del edges[(b, a)]
            else:
                edges[(a, b)] = True
    following = {}
    for a, b in edges:
        following.setdefault(a, []).append(b)
    outlines = []
    while following:
        start = next(iter(following))
        loop, at = [start], start
        while True:
            nxt = following[at].pop()
            if not following[at]:
                del following[at]
            if nxt == start:
                break
            loop.append(nxt)
            at = nxt
        # corners only (a point between two edges in line is dropped), each moved `buff` out along both
        # edges' outward normals: a rectilinear outline grown by buff
        points = [np.array([xs[i], ys[j]]) for i, j in loop]
        corners = []
        for k, p in enumerate(points):
            before, after = p - points[k - 1], points[(k + 1) % len(points)] - p
            if abs(before[0] * after[1] - before[1] * after[0]) > 1e-9:
                corners.append((p, before, after))
        area = sum(p[0] * q[1] - q[0] * p[1] for (p, _, _), (q, _, _) in zip(corners, corners[1:] + corners[:1]))
        turn = 1.0 if area > 0 else -1.0                # counter-clockwise: the outside is to the right
        moved = []
        for p, before, after in corners:
            out = sum(turn * np.array([d[1], -d[0]]) / np.linalg.norm(d) for d in (before, after))
            moved.append([*(p + buff * out), 0.0])
        outlines.append(Polygon(*moved, color=color, stroke_width=stroke, fill_color=color, fill_opacity=opacity))
    return outlines[0] if len(outlines) == 1 else VGroup(*outlines)


def change(mob, target, **kwargs):
    """`mob` turned into `target` (Transform's contract: `mob` stays on screen and ends looking like
    `target`), piece by piece: a piece whose words stay (a bar, a box, a letter) moves and reshapes;
    a piece whose words change cross-fades (CrossFade), since a Transform between two strings takes
    the letters through shapes that are no letters. Pieces pair up where both have as many parts."""
    def words(m):
        return {string_of(t) for t in m.get_family() if isinstance(t, Text)}
    if words(mob) == words(target):
        return Transform(mob, target, **kwargs)
    if not isinstance(mob, Text) and mob.submobjects and len(mob.submobjects) == len(target.submobjects):
        return AnimationGroup(*[change(a, b) for a, b in zip(mob.submobjects, target.submobjects)], **kwargs)
    return CrossFade(mob, target, **kwargs)


# where a swelling label may reach: the frame less half the margin the layout keeps
SWELL_ROOM = S.Region(-S.FRAME_W / 2 + S.MARGIN / 2, S.FRAME_W / 2 - S.MARGIN / 2,
                      -S.FRAME_H / 2 + S.MARGIN / 2, S.FRAME_H / 2 - S.MARGIN / 2)


class Swell(Indication):
    """The film's Indicate: the mobject swells and takes a colour, and back, never past the frame's
    edge. It grows about its centre, or about `about_edge` (a label at the frame's margin grows into
    the picture), at most to the size of SWELL_ROOM, and where its swollen self would still poke out
    of the room it is shifted back in (a table row as wide as the frame); a swell that stays inside
    is manim's Indicate exactly."""

    def __init__(self, mobject, *args, about_edge=None, **kwargs):
        self.about_edge = about_edge
        super().__init__(mobject, *args, **kwargs)

    def indicated(self, target, factor: float, color):
        if factor > 1:      # no larger than the room (a row as wide as the frame swells a little)
            w, h = target.width, target.height
            factor = min(factor, max(1.0, min(SWELL_ROOM.width / w if w else factor,
                                              SWELL_ROOM.height / h if h else factor)))
        target.scale(factor, about_edge=self.about_edge)     # about_edge None: about its centre
        if factor > 1:
            keep_inside(target, SWELL_ROOM)
        colour_keeping_words(target, color)
        return target


WORDS = (Text, MarkupText, SingleStringMathTex, DecimalNumber)   # what a viewer reads


def colour_keeping_words(mob, color):
    """mob.set_color(color), except that where mob holds words, a filled shape among them (a chip's
    box, a floor of the stack) takes the colour on its outline only: filled whole, it hid the words
    on it for the length of the swell."""
    family = mob.get_family()
    if not any(isinstance(m, WORDS) for m in family):
        mob.set_color(color)
        return

    def walk(m):
        if isinstance(m, WORDS):
            m.set_color(color)
            return
        if len(m.points):
            if m.get_fill_opacity() >= 0.5:
                m.set_stroke(color, family=False)
            else:
                m.set_color(color, family=False)
        for sub in m.submobjects:
            walk(sub)
    walk(mob)


def say(scene, beat, mark: str, *animations, into: float = 0.0, share: float = 0.35,
        run_time: float | None = None):
    """Hold until `mark` is spoken (and `into` of the rest of its sentence), then play `animations`
    over `share` of what is left of that sentence (or `run_time`)."""
    beat.at(mark, into)
    if animations:
        scene.play(*animations, run_time=run_time if run_time is not None else min(1.5, beat.span(share)))


class Pointer:
    """One highlight that moves to whatever is being said: `to(mob)` is the animation that brings it
    there (fading in the first time), `off()` the one that takes it away."""

    def __init__(self, color=S.TOKEN, buff: float = 0.08, opacity: float = 0.15):
        self.color, self.buff, self.opacity = color, buff, opacity
        self.box = None

    def to(self, mob, color=None):
        target = glow(mob, color=color or self.color, buff=self.buff, opacity=self.opacity)
        if self.box is None:
            self.box = target
            return FadeIn(target)
        return Transform(self.box, target)

    def off(self):
        box, self.box = self.box, None
        return FadeOut(box) if box is not None else Wait(0.01)
