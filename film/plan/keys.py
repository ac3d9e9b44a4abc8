"""Cache keys of scene renders, read from the source files as syntax trees (nothing imported).

A scene's key (`scene_key`) covers:
  - the bundle: its cache key (prompt + weights + schema + extraction options) and the
    checksum of its tensors;
  - the quality;
  - the scene's own code: its class (and scene classes it derives from) in the chapter
    module; the rest of that module (helpers, constants, non-scene base classes) is shared by
    every scene of the chapter;
  - exactly the project modules the scene's process can import: the chapter module's imports,
    followed transitively (onepass.scenes.base, style, widgets, data.*, voiceover.*, engine.*, ...,
    imports inside functions included), plus the path that runs it (SCENE_PROCESS: onepass.film.run.render_job,
    which sets the frame config, and onepass.film.run.forkserver, which forks it) and the chapter's narration
    script, each compared as its syntax tree (comments and formatting do not count). Nothing
    else: the request, the build, the course kit and other chapters' facts are no part of a
    scene's key (`scene_modules`);
  - the narration lines the scene speaks, as spoken for this bundle and language, with their
    markers, and the voice (the speech service's own per-line key: text, voice, settings,
    mastering, recorded clip; the text alone without a service, i.e. silent);
  - the words it shows (`screen_words`): the catalog messages its code names in `.text("name")`
    calls, in the film's language, and the film-wide ones;
  - manim's and Python's versions and PIPELINE_VERSION.
Editing one scene's class, one narration line or one of its words re-renders that scene only.

Conventions the key relies on (a file that breaks one raises PipelineError naming the file
and line, rather than keying too much or too little):
  - A chapter module (scenes/chNN_*.py) lists its scenes as a literal list of the names of
    classes it defines: `SCENES = [Intro, Grid]`.
  - A scene names the lines it speaks literally: `with self.beat("key"):` (also
    `self.lines["key"]`, `self.lines.get("key")`), or through a loop variable over a literal
    tuple of strings: `for key in ("a", "b"): with self.beat(key): ...` (also
    `zip(("a", "b"), ...)` and `enumerate(("a", "b"))`). Shared scene code (scenes/base.py and
    the like) that calls `.beat(...)` does so with a literal; its lines count for every scene.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from onepass.film.plan.errors import PipelineError
from onepass.film.plan.source_memo import SourceMemo
from onepass.voiceover.script import line_id

ROOT = Path(__file__).resolve().parents[2]
LOCAL_PACKAGES = ("film", "scenes", "data", "voiceover", "words", "engine")
DIST = "onepass"            # the distribution's name, which module names may start with (onepass.film.keys)
PIPELINE_VERSION = 2        # 2: the build moved to film/ (keys of earlier renders no longer match)
# (the key reads the code a scene process can import, not the runner that starts it: a change to what
# the runner passes a scene process that the key does not hold already needs a new PIPELINE_VERSION)
# the modules that run a scene, whose code shapes every frame although no chapter module imports
# them: the scene process's main module and the fork server its process is forked from
SCENE_PROCESS = ("onepass.film.run.render_job", "onepass.film.run.forkserver")
# narration scripts (the values their lines name; the lines are in the catalogs)
NARRATION_PACKAGE = "onepass.voiceover.scripts"
# each fact this module reads from a file's text, kept on disk under a hash of the text and of
# this module's code (an unchanged re-run reads its keys without parsing a file)
MEMO = SourceMemo(Path(__file__))


def sha(obj) -> str:
    data = obj if isinstance(obj, bytes) else json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------
# Source files and the import walk

def local_name(name: str) -> str:
    """A module's name without the distribution's prefix (DIST and a dot) where it has one: the
    name of its file under ROOT."""
    return name[len(DIST) + 1:] if name.startswith(DIST + ".") else name


def module_path(name: str, root: Path = ROOT) -> Path | None:
    """File of a project module, named with or without the distribution's prefix (both spellings
    of scenes' widgets module give scenes/widgets.py), None if not ours."""
    name = local_name(name)
    if name.split(".")[0] not in LOCAL_PACKAGES:
        return None
    base = root.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _imports(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """Every module name imported anywhere in the tree (function-level imports included)."""
    out = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)   # 'from onepass.voiceover import services'
    # a module also runs its packages' __init__
    for mod in list(out):
        parts = mod.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return out


