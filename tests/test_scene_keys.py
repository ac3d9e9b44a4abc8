"""A scene's cache key covers exactly the code its scene process can import (issue 42 item 2):
editing a module no scene process of a chapter imports re-renders none of its scenes; editing
one it does re-renders them. Keys are read from the sources as syntax trees, so these tests plan
(nothing renders) against a copy of the project's sources, edited there."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from onepass.film.plan import jobs, keys

ROOT = Path(__file__).resolve().parents[1]
EDIT = "\n\nEDITED_BY_A_TEST = 1\n"      # a change of the syntax tree (a comment would not count)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The project's Python sources, copied: what the keys read."""
    copy = tmp_path_factory.mktemp("project")
    for pkg in keys.LOCAL_PACKAGES:
        if (ROOT / pkg).is_dir():
            shutil.copytree(ROOT / pkg, copy / pkg, ignore=lambda d, names: [
                n for n in names if n == "__pycache__" or not (n.endswith(".py") or (Path(d) / n).is_dir())
                or n == "bundles"])
    return copy


def chapter_keys(project: Path, bundle, tmp_path: Path, chapter: str = "02") -> list[str]:
    return [j.key for j in jobs.plan([chapter], bundle, jobs.BuildOptions(out=tmp_path, root=project))[chapter]]


def edited(project: Path, rel: str):
    """Context: `rel` in the copy with a statement added, put back afterwards."""
    class Edit:
        def __enter__(self):
            self.path = project / rel
            self.text = self.path.read_text(encoding="utf-8")
            self.path.write_text(self.text + EDIT, encoding="utf-8")

        def __exit__(self, *exc):
            self.path.write_text(self.text, encoding="utf-8")
    return Edit()


def test_a_scene_key_covers_the_scene_process_and_nothing_else():
    covered = keys.scene_modules("02", "onepass.scenes.ch02_attention")
    for needed in ("onepass.scenes.ch02_attention", "onepass.scenes.base", "onepass.film.run.render_job", "onepass.film.run.forkserver", "onepass.data.facts.ch02",
                   "onepass.voiceover.scripts.ch02"):
        assert keys.local_name(needed) in covered, needed
    for kit_or_plan in ("onepass.film.make.request", "onepass.film.make.build", "onepass.film.plan.jobs", "onepass.film.plan.keys", "onepass.film.kit.handout", "onepass.film.kit.slides",
                        "onepass.film.kit.notebook", "onepass.film.kit.publish", "onepass.film.kit.clips", "onepass.data.facts.ch05", "onepass.voiceover.scripts.ch05",
                        "onepass.scenes.ch05_encoder_decoder"):
        assert keys.local_name(kit_or_plan) not in covered, kit_or_plan
    assert all(p == keys.module_path(n) for n, p in covered.items())
    # names of the installed layout (onepass.<package>) are the same modules
    assert keys.scene_modules("02", "onepass.scenes.ch02_attention") == covered


@pytest.mark.parametrize("rel", ["film/kit/handout.py", "film/make/request.py", "data/facts/ch05.py"])
def test_editing_a_module_no_scene_process_imports_re_renders_nothing(project, tiny_bundle, tmp_path, rel):
    before = chapter_keys(project, tiny_bundle, tmp_path)
    with edited(project, rel):
        assert chapter_keys(project, tiny_bundle, tmp_path) == before


@pytest.mark.parametrize("rel", ["scenes/ch02_attention.py", "data/facts/ch02.py", "film/run/render_job.py"])
def test_editing_a_module_the_scene_process_imports_re_renders_every_scene(project, tiny_bundle, tmp_path, rel):
    before = chapter_keys(project, tiny_bundle, tmp_path)
    with edited(project, rel):
        after = chapter_keys(project, tiny_bundle, tmp_path)
    assert len(after) == len(before) and not set(after) & set(before)
