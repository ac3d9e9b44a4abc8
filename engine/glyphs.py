"""A Text's SVG read glyph by glyph: each glyph outline parsed once per process, then placed.

manim builds a Text by having Pango (through cairo) write an SVG and parsing all of it with
svgelements: every glyph's outline again for every label, in pure Python (about nine tenths of a
label's cost). Cairo's SVG is always the same shape: each glyph an outline in <defs> (a <symbol>
holding one <path>), the text a list of <use> of those glyphs at (x, y) inside <g> elements that
carry the fill. So a Text is the same glyphs again and again, at other places.

`glyph_svg_mobject` replaces SVGMobject.generate_mobject for a Text while faster_manim() lasts
(renders and dry runs): it reads the SVG's glyphs and uses with a few patterns, makes each outline
once through manim's own parse (the glyph alone, at the origin, under the same root and style
wrapping: get_mobjects_from), reads each fill once the same way, and places a copy of the glyph at
each use, in the use's fill: the viewport's scale times (x, y), as svgelements computes a use's
translation. Anything else in the file (a
shape cairo writes for a colour glyph, an element these patterns do not know) falls back to
manim's parse of the whole file, so the result is manim's, less a rounding: a line's control
points are a third of the way along it, computed at the origin instead of at the use (the points
agree to about 1e-13; tests/test_frame_path.py checks).

What a glyph keeps of the parse: no `path_obj` (the film drops it anyway: engine/text.py light)
and the Text no `id_to_vgroup_dict` entries but its root (nothing of onepass reads them).
"""
from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import svgelements as se
from manim import RIGHT, Text, VGroup
from manim.mobject.svg.svg_mobject import SVGMobject

_ROOT = re.compile(r"<svg\b[^>]*>")
_SYMBOL = re.compile(r'<symbol overflow="visible" id="([^"]+)">\s*(<path [^>]*/>)\s*</symbol>')
_BODY_TAG = re.compile(r"<(/?)(\w+)([^>]*)>")
_USE = re.compile(r'^\s*xlink:href="#([^"]+)" x="([-0-9.e]+)" y="([-0-9.e]+)"\s*/$')
_STYLE = re.compile(r'^\s*style="([^"]*)"\s*$')

_PATH_STYLE = re.compile(r'style="([^"]*)"')
_SQUARE = "M 0 0 L 1 0 L 1 1 Z"          # any outline: a fill is read off it

# (root tag, glyph's <path>, svg_default, path_string_config) -> (the glyph manim's parse makes at
# the origin, None for an empty outline such as a space; the viewport's scale)
_SHAPES: dict[tuple, tuple] = {}
# (root tag, the <path>'s own style, the <g>'s fill, svg_default) -> what manim's parse gives a glyph
# drawn so: (fill_rgbas, stroke_rgbas, stroke_width)
_FILLS: dict[tuple, tuple] = {}


def _layout(svg: str):
    """(root tag, {glyph id: <path> element}, [(glyph id, x, y, fill style)]) of cairo's SVG, or None
    where the file holds anything else."""
    root = _ROOT.search(svg)
    if root is None:
        return None
    head, sep, body = svg.partition("</defs>")
    if not sep:                       # no glyphs at all (a label of spaces): the body alone
        head, body = "", svg[root.end():]
    symbols = dict(_SYMBOL.findall(head))
    if len(symbols) != head.count("<symbol"):
        return None
    uses, styles = [], []             # styles: the fill each open <g> gives its uses ("" none yet)
    for closing, tag, attrs in _BODY_TAG.findall(body):
        if tag == "use" and not closing:
            use = _USE.match(attrs)
            if use is None or use[1] not in symbols or not styles or not styles[-1]:
                return None
            uses.append((use[1], float(use[2]), float(use[3]), styles[-1]))
        elif tag == "g" and closing:
            if not styles:
                return None
            styles.pop()
        elif tag == "g":
            style, inherited = _STYLE.match(attrs), styles[-1] if styles else ""
            if style is not None and not inherited:
                styles.append(style[1])
            elif style is None and re.fullmatch(r'\s*id="[^"]*"\s*', attrs):
                styles.append(inherited)
            else:
                return None           # a <g> with other attributes, or styles nested in styles
        elif tag != "svg" or not closing:
            return None
    return root[0], symbols, uses


