"""The suite's own scheduling (tests/conftest.py): what `make test` relies on to stay fast."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import BUILT_SCENES_FILES, HEAVIEST_FIRST, pytest_xdist_make_scheduler, work_unit

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


def test_the_heaviest_units_of_work_are_handed_out_first_and_each_is_a_unit():
    """Units named in HEAVIEST_FIRST exist (a renamed file would silently start late) and are collected,
    and so scheduled, first and in that order; each file's own tests keep their order."""
    from tests.conftest import pytest_collection_modifyitems
    units = {f"tests/{p.name}" for p in TESTS.glob("test_*.py")} | {"built scenes"}
    assert set(HEAVIEST_FIRST) <= units and len(set(HEAVIEST_FIRST)) == len(HEAVIEST_FIRST)

    class Item:
        def __init__(self, nodeid):
            self.nodeid, self.name, self.fixturenames = nodeid, nodeid.split("::")[-1], ()

        def add_marker(self, marker):
            pass
    names = ["tests/test_arcs.py::a", "tests/test_foundation.py::b", "tests/test_arcs.py::c", "tests/test_lecture.py::d",
             "tests/test_crowding.py::e", "tests/test_lecture.py::f"]
    items = [Item(n) for n in names]
    pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == ["tests/test_crowding.py::e", "tests/test_lecture.py::d", "tests/test_lecture.py::f",
                                         "tests/test_foundation.py::b", "tests/test_arcs.py::a", "tests/test_arcs.py::c"]
