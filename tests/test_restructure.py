"""tools/restructure.py on a small project of the same shape (a git repository in a temporary
folder): film's modules move into packages by job, every module name is rewritten under onepass
(import statements, strings, attribute chains; a variable that shares a package's name is left
alone), a film module the map does not know is placed by its imports, and a second run changes
nothing. (This file is not rewritten by the script: it names the old names on purpose.)"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import restructure  # noqa: E402

FILES = {
    "film/__init__.py": '"""The film build."""\n',
    "film/errors.py": "class PipelineError(Exception):\n    pass\n",
    "film/keys.py": ("from pathlib import Path\n\nfrom film.errors import PipelineError\n\n"
                     "ROOT = Path(__file__).resolve().parents[1]\nALWAYS = (\"film.render_job\",)\n"),
    "film/render_job.py": "from data import home\n",
    "film/request.py": ("import film.render_job\nfrom film import keys, render_job  # noqa: E402\n\n\n"
                        "def f(film):\n    film.jobs()\n    return film.render_job.main, keys.ROOT\n\n\n"
                        "def g():\n    return film.render_job.QUALITY\n"),
    "film/extra.py": "from film.request import f\n",
    "film/slides.py": "",
    "film/templates/deck.html": "<html></html>\n",
    "data/__init__.py": "",
    "data/home.py": "def out():\n    return 'film/keys.py and data.home.out'\n",
    "data/chapters.py": "CHAPTERS = {'00': 'scenes.ch00_tokens'}\n",
    "scenes/__init__.py": "",
    "scenes/ch00_tokens.py": "",
    "render.py": ("#!/usr/bin/env python3\n\"\"\"python render.py --chapter 00\"\"\"\nimport sys\nfrom pathlib import Path\n\n"
                  "ROOT = Path(__file__).resolve().parent\nsys.path.insert(0, str(ROOT))\n\n"
                  "from film import request  # noqa: E402\n\n\ndef main(argv=None):\n    return 0\n"),
    "tests/test_x.py": ("import render\nimport subprocess, sys\n\n"
                        "CODE = 'from film.keys import ROOT; import data.home'\n"
                        "subprocess.run([sys.executable, '-m', 'film.render_job'])\n"),
    "pyproject.toml": ('[project]\nname = "onepass"\nversion = "0.1.0"\n\n[project.scripts]\nonepass = "render:main"\n\n'
                       '[tool.setuptools]\npy-modules = ["render"]\n\n[tool.setuptools.packages.find]\n'
                       'include = ["data*", "film*", "scenes*"]\n\n[tool.setuptools.package-data]\n'
                       'film = ["templates/*.html"]      # the deck (film/slides.py)\n\n[tool.pytest.ini_options]\n'
                       'testpaths = ["tests"]\n'),
    "README.md": "Run `python -m film.request --markdown`; see film/keys.py.\n",
}


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path, monkeypatch):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def test_the_move_rewrites_every_name_and_a_second_run_changes_nothing(project, capsys):
    assert restructure.main([]) == 0
    said = capsys.readouterr().out
    t = tree(project)
    for rel in ("film/plan/keys.py", "film/plan/errors.py", "film/run/render_job.py", "film/make/request.py",
                "film/kit/templates/deck.html", "onepass/cli.py", "onepass/__init__.py", "film/make/__init__.py"):
        assert rel in t, rel
    assert "film/keys.py" not in t
    assert "film/extra.py: not in the map; placed in film/make/" in said       # it imports film.request
    assert "film/make/extra.py" in t and "from onepass.film.make.request import f" in t["film/make/extra.py"]
    keys = t["film/plan/keys.py"]
    assert "from onepass.film.plan.errors import PipelineError" in keys
    assert "parents[2]" in keys and 'ALWAYS = ("onepass.film.run.render_job",)' in keys
    request = t["film/make/request.py"]
    assert "import onepass.film.run.render_job\n" in request
    assert ("from onepass.film.plan import keys  # noqa: E402\n"
            "from onepass.film.run import render_job  # noqa: E402\n") in request
    assert "    film.jobs()\n" in request                  # a parameter named film: left alone
    assert "return onepass.film.run.render_job.QUALITY" in request   # the imported package's chain
    assert t["data/home.py"] == "def out():\n    return 'film/plan/keys.py and onepass.data.home.out'\n"
    assert "'onepass.scenes.ch00_tokens'" in t["data/chapters.py"]
    assert "from onepass.film.make import request  # noqa: E402" in t["onepass/cli.py"]
    assert "sys.path.insert" not in t["onepass/cli.py"] and "parents[1]" in t["onepass/cli.py"]
    assert "from onepass.cli import main" in t["render.py"]
    assert "__path__.append(str(_checkout))" in t["onepass/__init__.py"]    # a checkout runs uninstalled
    test = t["tests/test_x.py"]
    assert test.startswith("from onepass import cli as render\n")
    assert "'from onepass.film.plan.keys import ROOT; import onepass.data.home'" in test
    assert "'-m', 'onepass.film.run.render_job'" in test
    assert t["README.md"] == "Run `python -m onepass.film.make.request --markdown`; see film/plan/keys.py.\n"
    py = t["pyproject.toml"]
    assert 'onepass = "onepass.cli:main"' in py and "py-modules" not in py and "packages.find" not in py
    assert '"onepass.film" = "film"' in py and '    "onepass.film.plan",\n' in py
    assert '"onepass.film.kit" = ["templates/*.html"]      # the deck (film/kit/slides.py)' in py
    assert "[tool.pytest.ini_options]" in py

    git("add", "-A", cwd=project)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "moved", cwd=project)
    assert restructure.main([]) == 0
    assert tree(project) == t


def test_a_dirty_tree_is_refused(project, capsys):
    (project / "film" / "keys.py").write_text("X = 1\n")
    assert restructure.main([]) == 2
    assert "uncommitted" in capsys.readouterr().err