@lru_cache(maxsize=256)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def parse(path: Path) -> ast.Module:
    """The module's syntax tree (memoised on its text, so an edited file is parsed afresh)."""
    return _parse(Path(path).read_text(encoding="utf-8"))


def _fact(kind: str, path: Path, args, compute):
    """compute(tree) for this file, from MEMO when its text was read before."""
    text = Path(path).read_text(encoding="utf-8")
    return MEMO.remember(kind, text, args, lambda: compute(_parse(text)))


def _where(path: Path, node: ast.AST | None = None, root: Path = ROOT) -> str:
    try:
        shown = Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        shown = Path(path)
    return f"{shown}:{node.lineno}" if node is not None and hasattr(node, "lineno") else str(shown)


def _assigns(node: ast.stmt, name: str) -> bool:
    targets = (node.targets if isinstance(node, ast.Assign)
               else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def code_fingerprint(path: Path, name: str = "", root: Path = ROOT) -> str:
    """Hash of a module's syntax tree (formatting-insensitive)."""
    return _fact("fingerprint", path, [], lambda tree: sha(ast.dump(tree).encode("utf-8")))


def dependencies(start: list[str], root: Path = ROOT) -> dict[str, Path]:
    """Project modules reachable from `start` by imports (transitively, imports inside functions
    included), name (without the distribution's prefix) -> file."""
    seen: dict[str, Path] = {}
    todo = list(start)
    while todo:
        name = local_name(todo.pop())
        if name in seen:
            continue
        path = module_path(name, root)
        if path is None:
            continue
        seen[name] = path
        is_package = path.name == "__init__.py"
        imported = _fact("imports", path, [name, is_package], lambda tree: sorted(_imports(tree, name, is_package)))
        todo.extend(set(imported) - seen.keys())
    return seen


def scene_modules(chapter: str, module: str, root: Path = ROOT) -> dict[str, Path]:
    """Every project module a scene process of this chapter can import: its chapter module's
    import closure, the scene process's own (SCENE_PROCESS) and its narration script's; name ->
    file. What a scene's key covers of the code (the chapter module itself included)."""
    start = [module, *SCENE_PROCESS]
    if module_path(f"{NARRATION_PACKAGE}.ch{chapter}", root):
        start.append(f"{NARRATION_PACKAGE}.ch{chapter}")
    return dependencies(start, root)


# ---------------------------------------------------------------------------------------
# Chapter modules: scenes and the lines they speak

@dataclass
class ChapterSource:
    """A chapter module split into what each scene owns and what its scenes share."""
    module: str
    path: Path
    scenes: list[str]                      # SCENES, in order
    common: str                            # hash of everything but the scene classes
    own: dict[str, str]                    # scene -> hash of its class and its scene bases
    beats: dict[str, list[str]]            # scene -> narration beats it speaks


def _scene_names(tree: ast.Module, path: Path, root: Path) -> list[str]:
    found = [n for n in tree.body if _assigns(n, "SCENES")]
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    rule = ("SCENES must be assigned once, as a literal list of the names of scene classes the chapter "
            "module defines (SCENES = [Intro, Grid]): the scene cache reads it from the source")
    if not found:
        raise PipelineError(f"{_where(path, root=root)}: no SCENES; {rule}")
    node = found[0]
    if (len(found) > 1 or not isinstance(node, ast.Assign) or not isinstance(node.value, (ast.List, ast.Tuple))
            or not all(isinstance(e, ast.Name) for e in node.value.elts)):
        raise PipelineError(f"{_where(path, found[-1] if len(found) > 1 else node, root)}: {rule}")
    names = [e.id for e in node.value.elts]
    stray = [n for n in names if n not in defined]
    if stray:
        raise PipelineError(f"{_where(path, node, root)}: SCENES names {', '.join(stray)}, not defined in this "
                            f"module; {rule}")
    return names


def _literal_strings(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _loop_bindings(loop: ast.For | ast.AsyncFor) -> dict[str, list[str]]:
    """Names a loop binds to each string of a literal sequence: `for k in ("a", "b")`,
    `for k, x in zip(("a", "b"), xs)`, `for i, k in enumerate(("a", "b"))`; names the loop body
    assigns again are left out."""
    it, target, out = loop.iter, loop.target, {}
    if isinstance(target, ast.Name) and (words := _literal_strings(it)) is not None:
        out[target.id] = words
    elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and isinstance(target, ast.Tuple):
        if it.func.id == "zip":
            out = {t.id: w for t, a in zip(target.elts, it.args)
                   if isinstance(t, ast.Name) and (w := _literal_strings(a)) is not None}
        elif (it.func.id == "enumerate" and it.args and len(target.elts) == 2
              and isinstance(target.elts[1], ast.Name) and (w := _literal_strings(it.args[0])) is not None):
            out[target.elts[1].id] = w
    stored = {n.id for stmt in loop.body for n in ast.walk(stmt) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)}
    return {k: v for k, v in out.items() if k not in stored}


def _beat_argument(node: ast.AST, lines_too: bool) -> tuple[bool, ast.AST | None]:
    """(is this a beat reference, its key expression): `x.beat(key)`, and with lines_too
    `x.lines[key]` / `x.lines.get(key)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        f = node.func
        if f.attr == "beat" or (lines_too and f.attr == "get" and isinstance(f.value, ast.Attribute)
                                and f.value.attr == "lines"):
            return True, node.args[0] if node.args else None
    elif lines_too and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "lines":
        return True, node.slice
    return False, None


def _strings(arg: ast.AST | None, env: dict[str, list[str]]) -> list[str] | None:
    """The strings a key argument can be: a literal, a loop variable over literals (`env`), an
    f-string as its pattern (f"L{a}.qkv" -> "L{a}.qkv"); None when the source does not say."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.Name) and arg.id in env:
        return env[arg.id]
    if isinstance(arg, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                        for v in arg.values)]
    return None


