#!/usr/bin/env python3
"""Split film/ into packages by job and put every package under one name, `onepass` (issue 42
items 1 and 4). Run from the repository root on a clean tree:

    python tools/restructure.py                 # move, rewrite, report
    python tools/restructure.py --dry-run       # say what would move and which files would change
    python tools/restructure.py --install .venv # and then `pip install -e . --no-deps` in that venv
    python tools/restructure.py --place describe=kit --place api=make   # where new film modules go

What it does:
1. `git mv`s film/*.py (and film/templates/) into film/<package>/ by the map FILM below, with an
   __init__.py that says each package's job. A film module the map does not know (one added after
   this script was written) is placed by --place NAME=PACKAGE, else by its imports (the package of
   the highest layer it imports, if every film module importing it sits at that layer or above),
   else left at film/ and reported.
2. Puts every package under `onepass`: the folders stay where they are (data/, engine/, film/,
   scenes/, voiceover/, words/) and pyproject.toml maps them (setuptools package-dir); onepass/ holds
   __init__.py and cli.py, which is render.py's code (render.py stays, a thin wrapper, so
   `python render.py --chapter 02` still works); the console script is `onepass = "onepass.cli:main"`.
   Every module name is rewritten wherever it is written: import statements (split where a
   `from film import a, b` now spans packages), attribute chains of `import x.y` names, module
   names in strings (importlib, registries, `-m`, `-c` snippets) and comments, Markdown, Makefile;
   paths film/x.py become film/<package>/x.py.
3. Checks the result: every .py file parses, no film package imports another round a circle.

Running it again changes nothing (names already under onepass are left alone; moved files are
not moved again). It never commits: review `git status` / `git diff`, run the tests, commit.
"""
from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

DIST = "onepass"
PACKAGES = ("data", "engine", "film", "scenes", "voiceover", "words")   # the folders under onepass
# film/<module>.py -> film/<package>/ (the packages by job; each imports only those below it:
# make -> kit -> run -> plan, frames; the film package's own __init__ imports nothing)
FILM = {
    # what to render and the build that renders it: the request (render.py's options, a manifest
    # job), the whole build of chapters, a batch of requests on one executor, render() for Python
    "make": ("request", "build", "batch", "api"),
    # the course kit made from rendered chapters: clips, the lecture deck, handouts, notebooks, the
    # publishing kit (and the deck's page template)
    "kit": ("clips", "slides", "handout", "notebook", "publish", "describe", "transcript"),
    # running scene renders: the scene process and its fork server, the runner, executors (this
    # machine, a dask cluster, which one --scheduler names), joining scenes into chapters
    "run": ("runner", "forkserver", "render_job", "media", "executors", "cluster", "scheduler", "join"),
    # the plan of a build: scene jobs and their cache keys, read from the sources; what a worker
    # must share with the client; the build's error
    "plan": ("jobs", "keys", "source_memo", "identity", "errors"),
    # the fast frame path that is the film's own (manim's internals live in engine/)
    "frames": ("holds", "still_layer"),
}
FILM_DIRS = {"templates": "kit"}
LAYER = {"make": 4, "kit": 3, "run": 2, "plan": 1, "frames": 1}
ABOUT = {
    "make": "What to render and the build that renders it: the request (render.py's options and a manifest's\n"
            "[[job]], one validator), the build of chapters on one executor, a batch of requests, and\n"
            "render() for Python and Jupyter (api).",
    "kit": "The course kit made from rendered chapters: a clip per narration beat, the lecture deck\n"
           "(offline HTML, PowerPoint), handouts, notebooks and the publishing kit.",
    "run": "Running scene renders: one process per scene (render_job, forked by forkserver), the runner\n"
           "that starts and checks it, executors on this machine or a dask cluster (scheduler picks one),\n"
           "and the joins of scenes into chapters and chapters into the film.",
    "plan": "The plan of a build: its scene jobs and their cache keys, read from the sources as syntax\n"
            "trees (keys), the facts kept between runs (source_memo), what a cluster worker must share\n"
            "with the client (identity), and the build's error (errors).",
    "frames": "The film's own fast frame path: held frames encoded once (holds). manim's internals\n"
              "live in engine/.",
}
TEXT_SUFFIXES = {".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yml", ".yaml", ".sh", ".html", ".ipynb"}
TEXT_NAMES = {"Makefile"}
SKIP_TEXT = {"pyproject.toml", "tools/restructure.py", "tests/test_restructure.py"}   # the last two name old names on purpose
WRAPPER_MARK = "onepass's command line from a checkout"


