"""The engine boundary (engine/): manim's and manim-voiceover's internals are used there and
nowhere else, and the versions they belong to are checked before anything renders.

The boundary is read from the syntax trees of every module outside engine/ (tests/test_frame_path.py,
the boundary's contract, excepted): no import of manim-voiceover, no manim module outside manim's
public API (a private one, or a name manim does not export), no private attribute of anything
imported from manim, no private member of manim's own (`self._x` where manim has `_x`) used or
overridden in a class drawn from manim's, and none of the Text internals engine/text.py owns.
"""
from __future__ import annotations

import ast
import functools
import importlib.metadata
import os
import re
from pathlib import Path

import pytest

from onepass.data.errors import OnepassError
from onepass.engine import INTERNALS, versions
from onepass.engine.text import PARSE_ONLY

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("manim", "manim_voiceover")
# every name engine/__init__.py's INTERNALS lists, by kind (its comment says what each kind means)
LISTED = [name for *_, names in INTERNALS for name in names]
ONLY_INTERNAL = {n for n in LISTED if "." not in n and not n.startswith("_")}     # refused anywhere
PRIVATE_LISTED = {n for n in LISTED if n.startswith("_")}                          # the private-name rules
ON_CLASS: dict[str, set[str]] = {}                                                 # Class.name
for _n in LISTED:
    if "." in _n:
        ON_CLASS.setdefault(_n.split(".")[0], set()).add(_n.split(".")[1])
# what makes a value of each such class, by the name called (scenes/text.py's label is a Text; Swell an Indicate)
MAKERS = {"Text": {"Text", "MarkupText", "Paragraph", "label"}, "Indicate": {"Indicate", "Indication", "Swell"},
          "Mobject": set(), "VMobject": set(), "Polygram": set(), "Scene": set()}
# modules that may reach into the engines: the boundary, its contract, and this test (its cases)
EXEMPT = ("engine/", "tests/test_frame_path.py", "tests/test_engine.py")
SKIP_DIRS = {"media", "out", "build", "node_modules", "__pycache__", "cache", "bundles", "catalogs"}