def keyed_calls(nodes: list[ast.AST], match) -> list[tuple[ast.AST, list[str] | None]]:
    """The one walk over scene code that reads names from it (beats, words on screen, ledger
    entries paid): every node `match(node)` takes, i.e. returns (True, its key argument) for, in
    order of appearance, with the strings that argument can be (`_strings`, loops over literal
    tuples followed: `_loop_bindings`), None where the source does not say."""
    found: list[tuple[ast.AST, list[str] | None]] = []

    def visit(node: ast.AST, env: dict[str, list[str]]):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            inner = {**env, **_loop_bindings(node)}
            visit(node.target, env)
            visit(node.iter, env)
            for child in node.body:
                visit(child, inner)
            for child in node.orelse:
                visit(child, env)
            return
        hit, arg = match(node)
        if hit:
            found.append((node, _strings(arg, env)))
        for child in ast.iter_child_nodes(node):
            visit(child, env)

    for top in nodes:
        visit(top, {})
    return found


def spoken_beats(nodes: list[ast.AST], path: Path, lines_too: bool = True, root: Path = ROOT) -> list[str]:
    """The beats these statements speak, in order of appearance (see the module docstring);
    raises PipelineError at a beat whose key cannot be read from the source."""
    beats: list[str] = []
    for node, keys in keyed_calls(nodes, lambda n: _beat_argument(n, lines_too)):
        if keys is None or any("{" in k for k in keys):
            shown = ast.unparse(node) if len(ast.unparse(node)) < 80 else ast.unparse(node)[:77] + "..."
            raise PipelineError(
                f"{_where(path, node, root)}: `{shown}` names its narration beat with an expression the "
                "scene cache cannot read; write the key as a string literal (self.beat(\"key\")) or loop "
                "over a literal tuple of keys (for key in (\"a\", \"b\"): ...)")
        beats.extend(k for k in keys if k not in beats)
    return beats