def git(*args: str, root: Path) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------------------------------
# The module map

class Names:
    """Old module names -> new ones (without the distribution's prefix), and what exists."""

    def __init__(self, root: Path, film_moves: dict[str, str]):
        self.root = root
        self.moves = dict(film_moves)          # "keys" -> "plan" (film/keys.py -> film/plan/keys.py)

    def new_local(self, name: str) -> str | None:
        """'film.keys.sha' -> 'film.plan.keys.sha' (longest prefix that is a module, 2+ parts);
        None when no prefix of 2+ parts is a module of ours (or a bare package)."""
        parts = name.split(".")
        if parts[0] not in PACKAGES:
            return None
        if parts[0] == "film" and len(parts) > 1 and parts[1] in self.moves:
            parts = ["film", self.moves[parts[1]], *parts[1:]]
        for n in range(len(parts), 1, -1):
            if self.is_module(parts[:n]):
                return ".".join(parts)
        return None

    def is_module(self, parts: list[str]) -> bool:
        base = self.root.joinpath(*parts)
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file() or \
            (base.is_dir() and any(base.glob("*.py")))

    def new(self, name: str) -> str | None:
        """The full new name ('onepass.film.plan.keys') of a name of ours, else None."""
        if name == "render":
            return f"{DIST}.cli"
        local = self.new_local(name)
        return f"{DIST}.{local}" if local else None

    def package_of_member(self, module: str, member: str) -> tuple[str, str] | None:
        """`from module import member`: (the module to import it from, now, with prefix) when
        module is ours; a submodule that moved is imported from its new package."""
        if module == "render":
            return f"{DIST}.cli", member
        if module.split(".")[0] not in PACKAGES:
            return None
        sub = self.new_local(f"{module}.{member}")
        if sub and self.is_module(sub.split(".")):
            return f"{DIST}.{sub.rpartition('.')[0]}", member
        whole = self.new_local(module) if "." in module else (module if self.is_module([module]) else None)
        return (f"{DIST}.{whole}", member) if whole else None


# ---------------------------------------------------------------------------------------
# Text rewriting (strings, comments, Markdown, Makefile)

ROOTS = "|".join(PACKAGES)
DOTTED = re.compile(rf"(?<![\w.])((?:{ROOTS})(?:\.[A-Za-z_]\w*)+)")
FROM_IMPORT = re.compile(rf"(?<![\w.])from[ \t]+((?:{ROOTS}|render)(?:\.\w+)*)[ \t]+import[ \t]+"
                         r"(\([\w \t,]+\)|[\w \t,]+?)(?=[ \t]*(?:$|[;\n#\"'\\)]))", re.M)
IMPORT_RENDER = re.compile(r"(?m)^([ \t]*)import render[ \t]*$")
FILM_PATH = re.compile(r"(?<![\w/.-])film/(\w+)(\.py\b|/)")
FILM_SEGMENTS = re.compile(r"""(["'])film\1(\s*/\s*)(["'])(\w+)(\.py)?\3""")


def split_names(spec: str) -> list[tuple[str, str | None]]:
    out = []
    for piece in spec.strip().strip("()").split(","):
        piece = piece.strip()
        if not piece:
            continue
        name, _, alias = piece.partition(" as ")
        out.append((name.strip(), alias.strip() or None))
    return out


