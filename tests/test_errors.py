"""One user-facing error base (issue 42 item 5): every error the user can act on derives from
data.errors.OnepassError, which render.py ends with one clear line (exit 2); anything else is a
bug in onepass and keeps its traceback (exit 1)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from data.errors import OnepassError
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("data", "film", "scenes", "voiceover", "words", "engine")
# exceptions that never reach the user: raised and caught inside one module
INTERNAL = {"film/holds.py": {"Unsupported"}, "engine/voiceover_plugin.py": {"NoQuestions"}}


def _classes():
    import importlib
    for path in [ROOT / "render.py"] + [f for p in PACKAGES if (ROOT / p).is_dir() for f in (ROOT / p).rglob("*.py")]:
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                    (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")).endswith(("Error", "Exception", "Mismatch"))
                    for b in node.bases) and node.name not in INTERNAL.get(rel, ()):
                module = importlib.import_module(rel[:-3].replace("/", "."))
                yield rel, getattr(module, node.name)


def test_every_error_class_of_onepass_derives_from_the_one_base():
    found = list(_classes())
    wrong = [f"{rel}: {cls.__name__}" for rel, cls in found if not issubclass(cls, OnepassError)]
    assert len(found) >= 18 and wrong == [], wrong


def _raise_on_extract(monkeypatch, exc: BaseException):
    from film import request

    def fails(*args, **kwargs):
        raise exc
    monkeypatch.setattr(request, "get_bundle", fails)


def _cases():
    from data.bundle import BundleError
    from data.extract import ExtractError
    from data.models import UnknownModel
    from film.batch import ManifestError
    from film.errors import PipelineError
    from film.identity import WorkerMismatch
    from voiceover.align import AlignmentError
    from voiceover.audio import AudioError
    from voiceover.media import MediaError
    from words.catalog import CatalogError
    return [ExtractError("no weights here: use --weights random"), BundleError("bundle damaged: extract again"),
            UnknownModel("no model 'gpt5': the family is gpt2, ..."), PipelineError("scene Scores failed: see its log"),
            ManifestError(Path("course.toml"), ["job 1: no prompt"]), AlignmentError("line ch02-title: silent"),
            AudioError("cannot read take.wav"), MediaError("ffmpeg: damaged part"), CatalogError("es/ch02.po: bad"),
            WorkerMismatch("worker w1 refused: it runs other scene code", {"code": "x"})]


@pytest.mark.parametrize("index", range(10))
def test_each_user_facing_error_ends_render_with_its_message_and_no_traceback(index, monkeypatch):
    exc = _cases()[index]
    _raise_on_extract(monkeypatch, exc)
    rc, _, err = run_main("--inspect", "--weights", "tiny")
    assert rc == 2, err
    assert "Traceback" not in err
    assert "error: " + " ".join(str(exc).split()) in " ".join(err.split()), (err, str(exc))
    assert type(exc).__name__ not in err and "bug" not in err


@pytest.mark.parametrize("exc", [KeyError("n_embd"), ZeroDivisionError("division by zero")])
def test_anything_else_is_a_bug_and_keeps_its_traceback(exc, monkeypatch):
    _raise_on_extract(monkeypatch, exc)
    rc, _, err = run_main("--inspect", "--weights", "tiny")
    assert rc == 1 and "Traceback" in err and type(exc).__name__ in err and "bug in onepass" in err, err
