"""Layers point one way: render.py -> film/ -> scenes/ -> voiceover/ -> engine/ -> words/ -> data/, and no
module imports itself round a circle, nor does any package (film/'s subpackages included).

Read from the syntax trees (imports inside functions count too), so nothing is imported
and the test costs milliseconds. Module names may carry the distribution's name
(`onepass.film.run.runner` is film/run/runner.py; `onepass.cli` is onepass/cli.py, the render layer).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from onepass.data.chapters import CHAPTERS, titles

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("render", "film", "scenes", "voiceover", "engine", "words", "data")   # top to bottom
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


DIST = "onepass"     # the distribution's one top-level name (pyproject.toml puts every package under it)


def local_name(name: str) -> str:
    """A module name without the distribution's prefix (onepass.cli, the command, is the render layer)."""
    if name == DIST or name.startswith(DIST + "."):
        name = name[len(DIST) + 1:]
        return "render" if name == "cli" or name.startswith("cli.") else name
    return name


def tops(names: set[str]) -> set[str]:
    return {local_name(n).split(".")[0] for n in names}


def upward_imports(layer: str, root: Path = ROOT) -> dict[str, list[str]]:
    """Files of `layer` that import a layer above it: path -> those layers."""
    bad = {str(p.relative_to(root)): sorted(tops(imported(p)) & set(ABOVE[layer]))
           for p in sorted((root / layer).rglob("*.py"))}
    return {p: b for p, b in bad.items() if b}


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_lower_layers_import_nothing_above_them(layer):
    assert upward_imports(layer) == {}


def test_every_layer_is_checked_and_an_upward_import_is_caught(tmp_path):
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", DIST}
    assert packages <= set(LAYERS), f"a package with no place in the layers: {packages - set(LAYERS)}"
    for i, layer in enumerate(LAYERS[1:], 1):            # scenes importing film, data importing voiceover, ...
        (tmp_path / layer).mkdir()
        (tmp_path / layer / "m.py").write_text(f"def f():\n    from {LAYERS[i - 1]}.x import y\n")
        assert upward_imports(layer, tmp_path) == {f"{layer}/m.py": [LAYERS[i - 1]]}


# ---------------------------------------------------------------------------------------
# Import circles

def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The project file of a module name (with or without the distribution's prefix), else None."""
    for rel in ([name] if not name.startswith(DIST + ".") else [name, name[len(DIST) + 1:]]):
        base = root.joinpath(*rel.split("."))
        for p in (base.with_suffix(".py"), base / "__init__.py"):
            if p.is_file() and "tests" not in p.relative_to(root).parts[:1]:
                return p
    return None


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Every project module (its dotted path under `root`) -> the project modules it imports
    (`from film import keys` imports onepass.film.plan.keys; `from onepass.film.plan.keys import sha` imports onepass.film.plan.keys)."""
    files = [p for layer in (*LAYERS[1:], DIST) if (root / layer).is_dir() for p in (root / layer).rglob("*.py")]
    named = {".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p for p in files}
    by_file = {p.resolve(): n for n, p in named.items()}

    def node(name: str) -> str | None:
        p = module_file(name, root)
        return by_file.get(p.resolve()) if p else None

    graph = {}
    for name, path in named.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out = set()
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Import):
                out.update(node(a.name) for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    parts = package.split(".")[: len(package.split(".")) - (n.level - 1)]
                    base = ".".join(parts + ([n.module] if n.module else []))
                for a in n.names:
                    out.add(node(f"{base}.{a.name}") or node(base))
        graph[name] = out - {None, name}
    return graph


def package_of(module: str, root: Path = ROOT) -> str:
    return module if (root.joinpath(*module.split(".")) / "__init__.py").is_file() else module.rpartition(".")[0]


def package_graph(graph: dict[str, set[str]], root: Path = ROOT) -> dict[str, set[str]]:
    """Package -> the other packages its modules import (onepass.film.run -> onepass.film.plan, ...)."""
    out: dict[str, set[str]] = {}
    for m, imports in graph.items():
        here = package_of(m, root)
        out.setdefault(here, set()).update(p for i in imports if (p := package_of(i, root)) != here)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: its strongly connected parts of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


@pytest.fixture(scope="module")
def project_graph() -> dict[str, set[str]]:
    return module_graph()


def test_no_module_imports_itself_round_a_circle(project_graph):
    assert circles(project_graph) == []


def test_no_package_imports_itself_round_a_circle(project_graph):
    """film's subpackages (make, kit, run, plan, frames once film/ is split) import one another
    one way only, as the layers do."""
    assert circles(package_graph(project_graph)) == []


def test_an_import_circle_is_caught(tmp_path):
    def write(path: str, text: str):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)

    for pkg in ("film", "film/plan", "film/run"):
        write(f"{pkg}/__init__.py", "")
    # modules: request -> runner -> job -> request, the last inside a function, one by the distribution's name
    write("film/plan/request.py", "from onepass.film.run import runner\n")
    write("film/run/runner.py", "import onepass.film.run.job\n")
    write("film/run/job.py", "def f():\n    from onepass.film.plan.request import QUALITIES\n")
    write("film/plan/keys.py", "")

    def local(found: list[list[str]]) -> list[list[str]]:     # names with or without the distribution's prefix
        return [[local_name(n) for n in c] for c in found]

    graph = module_graph(tmp_path)
    assert local(circles(graph)) == local([["onepass.film.plan.request", "onepass.film.run.job", "onepass.film.run.runner"]])
    assert local(circles(package_graph(graph, tmp_path))) == local([["onepass.film.plan", "onepass.film.run"]])
    # packages only: plan -> run (request -> runner), run -> plan (job -> keys), no module circle
    write("film/run/job.py", "from onepass.film.plan import keys\n")
    graph = module_graph(tmp_path)
    assert circles(graph) == []
    assert local(circles(package_graph(graph, tmp_path))) == local([["onepass.film.plan", "onepass.film.run"]])
    write("film/run/job.py", "")
    assert circles(package_graph(module_graph(tmp_path), tmp_path)) == []


def test_scenes_read_facts_from_data_not_from_the_narration():
    bad = {p.name: sorted(n for n in imported(p) if n.startswith("onepass.voiceover.scripts"))
           for p in sorted((ROOT / "scenes").glob("*.py"))}
    assert {p: b for p, b in bad.items() if b} == {}


def test_every_chapter_has_its_scene_module_script_and_facts():
    assert list(titles()) == sorted(CHAPTERS)
    for chapter, c in CHAPTERS.items():
        assert module_file(c.module) is not None, c.module
        assert (ROOT / "voiceover" / "scripts" / f"ch{chapter}.py").is_file()
        assert (ROOT / "data" / "facts" / f"ch{chapter}.py").is_file()
