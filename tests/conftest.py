"""Shared fixtures: bundles extracted from the tiny random GPT-2 (seconds, no download)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data import extract  # noqa: E402


@pytest.fixture(scope="session")
def bundle_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bundles")


@pytest.fixture(scope="session")
def tiny_bundle(bundle_root):
    """'The cat sat on the' through the 2-layer random model."""
    return extract.extract("The cat sat on the", "tiny", root=bundle_root, log=lambda m: None)


@pytest.fixture(scope="session")
def tiny_long_bundle(bundle_root):
    """A ~30-token prompt through the tiny model: exercises windows and wrapping."""
    prompt = ("In the quiet village by the river, the old baker woke before dawn to knead the bread "
              "that everyone would eat for breakfast")
    return extract.extract(prompt, "tiny", root=bundle_root, log=lambda m: None)


@pytest.fixture(scope="session")
def tiny_peaked_bundle(bundle_root):
    """'The cat sat on the' through the 2-layer peaked model: predictions as sharp as a trained
    model's or sharper (top-1 near 100%, a top-p set of 1 token, the sample at rank 1)."""
    return extract.extract("The cat sat on the", "tiny-peaked", root=bundle_root, log=lambda m: None)


@pytest.fixture(scope="session")
def saved_weights(tmp_path_factory):
    """A weights directory as a user with real GPT-2 has one: save_pretrained of a model.

    Returns a function: saved_weights("tiny" | "tiny-peaked") -> the directory (saved once)."""
    saved: dict[str, Path] = {}

    def save(name: str) -> Path:
        if name not in saved:
            directory = tmp_path_factory.mktemp(f"weights-{name}")
            extract.synthetic_model(name).save_pretrained(directory)
            saved[name] = directory
        return saved[name]
    return save


@pytest.fixture(scope="session")
def real_weights():
    found = extract.find_real_weights()
    if found is None:
        pytest.skip(f"real GPT-2 weights not found (set {extract.WEIGHTS_ENV}=DIR or cache 'gpt2' with transformers)")
    return found


def render_scene_frames(bundle, chapter: str, scene: str, tmp_path: Path):
    """Render one scene at the lowest quality; returns (mp4 path, cues list)."""
    from film.render_job import render_scene  # imports manim: only for the tests that render
    mp4, cues = tmp_path / f"{scene}.mp4", tmp_path / f"{scene}.json"
    render_scene(bundle.path, chapter, scene, "low", mp4, cues)
    return mp4, json.loads(cues.read_text(encoding="utf-8"))


_MEDIA: list[str] = []


def _test_media_dir() -> str:
    """One manim media folder per test process: parallel test runs never share its text cache."""
    if not _MEDIA:
        import tempfile
        _MEDIA.append(tempfile.mkdtemp(prefix="onepass-test-media-"))
    return _MEDIA[0]


def build_scene(bundle, chapter: str, scene: str, draw: bool = True):
    """Run a scene's construct() without writing frames (manim dry run); returns the scene.

    draw=False also skips drawing the frames of each animation (each play jumps to its end
    state; scene time and the final mobjects are the same): several times faster.

    `scene.built_texts` lists the string of every Text the scene built (including the targets
    of transforms), `scene.shown_texts` those put on screen with add(), `scene.cues` the cues.
    """
    from unittest import mock

    from manim import Text, tempconfig
    built: list[str] = []
    original_init = Text.__init__

    def recording_init(self, text, *args, **kwargs):
        built.append(text)
        original_init(self, text, *args, **kwargs)
    from scenes.base import SceneInputs
    from scenes.registry import scenes_of
    inputs = SceneInputs(Path(bundle.path))       # no cues file; the silent voice
    cls = {c.__name__: c for c in scenes_of(chapter)}[scene]
    settings = {"dry_run": True, "disable_caching": True, "quality": "low_quality", "progress_bar": "none",
                "verbosity": "ERROR", "media_dir": _test_media_dir()}
    if not draw:
        settings["from_animation_number"] = 10 ** 9   # every play counts as 'before the first one drawn'
    with tempconfig(settings):
        with mock.patch.object(Text, "__init__", recording_init):
            instance = cls(inputs)
            instance.render()
    instance.built_texts = built
    return instance


@pytest.fixture(scope="module")
def built(tiny_bundle):
    """built(chapter, scene): that scene dry-run (draw=False) against the tiny bundle, once per
    test module."""
    cache = {}

    def get(chapter, name):
        if (chapter, name) not in cache:
            cache[(chapter, name)] = build_scene(tiny_bundle, chapter, name, draw=False)
        return cache[(chapter, name)]
    return get
