"""The suite's own scheduling (tests/conftest.py): what `make test` relies on to stay fast."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import BUILT_SCENES_FILES, pytest_xdist_make_scheduler, work_unit

TESTS = Path(__file__).resolve().parent


def files_reading_built() -> set[str]:
    """Test files with a test (or fixture) that takes the session's `built` fixture."""
    found = set()
    for path in TESTS.glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(a.arg == "built" for a in node.args.args):
                found.add(f"tests/{path.name}")
    return found


def test_every_file_that_reads_built_scenes_runs_in_their_one_unit_of_work():
    """A file left out would dry-run its scenes again on whichever worker it lands on."""
    assert files_reading_built() == set(BUILT_SCENES_FILES)


def test_the_scheduler_keeps_those_files_together_and_the_rest_by_file():
    assert {work_unit(f"{f}::test_x[a]") for f in BUILT_SCENES_FILES} == {"built scenes"}
    assert work_unit("tests/test_input.py::test_y[a]") == "tests/test_input.py"

    class Config:
        def getoption(self, name, default=None):
            return "load" if name == "dist" else default
    assert pytest_xdist_make_scheduler(Config(), log=None) is None       # other --dist modes: xdist's own