def project_files(root: Path = ROOT) -> list[Path]:
    """Every Python file of the project outside EXEMPT (its packages, render.py, bench/, tests/, ...),
    the venv, caches and outputs left unwalked."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [Path(here) / f for f in files if f.endswith(".py")]
    return sorted(p for p in found if not p.relative_to(root).as_posix().startswith(EXEMPT))


@functools.lru_cache(maxsize=None)
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def engine_private_names() -> frozenset[str]:
    """Every private name (`_x`, not dunder) manim and manim-voiceover define or set on themselves,
    read from their sources: methods, `self._x`/`cls._x`, class-level names."""
    names: set[str] = set()
    for pkg in ENGINES:
        spec = importlib.util.find_spec(pkg)
        for p in Path(spec.origin).parent.rglob("*.py"):
            text = p.read_text(encoding="utf-8", errors="replace")
            names.update(re.findall(r"(?:\bdef\s+|\bself\.|\bcls\.|^\s+)(_[A-Za-z]\w*)\b", text, re.M))
    return frozenset(n for n in names if not n.endswith("__"))


@functools.lru_cache(maxsize=None)
def manim_exports(name: str) -> bool:
    import manim
    return hasattr(manim, name)


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def boundary_breaches(path: Path, derived: set[str] | None = None) -> list[str]:
    """What `path` does that only engine/ may: one line each (line number: what)."""
    tree = parsed(path)
    found: list[str] = []
    bound: set[str] = set()          # names bound to manim objects by imports
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top == "manim_voiceover":
                    found.append(f"{node.lineno}: imports manim-voiceover ({a.name})")
                elif top == "manim":
                    if a.name != "manim":
                        found.append(f"{node.lineno}: imports {a.name}, not manim's public API")
                    bound.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            top = node.module.split(".")[0]
            if top == "manim_voiceover":
                found.append(f"{node.lineno}: imports manim-voiceover ({node.module})")
            elif top == "manim":
                for a in node.names:
                    if any(private(part) for part in node.module.split(".")) or private(a.name):
                        found.append(f"{node.lineno}: imports {node.module}.{a.name}, a private name")
                    elif node.module != "manim" and not manim_exports(a.name):
                        found.append(f"{node.lineno}: imports {node.module}.{a.name}, not manim's public API")
                    bound.add(a.asname or a.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("manim_voiceover."):
            found.append(f"{node.lineno}: names a manim-voiceover module ({node.value})")
    privates = engine_private_names()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound and private(node.attr):
                found.append(f"{node.lineno}: {base.id}...{node.attr}, a private name of manim's")
    found += listed_names_used(tree)
    # classes drawn from manim's (directly, or through another class of the project)
    derived = set(derived or ())
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    changed = True
    while changed:
        changed = False
        for c in classes:
            names = {b.id for b in c.bases if isinstance(b, ast.Name)} | {b.attr for b in c.bases if isinstance(b, ast.Attribute)}
            if c.name not in derived and names & (bound | derived):
                derived.add(c.name)
                changed = True
    for c in classes:
        if c.name not in derived:
            continue
        for node in ast.walk(c):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in privates and private(node.name):
                found.append(f"{node.lineno}: {c.name}.{node.name} overrides a private method of manim's")
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                  and private(node.attr) and node.attr in privates):
                found.append(f"{node.lineno}: {c.name} uses self.{node.attr}, a private name of manim's")
    return found


def _called(node) -> str | None:
    """The name a call calls (`label(...)`, `S.label(...)` -> 'label'), else None."""
    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


def listed_names_used(tree: ast.Module) -> list[str]:
    """Uses of the names INTERNALS lists (their kinds: engine/__init__.py), one line each.

    `name`: an attribute, an imported name or module, or a string that is the name (one-word
    names excepted: `chars` is a dictionary key too) or a dotted path through it (a mock.patch
    target). `Class.name`: read from a value the module makes of Class by name (a call to one of
    MAKERS[Class], or a name assigned one), or set on Class (an assignment, or a call given Class
    and the name: setattr, monkeypatch.setattr, mock.patch.object). What a value is when it comes
    from elsewhere (a loop over a group, an argument) is not known here: engine/text.py's
    string_of and glyphs_of are the way, and a review sees the rest."""
    found: list[str] = []
    made: dict[str, set[str]] = {}          # class -> names the module binds to values of it
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for cls, makers in MAKERS.items():
                if _called(node.value) in makers:
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        if isinstance(t, ast.Name):
                            made.setdefault(cls, set()).add(t.id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in ONLY_INTERNAL:
                found.append(f"{node.lineno}: .{node.attr}, an internal engine/ owns (INTERNALS)")
            for cls, names in ON_CLASS.items():
                if node.attr not in names:
                    continue
                v = node.value
                if _called(v) in MAKERS[cls] or (isinstance(v, ast.Name) and (v.id in made.get(cls, ()) or
                                                                           v.id == cls and isinstance(node.ctx, ast.Store))):
                    found.append(f"{node.lineno}: {cls}.{node.attr}, an internal engine/ owns (INTERNALS)")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for part in [*node.module.split("."), *(a.name for a in node.names)]:
                if part in ONLY_INTERNAL:
                    found.append(f"{node.lineno}: imports {part}, an internal engine/ owns (INTERNALS)")
        elif isinstance(node, ast.Import):
            for a in node.names:
                for part in a.name.split("."):
                    if part in ONLY_INTERNAL:
                        found.append(f"{node.lineno}: imports {part}, an internal engine/ owns (INTERNALS)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts = node.value.split(".") if "." in node.value and " " not in node.value else []
            hits = [p for p in parts if p in ONLY_INTERNAL]
            if node.value in ONLY_INTERNAL and "_" in node.value:
                hits.append(node.value)
            found += [f"{node.lineno}: {node.value!r} names {h}, an internal engine/ owns (INTERNALS)" for h in hits]
        elif isinstance(node, ast.Call):
            names = [a.id for a in node.args if isinstance(a, ast.Name)]
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            for cls in set(names) & set(ON_CLASS):
                for attr in set(strings) & ON_CLASS[cls]:
                    found.append(f"{node.lineno}: sets {cls}.{attr}, an internal engine/ owns (INTERNALS)")
    return found


def manim_classes(files: list[Path]) -> set[str]:
    """Project classes drawn from manim's, by name, across files (ChapterScene, every chapter's
    scenes, Swell): a base imported from manim or engine/, or a project class already found."""
    bases: dict[str, set[str]] = {}
    roots: set[str] = set()
    for p in [*files, *sorted((ROOT / "engine").rglob("*.py"))]:
        for node in ast.walk(parsed(p)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ENGINES:
                roots.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(b.id for b in node.bases if isinstance(b, ast.Name))
    derived: set[str] = set()
    while True:
        more = {c for c, names in bases.items() if c not in derived and names & (roots | derived)}
        if not more:
            return derived
        derived |= more


def test_nothing_outside_the_engine_touches_manims_or_manim_voiceovers_internals():
    files = project_files()
    assert len(files) > 50 and ROOT / "scenes" / "base.py" in files
    derived = manim_classes(files)
    assert {"ChapterScene", "Swell"} <= derived
    breaches = {p.relative_to(ROOT).as_posix(): b for p in files if (b := boundary_breaches(p, derived))}
    assert breaches == {}


def test_a_use_of_an_internal_outside_the_engine_is_caught(tmp_path):
    cases = {
        "a.py": "from manim._config.video_encoder import VideoEncoderSpec\n",
        "b.py": "import manim\nx = manim._config\n",
        "c.py": "from manim import SceneFileWriter\nclass W(SceneFileWriter):\n"
                "    def _create_segment_encoder(self, target):\n        return self._current_encode_job\n",
        "d.py": "def f(t):\n    t.id_to_vgroup_dict = {}\n",
        "e.py": "from manim_voiceover import VoiceoverScene\n",
        "f.py": "from manim.scene.video_segment_encoder import VideoSegmentEncoder\n",
        "g.py": "from manim import Scene\nclass S(Scene):\n    def f(self):\n        self._own = 1\n",   # its own: fine
        "h.py": "from manim.renderer.cairo_renderer import CairoRenderer\n",        # manim exports it: fine
    }
    found = {}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        found[name] = boundary_breaches(tmp_path / name)
    assert all(found[n] for n in "abcdef" for n in [f"{n}.py"]), found
    assert len(found["c.py"]) == 2
    assert found["g.py"] == [] and found["h.py"] == []


def test_every_name_internals_lists_is_refused_outside_the_engine(tmp_path):
    """Each name engine.INTERNALS lists is one the boundary refuses: a use of it outside engine/
    is caught, by the rules its kind names (engine/__init__.py)."""
    assert LISTED and all(names for *_, names in INTERNALS)
    assert set(PARSE_ONLY) | {"path_obj"} <= ONLY_INTERNAL     # engine/text.py's parse-only attributes among them
    assert PRIVATE_LISTED <= engine_private_names(), PRIVATE_LISTED - engine_private_names()
    assert set(ON_CLASS) <= set(MAKERS)
    cases = {}
    for name in ONLY_INTERNAL:
        cases[f"attr_{name}"] = f"def f(x):\n    return x.{name}\n"
    for name in PRIVATE_LISTED:
        cases[f"private_{name}"] = f"import manim\nx = manim.{name}\n"
    for cls, names in ON_CLASS.items():
        for name in names:
            cases[f"set_{cls}_{name}"] = f"from manim import {cls}\n{cls}.{name} = None\n"
            for maker in MAKERS[cls]:
                cases[f"read_{maker}_{name}"] = f"def f(label):\n    t = {maker}('a')\n    return t.{name}\n"
    cases["patched"] = "from unittest import mock\nmock.patch('manim.renderer.cairo_renderer.CairoRenderer.update_frame')\n"
    cases["config"] = "settings = {'from_animation_number': 10 ** 9}\n"
    cases["patched_on_class"] = "from manim import Mobject\ndef f(monkeypatch, g):\n    monkeypatch.setattr(Mobject, 'get_family', g)\n"
    missed = []
    for name, text in cases.items():
        (tmp_path / f"{name}.py").write_text(text)
        if not boundary_breaches(tmp_path / f"{name}.py"):
            missed.append(name)
    assert missed == []
    # a dictionary key that is also a one-word name, and a group's own submobjects, are not internals
    (tmp_path / "fine.py").write_text("def f(facts, group):\n    return facts['chars'], group.submobjects\n")
    assert boundary_breaches(tmp_path / "fine.py") == []


# -- the supported versions --------------------------------------------------------

def test_the_installed_engine_versions_are_supported():
    versions.check()            # raises nothing
    assert versions.problems() == []
    assert versions.supported(versions.SUPPORTED["manim"], importlib.metadata.version("manim"))


@pytest.mark.parametrize("dist, fake", [("manim", "0.23.0"), ("manim", "0.19.2"), ("manim-voiceover", "0.5.1")])
def test_another_engine_version_is_refused_naming_both(monkeypatch, dist, fake):
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: fake if name == dist else real(name))
    with pytest.raises(OnepassError) as info:
        versions.check()
    message = str(info.value)
    assert f"{dist} {fake} is installed" in message
    assert f"onepass supports {dist} {versions.SUPPORTED[dist]}.x" in message
    assert f'"{dist}=={versions.SUPPORTED[dist]}.*"' in message


def test_the_series_rule_and_the_pins_say_the_same():
    assert versions.supported("0.22", "0.22.0") and versions.supported("0.22", "0.22.7rc1")
    assert not versions.supported("0.22", "0.2.2") and not versions.supported("0.22", "0.220.0")
    assert not versions.supported("0.4", "0.40.0") and versions.supported("0.4", "0.4.0.post1")
    pins = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for dist, series in versions.SUPPORTED.items():
        assert f'"{dist}=={series}.*"' in pins, f"pyproject.toml does not pin {dist} to {series}.x"


def test_a_scene_process_refuses_another_manim_before_it_renders(tmp_path, monkeypatch):
    """film/run/render_job.py checks before it renders (and at its import, before manim loads): a faked
    manim 0.23 stops it with the message, and nothing is written."""
    from onepass.film.run import render_job
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.23.1" if name == "manim" else real(name))
    out = tmp_path / "scene.mp4"
    with pytest.raises(versions.EngineVersionError, match=r"manim 0\.23\.1 is installed; onepass supports manim 0\.22\.x"):
        render_job.main(["--bundle", str(tmp_path), "--chapter", "00", "--scene", "Prompt", "--out", str(out)])
    assert list(tmp_path.iterdir()) == []


def test_render_refuses_another_manim_before_anything_renders(tmp_path, monkeypatch):
    """`render.py --chapter 00` with a faked manim-voiceover 0.5 ends on one clear line naming the
    supported and the installed versions (exit 2, no traceback), before a bundle is extracted or a
    file written."""
    from onepass.film.make import request
    from tests.helpers import one_clear_line, run_main
    monkeypatch.setattr(request, "get_bundle", lambda *a, **k: pytest.fail("a bundle was extracted before the check"))
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.5.0" if name == "manim-voiceover" else real(name))
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_main("--chapter", "00", "--weights", "tiny", "--out", str(tmp_path / "out"), "--voice", "none")
    line = " ".join(err.split())
    assert rc == 2 and one_clear_line(err)
    assert "manim-voiceover 0.5.0 is installed; onepass supports manim-voiceover 0.4.x" in line
    assert not any((tmp_path / "out").rglob("*.mp4")) and not any((tmp_path / "out").rglob("*.safetensors"))