def _pay_call(node: ast.AST) -> tuple[bool, ast.AST | None]:
    f = node.func if isinstance(node, ast.Call) else None
    if isinstance(f, ast.Attribute) and f.attr == "pay" and isinstance(f.value, ast.Name) and f.value.id == "self":
        return True, node.args[0] if node.args else None
    return False, None


def _read_pays(tree: ast.Module) -> list[list[str]]:
    out = []
    for node, firsts in keyed_calls([tree], _pay_call):
        through = next((kw.value for kw in node.keywords if kw.arg == "through"), None)
        throughs = _strings(through, {}) if through is not None else [""]
        out += [[first, t] for first in firsts or () for t in throughs or [""]]
    return out


def paid_calls(module: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """[(entry, through or "")] of every `self.pay(entry, ..., through=...)` call in a chapter
    module, in order; an f-string keeps its fields as a pattern (f"L{a}.qkv" -> "L{a}.qkv"). The
    ledger entries a chapter pays for (film/kit/handout.py), read as the keys read beats."""
    path = module_path(module, root)
    if path is None:
        raise PipelineError(f"chapter module {module} not found under {root}")
    return [tuple(p) for p in _fact("pays", path, [], _read_pays)]


def shared_beats(deps: dict[str, Path], root: Path = ROOT) -> list[str]:
    """Beats spoken by shared scene code (ChapterScene's narrated title card, say): the
    `.beat("key")` calls in the scenes.* modules a chapter imports, other chapters' modules
    excepted. They count for every scene of the chapter."""
    beats: list[str] = []
    for name, path in sorted(deps.items()):
        if not name.startswith("scenes.") or re.match(r"scenes\.ch\d+_", name):
            continue
        own = _fact("shared_beats", path, [], lambda tree: spoken_beats([tree], path, lines_too=False, root=root))
        beats += [b for b in own if b not in beats]
    return beats


def chapter_source(module: str, root: Path = ROOT) -> ChapterSource:
    module = local_name(module)
    path = module_path(module, root)
    if path is None:
        raise PipelineError(f"chapter module {module} not found under {root}")
    read = _fact("chapter", path, [], lambda tree: _read_chapter(tree, path, root))
    return ChapterSource(module, path, read["scenes"], read["common"], read["own"], read["beats"])


def _read_chapter(tree: ast.Module, path: Path, root: Path) -> dict:
    names = _scene_names(tree, path, root)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in names}
    common_nodes = [n for n in tree.body if not (isinstance(n, ast.ClassDef) and n.name in names)]
    common = sha(ast.dump(ast.Module(body=common_nodes, type_ignores=[])).encode("utf-8"))
    common_beats = spoken_beats(common_nodes, path, root=root)

    def lineage(name: str, seen=()) -> list[str]:   # the scene and scene classes it derives from
        node = classes.get(name)
        if node is None or name in seen:
            return []
        out = [name]
        for b in node.bases:
            if isinstance(b, ast.Name):
                out += lineage(b.id, seen + (name,))
        return out

    own, beats = {}, {}
    for name in names:
        chain = [classes[c] for c in lineage(name)]
        own[name] = sha([ast.dump(c) for c in chain])
        beats[name] = list(dict.fromkeys(spoken_beats(chain, path, root=root) + common_beats))
    return {"scenes": names, "common": common, "own": own, "beats": beats}


# ---------------------------------------------------------------------------------------
# Keys

def bundle_identity(bundle) -> dict:
    """What a rendered frame depends on in the bundle: its cache key, its tensors' checksum and
    its schema. `bundle`: a Bundle or its meta.json as a dict (film/run/cluster.py names and checks
    the bundles it sends by this too)."""
    meta = bundle if isinstance(bundle, dict) else bundle.meta
    return {"key": meta.get("cache_key"), "tensors": meta.get("tensors_sha256"), "schema": meta.get("schema_version")}


def tool_versions() -> dict:
    def v(pkg):
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return None
    return {"manim": v("manim"), "manim-voiceover": v("manim-voiceover"), "python": list(sys.version_info[:2]),
            "pipeline": PIPELINE_VERSION}


