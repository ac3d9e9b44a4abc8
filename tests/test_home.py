"""One home for files (issue 42 item 4): data/home.py decides where onepass writes. Caches go to
the user's cache folder (or $ONEPASS_CACHE), renders to out/ under the current folder, nothing
into the project's own folders; every temporary-folder prefix is named there, and the clean-up
of what a killed run left reads them from there. The render that shows it end to end is
tests/test_packaging.py's (the installed `onepass` in an empty folder)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from onepass.data import home

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("data", "film", "scenes", "voiceover", "words", "engine")


def test_every_cache_is_in_the_users_cache_folder_or_onepass_cache(tmp_path, monkeypatch):
    from onepass.film.plan import source_memo
    from onepass.voiceover import services
    from onepass.data import bundle as bundle_io
    for env in (home.CACHE_ENV, home.VOICE_CACHE_ENV, home.LABELS_ENV, home.SOURCES_ENV):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert home.cache_root() == tmp_path / "xdg" / "onepass"
    monkeypatch.setenv(home.CACHE_ENV, str(tmp_path / "mine"))
    root = tmp_path / "mine"
    assert home.cache_root() == root
    assert services.cache_root() == home.voice_cache_dir() == root / "voice"
    assert source_memo.folder() == home.source_memo_path() == root / "sources"
    assert home.label_cache_dir() == root / "labels"
    assert bundle_io.bundle_dir("The cat", "0123456789abcdef").parent == home.bundles_dir() == root / "bundles"
    # the narrower settings still win, and "off" still turns the label and source caches off
    monkeypatch.setenv(home.VOICE_CACHE_ENV, str(tmp_path / "voices"))
    monkeypatch.setenv(home.SOURCES_ENV, "off")
    assert services.cache_root() == tmp_path / "voices" and source_memo.folder() is None
    # the output root follows the current folder, as manim's media/ does
    monkeypatch.chdir(tmp_path)
    from onepass.film.plan.jobs import BuildOptions
    from onepass.film.make.request import Request
    assert home.output_root() == BuildOptions().out == Request().out == tmp_path / "out"
    for path in (home.cache_root(), home.bundles_dir(), home.voice_cache_dir(), home.output_root()):
        assert not path.resolve().is_relative_to(ROOT), path


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_the_clean_up_removes_every_kind_of_folder_a_killed_run_leaves(tmp_path, monkeypatch):
    """Each prefix onepass.data.home names: a folder of it in the output folder (OUTPUT_PREFIXES, the
    handout's included) or, named for a process that is gone, in the system temp folder
    (OWNED_PREFIXES: alignment, manim media, a handout's Chromium, a network voice) is removed by
    the next run's clean-up; a live process's and anything else are kept."""
    from onepass.film.make import build
    system = tmp_path / "system-tmp"
    system.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system))
    dest = tmp_path / "out"
    left = [dest / f"{p}x1" for p in home.OUTPUT_PREFIXES]
    left += [dest / "stills" / f".ch00{home.STILLS_CUT}x2", dest / "clips" / f".ch00{home.CLIP_CUT}x3"]
    dead, alive = _dead_pid(), os.getpid()
    left += [system / f"{p}{'0123456789ab-' if p == home.MEDIA_PREFIX else ''}p{dead}-x4" for p in home.OWNED_PREFIXES]
    kept = [dest / "ch00-tokens.mp4", dest / "stills" / "ch00-title.png", dest / "onepass-other-x5",
            system / f"{home.ALIGN_PREFIX}p{alive}-x6", system / f"{home.CHROMIUM_TEMP}p{alive}-x7"]
    for p in left + kept:
        if p.suffix in (".mp4", ".png"):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"kept")
        else:
            (p / "inside").mkdir(parents=True)
    build.remove_leftovers(dest)
    assert [p for p in left if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []


def _prefix_start(node: ast.AST, from_home: dict[str, str]) -> tuple[str | None, bool]:
    """(the text a prefix= argument starts with, whether that text comes from onepass.data.home): home.X,
    a module name bound to one (ALIGN_PREFIX = home.ALIGN_PREFIX), a literal, an f-string's first part."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, False
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "home":
        return getattr(home, node.attr), True
    if isinstance(node, ast.Name) and node.id in from_home:
        return from_home[node.id], True
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return _prefix_start(first.value if isinstance(first, ast.FormattedValue) else first, from_home)
    return None, False


def test_every_onepass_temporary_folder_is_named_in_home():
    """A temporary folder or file named `onepass-...` anywhere in onepass is made with a prefix
    onepass.data.home lists (so the clean-up knows it), never with one written out by hand."""
    found, wrong = 0, []
    files = [ROOT / "render.py"] + [f for p in PACKAGES if (ROOT / p).is_dir() for f in (ROOT / p).rglob("*.py")]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        from_home = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                text, ours = _prefix_start(node.value, {})
                if ours:
                    from_home[node.targets[0].id] = text
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                    in ("mkdtemp", "TemporaryDirectory", "mkstemp", "NamedTemporaryFile")):
                continue
            prefix = next((k.value for k in node.keywords if k.arg == "prefix"), None)
            text, ours = _prefix_start(prefix, from_home) if prefix is not None else (None, False)
            if text and text.startswith("onepass-"):
                found += 1
                if not ours or not text.startswith(home.TEMP_PREFIXES):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: prefix={ast.unparse(prefix)}")
    assert found >= 10 and wrong == [], wrong


# A render from an empty folder (the chapter in ./out there and nothing else in that folder, the bundle
# and the voice's clips in the user's cache folder, nothing written into onepass's own files) is
# tests/test_packaging.py's render of chapter 00 by the installed command: one render for both.