def from_statements(names: Names, module: str, members: list[tuple[str, str | None]]) -> list[tuple[str, list]]:
    """[(new module, [(member, alias)])] in first-seen order; None module: keep as it was."""
    groups: dict[str, list] = {}
    for member, alias in members:
        where = names.package_of_member(module, member) if member != "*" else \
            ((names.new(module), member) if names.new(module) else None)
        target = where[0] if where else module
        groups.setdefault(target, []).append((member, alias))
    return list(groups.items())


def render_from(module: str, members: list, width: int = 110, indent: str = "") -> str:
    items = [m if a is None else f"{m} as {a}" for m, a in members]
    one = f"from {module} import {', '.join(items)}"
    if len(indent) + len(one) <= width:
        return one
    lines, line = [], ""
    for it in items:
        if line and len(indent) + 4 + len(line) + len(it) + 2 > width:
            lines.append(line.rstrip().rstrip(","))
            line = ""
        line += it + ", "
    lines.append(line.rstrip().rstrip(","))
    body = (",\n" + indent + "    ").join(lines)
    return f"from {module} import (\n{indent}    {body},\n{indent})"


def rewrite_text(text: str, names: Names) -> str:
    """Module names and film paths in free text (strings, comments, docs)."""
    def from_import(m: re.Match) -> str:
        module, spec = m.group(1), m.group(2)
        groups = from_statements(names, module, split_names(spec))
        if all(g == module for g, _ in groups):
            return m.group(0)
        trail = spec[len(spec.rstrip()):]
        return "; ".join(render_from(g, ms, width=10_000) for g, ms in groups) + trail

    text = FROM_IMPORT.sub(from_import, text)
    text = IMPORT_RENDER.sub(lambda m: f"{m.group(1)}from {DIST} import cli as render", text)
    text = DOTTED.sub(lambda m: names.new(m.group(1)) or m.group(1), text)
    text = FILM_PATH.sub(lambda m: f"film/{names.moves[m.group(1)]}/{m.group(1)}{m.group(2)}"
                         if m.group(1) in names.moves else
                         (f"film/{FILM_DIRS[m.group(1)]}/{m.group(1)}/" if m.group(1) in FILM_DIRS and m.group(2) == "/"
                          else m.group(0)), text)

    def segments(m: re.Match) -> str:
        q, sep, q2, name, py = m.groups()
        pkg = names.moves.get(name) if py else FILM_DIRS.get(name)
        return f"{q}film{q}{sep}{q2}{pkg}{q2}{sep}{q2}{name}{py or ''}{q2}" if pkg else m.group(0)
    return FILM_SEGMENTS.sub(segments, text)


# ---------------------------------------------------------------------------------------
# Python files: import statements and attribute chains from the syntax tree, strings and
# comments as text

