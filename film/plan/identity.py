"""What a dask worker must share with the client to render the same frames: the project
version, one fingerprint of the project's code (film/plan/keys.py's syntax trees) and the tool
versions a scene key holds. film/run/cluster.py checks it before a worker renders anything.
"""
from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

from onepass.data.errors import OnepassError
from onepass.film.plan import keys
from onepass.film.plan.keys import ROOT

PROJECT = "onepass"


class WorkerMismatch(OnepassError, RuntimeError):
    """A worker whose project version, scene code or tools differ from the client's.
    args: (the message, the worker's identity)."""

    def __str__(self) -> str:          # the message alone, as render.py shows it
        return str(self.args[0]) if self.args else ""


def project_version(root: Path = ROOT) -> str:
    try:
        return importlib.metadata.version(PROJECT)
    except importlib.metadata.PackageNotFoundError:     # a checkout that was never installed
        m = re.search(r'^version\s*=\s*"([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
        return m.group(1) if m else "?"


_IDENTITY: dict[tuple, dict] = {}


def code_identity(root: Path = ROOT) -> dict:
    """{"version", "code", "tools"}: the project version, one fingerprint of every module of the
    project's packages (syntax trees: comments and formatting do not count, narration lines
    do) and the tool versions a scene key holds. Memoised on the files' sizes and times."""
    files = sorted(p for pkg in keys.LOCAL_PACKAGES for p in (root / pkg).rglob("*.py")
                   if "__pycache__" not in p.parts)
    stat = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    if stat not in _IDENTITY:
        trees = {str(p.relative_to(root)): keys.code_fingerprint(p) for p in files}
        _IDENTITY.clear()
        _IDENTITY[stat] = {"version": project_version(root), "code": keys.sha(trees)[:16],
                           "tools": keys.tool_versions()}
    return _IDENTITY[stat]


def check_identity(expected: dict, mine: dict, where: str):
    """Raise WorkerMismatch when this worker would render other frames than the client."""
    if expected == mine:
        return
    diffs = []
    if expected["version"] != mine["version"]:
        diffs.append(f"project version {mine['version']} (client: {expected['version']})")
    if expected["code"] != mine["code"]:
        diffs.append(f"scene code {mine['code']} (client: {expected['code']})")
    if expected["tools"] != mine["tools"]:
        diffs.append(f"tools {mine['tools']} (client: {expected['tools']})")
    raise WorkerMismatch(f"worker {where} refused: it runs {', '.join(diffs)}; install the client's commit "
                         f"on every worker (`git checkout <commit> && make install`), see docs/CLUSTER.md", mine)
