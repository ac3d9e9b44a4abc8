"""What onepass does to manim's Text beyond its public arguments: the attributes its SVG parsing
leaves on a Text and its glyphs, and the glyph list and strings of a Text onepass assembles itself.

manim's Text is one VMobject per glyph (its `submobjects`), built by parsing the SVG Pango lays
out; it keeps `original_text` (the string asked for), `text` (without spaces), `initial_height`,
`chars` (its glyphs as a VGroup) and the parse's own state (`id_to_vgroup_dict`, `svg_default`,
`path_string_config`, and each glyph's `path_obj`). scenes/text.py builds every label through these
functions and reads none of those names itself (tests/test_layers.py); tests/test_frame_path.py
checks each one against the supported manim (engine/versions.py).
"""
from __future__ import annotations

import numpy as np
from manim import Text, VGroup

# Text attributes only its SVG parsing needs; a copy (every Transform/FadeIn makes several)
# would otherwise deep-copy them for every label
PARSE_ONLY = ("id_to_vgroup_dict", "svg_default", "path_string_config")


def light(mob):
    """`mob` without what its glyphs kept of the SVG they were parsed from (each glyph's svgelements
    path: a hundred small objects for a number): manim deep-copies them on every copy, and a
    FadeIn or Transform copies a label two or three times, for nothing, since the glyph's points
    are all that is drawn and moved. Only the shapes' construction reads that path."""
    for m in mob.get_family():
        if getattr(m, "path_obj", None) is not None:
            m.path_obj = None
    return mob


def compact_text(t: Text) -> Text:
    """One shape for all of a Text's glyphs, when they share one colour.

    A Text is one VMobject per glyph; numbers in grids are most of what a scene copies and
    draws, and each glyph costs a deep copy per animation and a cairo path per frame. Merged,
    a number is one path with several outlines: it looks the same (the outlines do not
    overlap), still is a Text (same `original_text`, colour, size, position) and still
    fades and transforms; `t.chars` then holds the one merged shape.
    """
    glyphs = [g for g in t.submobjects if g.has_points() and not g.submobjects]
    if len(glyphs) == len(t.submobjects) and len(glyphs) > 1:
        colours = {(tuple(np.round(g.get_fill_rgbas()[0], 4)), tuple(np.round(g.get_stroke_rgbas()[0], 4)),
                    g.get_stroke_width()) for g in glyphs}
        if len(colours) == 1:
            merged = glyphs[0]
            merged.set_points(np.concatenate([g.points for g in glyphs]))
            t.submobjects = [merged]
            t.chars = VGroup(merged)
    for name in PARSE_ONLY:
        if name in t.__dict__:
            setattr(t, name, type(getattr(t, name))())
    return t


def glyphs_of(t: Text) -> list:
    """A Text's glyphs, one shape each, in the order Pango laid them out."""
    return list(t.submobjects)


def set_glyphs(t: Text, glyphs: list) -> Text:
    """`t` drawn as `glyphs` (shapes made by other Texts: a right-to-left label set line by line)."""
    t.submobjects = list(glyphs)
    return t


def string_of(t: Text) -> str:
    """The string a Text was asked to show (as given, spaces and marks included)."""
    return t.original_text


def set_string(t: Text, text: str) -> Text:
    """`t` says it shows `text` (a label wrapped in direction marks for Pango, shown as written)."""
    t.original_text = text
    return t


def composed(template: Text, outline: np.ndarray, text: str, color, shown: str) -> Text:
    """A copy of `template` (a compact one-shape Text) whose shape is `outline` (points), centred,
    coloured `color`, and which is the Text of `text` (`shown`: `text` without its spaces, as manim
    keeps it): a number put together from glyph outlines shaped once, as Pango would have laid it."""
    t = template.copy()
    t.submobjects[0].set_points(outline)
    t.center()
    t.set_color(color)
    t.original_text, t.text = text, shown
    t.initial_height = t.height
    return t