def _offsets(text: str) -> list[int]:
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def rewrite_py(text: str, names: Names, path: str = "?") -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        print(f"  ! {path}: does not parse ({exc.msg}, line {exc.lineno}); rewritten as text", file=sys.stderr)
        return rewrite_text(text, names)
    starts = _offsets(text)

    def at(line: int, col: int) -> int:      # ast columns are UTF-8 byte offsets
        return starts[line - 1] + len(text[starts[line - 1]:starts[line]].encode("utf-8")[:col].decode("utf-8"))

    edits: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    roots: set[str] = set()                  # names bound by `import film.x` (the package)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            a, b = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            spans.append((a, b))
            if not any(names.new(alias.name) for alias in node.names):
                continue
            parts = []
            for alias in node.names:
                new = names.new(alias.name)
                if alias.name == "render" and new:
                    parts.append(f"from {DIST} import cli as {alias.asname or 'render'}")
                    continue
                if new and alias.asname is None and "." in alias.name:
                    roots.add(alias.name.split(".")[0])
                parts.append(f"import {new or alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
            merged = _join_imports(parts)
            new_text = _join_statements(merged, text, a, node.col_offset)
            if new_text != text[a:b]:
                edits.append((a, b, new_text))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            a, b = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
            spans.append((a, b))
            groups = from_statements(names, node.module, [(x.name, x.asname) for x in node.names])
            if all(g == node.module for g, _ in groups):
                continue
            indent = " " * node.col_offset
            stmts = [render_from(g, ms, indent=indent) for g, ms in groups]
            rest = text[b:text.find("\n", b) if "\n" in text[b:] else len(text)]
            if len(stmts) > 1 and rest.lstrip().startswith("#"):          # `# noqa: E402` on each of them
                stmts = [s + rest for s in stmts[:-1]] + stmts[-1:]
            edits.append((a, b, _join_statements(stmts, text, a, node.col_offset)))
        elif isinstance(node, ast.ImportFrom) and node.level:
            print(f"  ! {path}:{node.lineno}: a relative import, left as it is", file=sys.stderr)

    if roots:
        stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | \
                 {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
                  for a in [*n.posonlyargs, *n.args, *n.kwonlyargs]}
        for r in sorted(roots & stored):
            print(f"  ! {path}: `{r}` is both an imported package and a variable; check its uses", file=sys.stderr)
        inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or id(node) in inner:
                continue
            chain, cur = [], node
            while isinstance(cur, ast.Attribute):
                chain.append(cur)
                cur = cur.value
            if not (isinstance(cur, ast.Name) and cur.id in roots):
                continue
            chain.reverse()                                  # film.x, film.x.y, ...
            for n in reversed(chain):
                dotted = ast.unparse(n)
                new = names.new(dotted)
                if new and names.is_module(new.split(".")[1:]):
                    a, b = at(cur.lineno, cur.col_offset), at(n.end_lineno, n.end_col_offset)
                    if text[a:b] == dotted:
                        edits.append((a, b, new))
                    break

    # strings and comments, outside import statements
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for tok in tokens:
        if tok.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        a, b = starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]   # characters
        if any(s <= a < e for s, e in spans):
            continue
        new = rewrite_text(tok.string, names)
        if new != tok.string:
            edits.append((a, b, new))

    out, last = [], 0
    for a, b, new in sorted(edits):
        if a < last:
            continue                    # nested in an edit already made
        out += [text[last:a], new]
        last = b
    out.append(text[last:])
    return "".join(out)


def _join_imports(parts: list[str]) -> list[str]:
    """Plain `import` parts back into as few statements as they were (from-statements apart)."""
    plain = [p[len("import "):] for p in parts if p.startswith("import ")]
    other = [p for p in parts if not p.startswith("import ")]
    return ([f"import {', '.join(plain)}"] if plain else []) + other


def _join_statements(stmts: list[str], text: str, start: int, col: int) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    alone = not text[line_start:start].strip()
    return (("\n" + " " * col) if alone else "; ").join(stmts)


# ---------------------------------------------------------------------------------------
# Steps

def film_modules(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "film").glob("*.py") if p.stem != "__init__")


def film_imports(root: Path, module: str) -> set[str]:
    """The film modules (old flat names) a film/*.py module imports."""
    tree = ast.parse((root / "film" / f"{module}.py").read_text(encoding="utf-8"))
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name.split(".")[1] for a in n.names if a.name.startswith("film.") and "." in a.name}
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            if n.module == "film":
                out |= {a.name for a in n.names}
            elif n.module.startswith("film."):
                out.add(n.module.split(".")[1])
    return out