def _parse_one(mob: SVGMobject, root: str, path: str, style: str):
    """What manim's parse makes of the <path> element `path` used once, at the origin, inside a
    <g style="`style`">, under the file's own root tag and `mob`'s defaults: ([mobjects], viewport
    scale (svgelements maps a viewBox onto the root's width and height))."""
    svg = (f'<?xml version="1.0" encoding="UTF-8"?>\n{root}\n<defs>\n<g>\n'
           f'<symbol overflow="visible" id="glyph">\n{path}\n</symbol>\n</g>\n</defs>\n'
           f'<g style="{style}">\n  <use xlink:href="#glyph" x="0" y="0"/>\n</g>\n</svg>\n')
    tree = mob.modify_xml_tree(ET.ElementTree(ET.fromstring(svg)))
    parsed = se.SVG.parse(io.StringIO(ET.tostring(tree.getroot(), encoding="unicode")))
    made, _ = mob.get_mobjects_from(parsed)
    box = parsed.viewbox
    return made, ((parsed.width / box.width, parsed.height / box.height) if box is not None else (1.0, 1.0))


def _shape(mob: SVGMobject, root: str, path: str, style: str):
    """(the glyph `path` at the origin or None, the viewport scale), parsed once per process."""
    key = (root, path, repr(mob.svg_default), repr(mob.path_string_config))
    if key not in _SHAPES:
        made, scale = _parse_one(mob, root, path, style)
        glyph = made[0] if made else None
        if glyph is not None:
            glyph.path_obj = None            # the svgelements path: copied on every copy, read by nothing
        _SHAPES[key] = (glyph, scale)
    return _SHAPES[key]


def _fill(mob: SVGMobject, root: str, path: str, style: str):
    """(fill_rgbas, stroke_rgbas, stroke_width) manim's parse gives a glyph whose <path> is styled as
    `path` is, inside a <g style="`style`">: read once per style off a square."""
    own = _PATH_STYLE.search(path)
    own = own[1] if own else ""
    key = (root, own, style, repr(mob.svg_default))
    if key not in _FILLS:
        [square], _ = _parse_one(mob, root, f'<path style="{own}" d="{_SQUARE}"/>', style)
        _FILLS[key] = (square.fill_rgbas, square.stroke_rgbas, square.stroke_width)
    return _FILLS[key]


def glyph_svg_mobject(self, parse_whole=SVGMobject.generate_mobject):
    """SVGMobject.generate_mobject for a Text: its glyphs placed from outlines parsed once (see the
    module's docstring); any other SVGMobject, or an SVG of another shape, parsed whole by manim."""
    if not isinstance(self, Text):
        return parse_whole(self)
    layout = _layout(Path(self.get_file_path()).read_text(encoding="utf-8"))
    if layout is None:
        return parse_whole(self)
    root, symbols, uses = layout
    placed = []
    for glyph_id, x, y, style in uses:
        glyph, (sx, sy) = _shape(self, root, symbols[glyph_id], style)
        if glyph is None:
            continue
        copy = glyph.copy()
        copy.points = copy.points + np.array([sx * x, sy * y, 0.0])     # (n, 3): svgelements' translate(x, y)
        fill, stroke, width = _fill(self, root, symbols[glyph_id], style)
        copy.fill_rgbas, copy.stroke_rgbas, copy.stroke_width = fill.copy(), stroke.copy(), width
        placed.append(copy)
    self.add(*placed)
    self.id_to_vgroup_dict = {"root": VGroup(*placed)}
    self.flip(RIGHT)        # y down in the SVG, up in manim (as generate_mobject does)
    return self
