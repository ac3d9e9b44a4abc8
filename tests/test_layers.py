"""Layers point one way: render.py -> film/ -> scenes/ -> voiceover/ -> words/ -> data/.

Read from the syntax trees (imports inside functions count too), so nothing is imported
and the test costs milliseconds.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from data.chapters import CHAPTERS, titles

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("render", "film", "scenes", "voiceover", "words", "data")   # top to bottom
ABOVE = {layer: LAYERS[:i] for i, layer in enumerate(LAYERS) if i}  # what each layer must not import


def imported(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def tops(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def upward_imports(layer: str, root: Path = ROOT) -> dict[str, list[str]]:
    """Files of `layer` that import a layer above it: path -> those layers."""
    bad = {str(p.relative_to(root)): sorted(tops(imported(p)) & set(ABOVE[layer]))
           for p in sorted((root / layer).rglob("*.py"))}
    return {p: b for p, b in bad.items() if b}


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_lower_layers_import_nothing_above_them(layer):
    assert upward_imports(layer) == {}


def test_every_layer_is_checked_and_an_upward_import_is_caught(tmp_path):
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert packages <= set(LAYERS), f"a package with no place in the layers: {packages - set(LAYERS)}"
    for i, layer in enumerate(LAYERS[1:], 1):            # scenes importing film, data importing voiceover, ...
        (tmp_path / layer).mkdir()
        (tmp_path / layer / "m.py").write_text(f"def f():\n    from {LAYERS[i - 1]}.x import y\n")
        assert upward_imports(layer, tmp_path) == {f"{layer}/m.py": [LAYERS[i - 1]]}


def test_scenes_read_facts_from_data_not_from_the_narration():
    bad = {p.name: sorted(n for n in imported(p) if n.startswith("voiceover.scripts"))
           for p in sorted((ROOT / "scenes").glob("*.py"))}
    assert {p: b for p, b in bad.items() if b} == {}


def test_every_chapter_has_its_scene_module_script_and_facts():
    assert list(titles()) == sorted(CHAPTERS)
    for chapter, c in CHAPTERS.items():
        assert (ROOT / (c.module.replace(".", "/") + ".py")).is_file(), c.module
        assert (ROOT / "voiceover" / "scripts" / f"ch{chapter}.py").is_file()
        assert (ROOT / "data" / "facts" / f"ch{chapter}.py").is_file()