def placement(root: Path, place: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """film module -> package, for every film/*.py still at the top; notes on what was decided."""
    known = {m: pkg for pkg, ms in FILM.items() for m in ms}
    mods = film_modules(root)
    moves = {m: place.get(m) or known[m] for m in mods if m in known or m in place}
    notes = []
    unknown = [m for m in mods if m not in moves]
    for _ in range(3):                   # unknown modules may import one another
        for m in list(unknown):
            ups = {moves[i] for i in film_imports(root, m) if i in moves}
            downs = {moves[o] for o in mods if o in moves and m in film_imports(root, o)}
            level = max((LAYER[p] for p in ups), default=None)
            candidates = [p for p in FILM if (level is None or LAYER[p] >= level)
                          and all(LAYER[d] >= LAYER[p] for d in downs)]
            if not ups and downs:        # a helper of its importers: with the lowest of them
                best = min(downs, key=lambda p: (LAYER[p], p))
                moves[m] = best
                unknown.remove(m)
                notes.append(f"film/{m}.py: not in the map; placed in film/{best}/ beside the modules that import "
                             f"it ({sorted(downs)}; it imports no film module)")
            elif ups and candidates:
                best = min(candidates, key=lambda p: (LAYER[p], p not in ups))
                moves[m] = best
                unknown.remove(m)
                notes.append(f"film/{m}.py: not in the map; placed in film/{best}/ by its imports "
                             f"(imports {sorted(ups)}, imported by {sorted(downs) or 'no film package'})")
    for m in unknown:
        notes.append(f"film/{m}.py: not in the map and its imports do not place it; left at film/ (pass "
                     f"--place {m}=PACKAGE)")
    return moves, notes


def move_film(root: Path, moves: dict[str, str], dry: bool) -> list[str]:
    """git mv film/<m>.py film/<pkg>/<m>.py (with a package __init__), film/templates with the kit."""
    done = []
    for pkg in sorted(set(moves.values()) | {FILM_DIRS[d] for d in FILM_DIRS if (root / "film" / d).is_dir()}):
        init = root / "film" / pkg / "__init__.py"
        if not init.exists() and not dry:
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{ABOUT[pkg]}\n"""\n', encoding="utf-8")
            git("add", str(init.relative_to(root)), root=root)
    for m, pkg in sorted(moves.items()):
        src, dst = root / "film" / f"{m}.py", root / "film" / pkg / f"{m}.py"
        if not src.exists():
            continue
        done.append(f"film/{m}.py -> film/{pkg}/{m}.py")
        if dry:
            continue
        git("mv", str(src.relative_to(root)), str(dst.relative_to(root)), root=root)
        text = dst.read_text(encoding="utf-8")
        # one folder deeper: what the file finds relative to itself
        text = re.sub(r"(Path\(__file__\)(?:\.resolve\(\))?\.parents\[)(\d+)\]",
                      lambda mm: f"{mm.group(1)}{int(mm.group(2)) + 1}]", text)
        if re.search(r"Path\(__file__\)(?:\.resolve\(\))?\.parent\.parent\b", text):
            print(f"  ! film/{pkg}/{m}.py: uses Path(__file__).parent.parent; check it", file=sys.stderr)
        dst.write_text(text, encoding="utf-8")
    for d, pkg in FILM_DIRS.items():
        if (root / "film" / d).is_dir():
            done.append(f"film/{d}/ -> film/{pkg}/{d}/")
            if not dry:
                git("mv", f"film/{d}", f"film/{pkg}/{d}", root=root)
    return done


def film_init(root: Path, moves: dict[str, str]) -> str:
    rows = []
    for pkg in FILM:
        ms = sorted(m for m, p in moves.items() if p == pkg and (root / "film" / pkg / f"{m}.py").exists())
        if ms:
            rows.append(f"    film/{pkg + '/':9} {', '.join(ms)}\n" + "".join(
                f"                {line}\n" for line in ABOUT[pkg].splitlines()))
    top = sorted(m for m in film_modules(root))
    extra = f"\nStill at film/ (not placed): {', '.join(top)}.\n" if top else ""
    return ('"""The film build, by job (each package imports only those below it: make -> kit -> run ->\n'
            'plan, frames; tests/test_layers.py checks it):\n\n' + "".join(rows) + extra +
            "\nLayers: onepass.cli -> film/ -> scenes/ -> voiceover/ -> engine/ -> words/ -> data/.\n"
            '"""\n')


def make_cli(root: Path, names: Names, dry: bool) -> list[str]:
    """render.py's code -> onepass/cli.py; render.py a wrapper; onepass/__init__.py."""
    notes = []
    render, cli, init = root / "render.py", root / DIST / "cli.py", root / DIST / "__init__.py"
    if not init.exists():
        notes.append("onepass/__init__.py written")
        if not dry:
            init.parent.mkdir(exist_ok=True)
            init.write_text(
                '"""onepass: an explainer film of one forward pass of GPT-2, rendered with Manim from the model\'s\n'
                "real numbers. The distribution's one top-level name: its packages are the repository's folders\n"
                f"{', '.join(p + '/' for p in PACKAGES)} (pyproject.toml maps them under it), and cli.py is the\n"
                '`onepass` command."""\n'
                "from pathlib import Path as _Path\n\n"
                "# A checkout used without installing it (`python render.py` there, PYTHONPATH=<checkout>): its\n"
                "# packages are the folders beside this one, as pyproject.toml's package-dir maps them for an install.\n"
                "_checkout = _Path(__file__).resolve().parent.parent\n"
                "if (_checkout / \"pyproject.toml\").is_file() and (_checkout / \"film\" / \"__init__.py\").is_file() \\\n"
                "        and str(_checkout) not in __path__:\n"
                "    __path__.append(str(_checkout))\n"
                "del _Path, _checkout\n" + _api_exports(root), encoding="utf-8")
    if render.exists() and WRAPPER_MARK not in render.read_text(encoding="utf-8"):
        notes.append("render.py -> onepass/cli.py (render.py: a wrapper)")
        if not dry:
            code = render.read_text(encoding="utf-8")
            code = code.replace("#!/usr/bin/env python3\n", "", 1)
            code = re.sub(r"(?m)^sys\.path\.insert\(0, str\(ROOT\)\)\n", "", code)
            code = re.sub(r"(?m)^ROOT = Path\(__file__\)\.resolve\(\)\.parent$",
                          "ROOT = Path(__file__).resolve().parents[1]    # the project folder (or site-packages/onepass/..)",
                          code)
            code = code.replace("python render.py", "onepass")
            cli.write_text(code, encoding="utf-8")
            render.write_text(
                "#!/usr/bin/env python3\n"
                f'"""{WRAPPER_MARK}: `python render.py --chapter 02` is the `onepass` command\n'
                "(onepass/cli.py), for a project installed with `make install` (or `pip install -e .`).\"\"\"\n"
                "import sys\n\n"
                "try:\n"
                "    from onepass.cli import main\n"
                "except ModuleNotFoundError as exc:\n"
                "    if (exc.name or \"\").split(\".\")[0] != \"onepass\":\n"
                "        raise\n"
                "    sys.exit(\"onepass is not installed in this Python: run `make install` (or \"\n"
                "             \"`pip install -e . --no-deps` in the project's venv) first\")\n\n"
                "if __name__ == \"__main__\":\n"
                "    sys.exit(main())\n", encoding="utf-8")
            git("add", f"{DIST}/__init__.py", f"{DIST}/cli.py", root=root)
    return notes


def _api_exports(root: Path) -> str:
    """`from onepass import render`: the names film's api module exports (its __all__), imported
    when first asked for (importing onepass stays cheap)."""
    found = sorted((root / "film").glob("*/api.py")) or sorted((root / "film").glob("api.py"))
    if not found:
        return ""
    tree = ast.parse(found[0].read_text(encoding="utf-8"))
    exported = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)), [])
    if not exported:
        return ""
    module = ".".join([DIST, *found[0].relative_to(root).with_suffix("").parts])
    return (f"\n__all__ = {sorted(exported)!r}\n\n\n"
            "def __getattr__(name: str):\n"
            f'    """{", ".join(sorted(exported))}: from {module} (film\'s Python API), loaded when first asked for."""\n'
            "    if name in __all__:\n"
            "        import importlib\n"
            f"        return getattr(importlib.import_module({module!r}), name)\n"
            "    raise AttributeError(f\"module {__name__!r} has no attribute {name!r}\")\n")