def voice_line_keys(chapter: str, lines: dict, service=None) -> dict[str, object]:
    """beat -> what the spoken line depends on: the speech service's own cache key (text, voice,
    settings, mastering, recorded clip); without a service (silent), the text; and where its
    markers are (they move the picture). A line is a onepass.words.markup.Filled (or plain text)."""
    out = {}
    for beat, line in lines.items():
        text, marks = getattr(line, "text", line), [list(m) for m in getattr(line, "marks", ())]
        key = (service.cache_key(" ".join(text.split()), line_id(chapter, beat), marks) if service is not None
               else {"text": text, "voice": None})
        out[beat] = {"speech": key, "marks": marks} if marks else key
    return out


def _text_call(node: ast.AST) -> tuple[bool, ast.AST | None]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "text" and node.args:
        return True, node.args[0]
    return False, None


def _text_names(nodes: list[ast.AST]) -> tuple[list[str], bool]:
    """The message names these statements show: the literal first arguments of `.text("name", ...)`
    calls (loops over literal tuples count, as for beats), and whether any name is not literal."""
    calls = keyed_calls(nodes, _text_call)
    readable = [k for _, ks in calls if ks is not None for k in ks if "{" not in k]
    dynamic = any(ks is None or any("{" in k for k in ks) for _, ks in calls)
    return list(dict.fromkeys(readable)), dynamic


def _scene_text_names(tree: ast.Module, scenes: list[str], scene: str) -> list:
    """[names, dynamic] of _text_names for one scene: its class and the classes it derives from,
    and its chapter module's code outside the scene classes."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    nodes = [n for n in tree.body if not (isinstance(n, ast.ClassDef) and n.name in scenes)]
    chain, name = [], scene
    while name in classes and name not in [c.name for c in chain]:
        chain.append(classes[name])
        bases = [b.id for b in classes[name].bases if isinstance(b, ast.Name)]
        name = bases[0] if bases else ""
    return list(_text_names(nodes + chain))


def screen_words(src: ChapterSource, scene: str, chapter: str, words, deps: dict[str, Path],
                 root: Path = ROOT) -> dict[str, list[str]]:
    """message id -> its templates, for every message the scene can show: the names its class (and
    its chapter module's shared code, and shared scene modules) pass to `.text(...)`, as ids of its
    chapter (`chNN:name`) or film-wide (`film:...`), plus every film-wide message and chapter title
    (the furniture). A name no catalog has is refused here, before anything renders; a scene that
    builds a name at run time depends on all of its chapter's words."""
    names, dynamic = _fact("scene_words", src.path, [src.scenes, scene],
                           lambda tree: _scene_text_names(tree, src.scenes, scene))
    for mod, path in sorted(deps.items()):
        if mod.startswith("scenes.") and not re.match(r"scenes\.ch\d+_", mod):
            names += _fact("module_words", path, [], lambda tree: _text_names([tree])[0])
    ids = [n if (":" in n or n.startswith("chapter-")) else f"ch{chapter}:{n}" for n in names]
    missing = [i for i in dict.fromkeys(ids) if not words.has(i)]
    if missing:
        raise PipelineError(f"{_where(src.path, root=root)}: scene {scene} shows message(s) "
                            f"{', '.join(missing)}, which the {words.lang} catalog does not have (add them to "
                            f"words/catalogs/en/ch{chapter}.po or film.po)")
    prefixes = ("film:", "chapter-") + ((f"ch{chapter}:",) if dynamic else ())
    ids += [i for i in words.messages if i.startswith(prefixes)]
    return {i: list(words.messages[i].forms) for i in sorted(set(ids))}


def scene_key(*, bundle_id: dict, quality: str, chapter: str, scene: str, src: ChapterSource,
              deps: dict[str, str], line_keys: dict[str, object], versions: dict,
              shared: list[str] = (), screen: dict | None = None) -> str:
    spoken = {b: line_keys.get(b) for b in [*src.beats[scene], *shared]}
    return sha({"bundle": bundle_id, "quality": quality, "chapter": chapter, "scene": scene,
                "common": src.common, "own": src.own[scene], "deps": deps, "lines": spoken, "versions": versions,
                "screen": screen or {}})
