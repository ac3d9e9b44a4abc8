"""Placement by name: the number of placement literals in each chapter module only goes down.

A placement literal is a number written where a scene places something: inside the arguments of
.shift / .move_to / .next_to / .arrange / .arrange_in_grid, inside the value of a buff=, x=, y= or
width= keyword (of any call), or inside a product of a direction (UP, LEFT, UR, ORIGIN, ...) and a
number. Scenes place things by the names in scenes/style.py (regions, lines), the spacing scale
onepass.scenes.layout.GAP and relative placement (next_to, below, above, align_to, layout.table) instead.

KNOWN_LITERALS holds each file's count. A file with more fails (place it by name instead); a file
with fewer fails too, until its entry is lowered to the new count, so the table never hides room
for new literals.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SCENES = Path(__file__).resolve().parents[1] / "scenes"

# The modern decoder's pictures (issue 49: ch01's RoPE dials and speed chart, ch02's head groups, ch03's
# key/value slices, ch06's cache formula, and chapter 07 whole) came with placement literals of their own:
# counted here as they stand, to be placed by name and lowered (the count may only go down).
KNOWN_LITERALS = {
    "ch00_tokens.py": 4,
    "ch01_embeddings.py": 20,
    "ch02_attention.py": 4,
    "ch03_stack.py": 7,
    "ch04_vote.py": 3,
    "ch05_encoder_decoder.py": 2,
    "ch06_loop.py": 6,
    "ch07_changes.py": 47,
}

PLACERS = {"shift", "move_to", "next_to", "arrange", "arrange_in_grid"}
KEYWORDS = {"buff", "x", "y", "width"}
DIRECTIONS = {"UP", "DOWN", "LEFT", "RIGHT", "UL", "UR", "DL", "DR", "IN", "OUT", "ORIGIN"}


def _numbers(node: ast.AST):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, (int, float)) and not isinstance(sub.value, bool):
            yield sub


def placement_literals(source: str) -> list[tuple[int, object]]:
    """(line, value) of every placement literal in a module's source, each number counted once."""
    found: dict[int, tuple[int, object]] = {}

    def add(node):
        for n in _numbers(node):
            found.setdefault(id(n), (n.lineno, n.value))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in PLACERS:
                for arg in node.args:
                    add(arg)
            for kw in node.keywords:
                if kw.arg in KEYWORDS:
                    add(kw.value)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            if any(isinstance(side, ast.Name) and side.id in DIRECTIONS for side in (node.left, node.right)):
                add(node)
    return sorted(found.values(), key=lambda f: f[0])


def test_every_chapter_module_has_an_entry():
    chapters = sorted(p.name for p in SCENES.glob("ch[0-9][0-9]_*.py"))
    assert chapters == sorted(KNOWN_LITERALS), "KNOWN_LITERALS must list exactly the chapter modules"


@pytest.mark.parametrize("name", sorted(KNOWN_LITERALS))
def test_placement_literals_only_go_down(name):
    found = placement_literals((SCENES / name).read_text(encoding="utf-8"))
    known = KNOWN_LITERALS[name]
    where = ", ".join(f"line {line}: {value!r}" for line, value in found)
    assert len(found) <= known, (
        f"scenes/{name} has {len(found)} placement literals, more than the {known} in KNOWN_LITERALS: place "
        f"the new ones by name (style.py regions and lines, layout.GAP, next_to/below/align_to, layout.table). "
        f"Literals now: {where}")
    assert len(found) >= known, (
        f"scenes/{name} has {len(found)} placement literals, fewer than the {known} in KNOWN_LITERALS: "
        f"well done; lower its entry in tests/test_layout_literals.py to {len(found)} so the count only goes down")


def test_the_counter_counts_what_it_says():
    src = ("a.shift(UP * 0.2)\nb.next_to(c, DOWN, buff=0.3)\nd.move_to([1, y, 0])\ne.arrange(RIGHT, buff=GAP.s)\n"
           "f = g(width=2.0, x=h[0])\nk = LEFT * 0.5 + m * 3\nn.move_to(UP * S.HEADLINE_Y)\n")
    assert [v for _, v in placement_literals(src)] == [0.2, 0.3, 1, 0, 2.0, 0, 0.5]