def package_list(root: Path) -> list[str]:
    out = [DIST]
    for top in PACKAGES:
        for d in sorted([root / top, *(root / top).rglob("*")]):
            if d.is_dir() and "__pycache__" not in d.parts and any(d.glob("*.py")):
                out.append(".".join([DIST, *d.relative_to(root).parts]))
    return out


def rewrite_pyproject(root: Path) -> str:
    path = root / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^onepass = "render:main"$', f'onepass = "{DIST}.cli:main"', text)
    text = FILM_PATH.sub(lambda m: f"film/{FILM_DIRS.get(m.group(1)) or _moved(root, m.group(1))}/{m.group(1)}{m.group(2)}"
                         if (m.group(1) in FILM_DIRS and m.group(2) == "/") or _moved(root, m.group(1)) else m.group(0),
                         text)
    # [tool.setuptools]: the folders mapped under onepass, every package listed
    tool = re.search(r"(?ms)^\[tool\.setuptools\]\n.*?(?=^\[(?!tool\.setuptools\]))", text)
    pkgs = package_list(root)
    body = ("[tool.setuptools]\n"
            "# one top-level name, onepass: the repository's folders are its packages (tools/restructure.py)\n"
            f'package-dir = {{"{DIST}" = "{DIST}", ' +
            ", ".join(f'"{DIST}.{p}" = "{p}"' for p in PACKAGES if (root / p).is_dir()) + "}\n"
            "packages = [\n" + "".join(f'    "{p}",\n' for p in pkgs) + "]\n\n")
    if tool:
        text = text[:tool.start()] + body + text[tool.end():]
    text = re.sub(r"(?ms)^\[tool\.setuptools\.packages\.find\]\n.*?(?=^\[|\Z)", "", text)
    # package data: keys under onepass, film's template folder with the kit
    data = re.search(r"(?ms)^\[tool\.setuptools\.package-data\]\n(.*?)(?=^\[|\Z)", text)
    if data:
        lines = []
        for line in data.group(1).splitlines():
            m = re.match(r'^("?)([\w.]+)\1(\s*=\s*\[)(.*)$', line)
            if m and m.group(2).split(".")[0] in PACKAGES:
                key, rest = m.group(2), m.group(4)
                for d, pkg in FILM_DIRS.items():
                    if key == "film" and f'"{d}/' in rest:
                        key = f"film.{pkg}"
                line = f'"{DIST}.{key}"{m.group(3)}{rest}'
            lines.append(line)
        text = text[:data.start(1)] + "\n".join(lines) + "\n" + text[data.end(1):]
    return text


