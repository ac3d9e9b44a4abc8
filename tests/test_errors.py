"""One user-facing error base (issue 42 item 5): every error the user can act on derives from
onepass.data.errors.OnepassError, which render.py ends with one clear line (exit 2); anything else is a
bug in onepass and keeps its traceback (exit 1)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from onepass.data.errors import OnepassError
from tests.helpers import run_main

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("data", "film", "scenes", "voiceover", "words", "engine")
# exceptions that never reach the user: raised and caught inside one module, or by its one caller, which
# says what to do with an OnepassError of its own. data/arch imports nothing of data/ outside it (the
# packages import one way), so its errors become ExtractError (data/extract.py), models.UnknownModel
# (data/models.py) or BundleError (data/bundle.py); engine/stored.py's end in the label being built again.
INTERNAL = {"film/frames/holds.py": {"Unsupported"}, "engine/voiceover_plugin.py": {"NoQuestions"},
            "data/arch/__init__.py": {"UnknownModel"}, "data/arch/base/spec.py": {"CaptureError", "WeightsError"},
            "engine/stored.py": {"StoredError", "_Unstorable"}}


def _classes():
    import importlib
    for path in [f for p in ("onepass",) + PACKAGES if (ROOT / p).is_dir() for f in (ROOT / p).rglob("*.py")]:
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                    (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")).endswith(("Error", "Exception", "Mismatch"))
                    for b in node.bases) and node.name not in INTERNAL.get(rel, ()):
                name = rel[:-3].replace("/", ".")       # data/x.py is onepass.data.x; onepass/cli.py onepass.cli
                module = importlib.import_module(name if name.startswith("onepass.") else "onepass." + name)
                yield rel, getattr(module, node.name)


def test_every_error_class_of_onepass_derives_from_the_one_base():
    found = list(_classes())
    wrong = [f"{rel}: {cls.__name__}" for rel, cls in found if not issubclass(cls, OnepassError)]
    assert len(found) >= 18 and wrong == [], wrong


def _raise_on_extract(monkeypatch, exc: BaseException):
    from onepass.film.make import request

    def fails(*args, **kwargs):
        raise exc
    monkeypatch.setattr(request, "get_bundle", fails)


def _cases():
    from onepass.data.bundle import BundleError
    from onepass.data.extract import ExtractError
    from onepass.data.models import UnknownModel
    from onepass.film.make.batch import ManifestError
    from onepass.film.plan.errors import PipelineError
    from onepass.film.plan.identity import WorkerMismatch
    from onepass.voiceover.align import AlignmentError
    from onepass.voiceover.audio import AudioError
    from onepass.voiceover.media import MediaError
    from onepass.words.catalog import CatalogError
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