def _moved(root: Path, module: str) -> str | None:
    """The film package a film module now lives in, None if it is not in one."""
    return next((p.parent.name for p in (root / "film").glob(f"*/{module}.py")), None)


def text_files(root: Path) -> list[Path]:
    listed = git("ls-files", "-co", "--exclude-standard", root=root).splitlines()
    out = []
    for rel in listed:
        p = root / rel
        if rel in SKIP_TEXT or not p.is_file() or rel.startswith(("words/catalogs/", ".venv")):
            continue
        if p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES:
            out.append(p)
    return out


def package_circles(root: Path) -> list[list[str]]:
    """Circles among film's packages (film.make -> film.run -> ...), read from the syntax trees."""
    graph: dict[str, set[str]] = {}
    for p in (root / "film").rglob("*.py"):
        here = ".".join(p.relative_to(root).parent.parts)
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                [f"{n.module}.{a.name}" for a in n.names] if isinstance(n, ast.ImportFrom) and n.module else []
            for mod in mods:
                mod = mod[len(DIST) + 1:] if mod.startswith(DIST + ".") else mod
                parts = mod.split(".")
                if parts[0] == "film" and len(parts) > 2 and (root / "film" / parts[1]).is_dir():
                    there = f"film.{parts[1]}"
                    if there != here:
                        graph.setdefault(here, set()).add(there)
    found, seen = [], set()

    def walk(v, path):
        for w in graph.get(v, ()):
            if w in path:
                cyc = path[path.index(w):]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc)
            elif len(path) < 8:
                walk(w, path + [w])
    for v in sorted(graph):
        walk(v, [v])
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="say what would move; change nothing")
    ap.add_argument("--install", metavar="VENV", help="then `VENV/bin/python -m pip install -e . --no-deps`")
    ap.add_argument("--place", action="append", default=[], metavar="MODULE=PACKAGE",
                    help="put a film module the map does not know into film/PACKAGE/ (make, kit, run, plan, frames)")
    ap.add_argument("--allow-dirty", action="store_true", help="run on a tree with uncommitted changes")
    a = ap.parse_args(argv)
    root = Path.cwd()
    if not (root / "film").is_dir() or not (root / ".git").exists():
        print("run from the repository root (film/ and .git here)", file=sys.stderr)
        return 2
    if not a.allow_dirty and not a.dry_run and git("status", "--porcelain", "--untracked-files=no", root=root).strip():
        print("the tree has uncommitted changes: commit them first (or --allow-dirty)", file=sys.stderr)
        return 2
    place = dict(p.split("=", 1) for p in a.place)
    bad = {m: p for m, p in place.items() if p not in FILM}
    if bad:
        print(f"--place: no package {bad} (packages: {', '.join(FILM)})", file=sys.stderr)
        return 2

    # the moves already made (a second run) and the ones to make
    made = {p.stem: p.parent.name for pkg in FILM for p in (root / "film" / pkg).glob("*.py") if p.stem != "__init__"}
    todo, notes = placement(root, place)
    for line in notes:
        print(f"note: {line}")
    names = Names(root, {**made, **todo})
    if a.dry_run:
        for line in move_film(root, todo, dry=True):
            print(f"move: {line}")
        for line in make_cli(root, names, dry=True):
            print(f"make: {line}")
        changed = [str(p.relative_to(root)) for p in text_files(root)
                   if _rewritten(p, names) != p.read_text(encoding="utf-8")]
        print(f"would rewrite {len(changed)} files (module names as they are now)")
        return 0

    for line in move_film(root, todo, dry=False):
        print(f"moved: {line}")
    for line in make_cli(root, names, dry=False):
        print(f"made: {line}")
    init = root / "film" / "__init__.py"
    init.write_text(film_init(root, names.moves), encoding="utf-8")
    changed = []
    for p in text_files(root):
        old = p.read_text(encoding="utf-8")
        new = _rewritten(p, names)
        if new != old:
            p.write_text(new, encoding="utf-8")
            changed.append(str(p.relative_to(root)))
    py = root / "pyproject.toml"
    new = rewrite_pyproject(root)
    if new != py.read_text(encoding="utf-8"):
        py.write_text(new, encoding="utf-8")
        changed.append("pyproject.toml")
    print(f"rewrote {len(changed)} files" + (f": {', '.join(changed)}" if len(changed) <= 40 else ""))

    broken = []
    for p in text_files(root):
        if p.suffix == ".py":
            try:
                ast.parse(p.read_text(encoding="utf-8"))
            except SyntaxError as exc:
                broken.append(f"{p.relative_to(root)}:{exc.lineno}: {exc.msg}")
    circles = package_circles(root)
    for b in broken:
        print(f"error: does not parse: {b}", file=sys.stderr)
    for c in circles:
        print(f"error: film packages import each other in a circle: {' -> '.join(c + c[:1])}", file=sys.stderr)
    if a.install:
        cmd = [str(Path(a.install) / "bin" / "python"), "-m", "pip", "install", "-q", "-e", ".", "--no-deps"]
        print("$ " + " ".join(cmd))
        r = subprocess.run(cmd, cwd=root)
        if r.returncode:
            return r.returncode
    return 1 if broken or circles else 0


def _rewritten(p: Path, names: Names) -> str:
    text = p.read_text(encoding="utf-8")
    return rewrite_py(text, names, str(p)) if p.suffix == ".py" else rewrite_text(text, names)


if __name__ == "__main__":
    sys.exit(main())
