#!/usr/bin/env python3
"""Every play of every scene ends where manim's own skipped play ends: the check to run after a
change to engine/dry_run.py's quick plays or to engine/frames.py's faster methods.

    .venv/bin/python bench/quick_plays_check.py                    # chapters 00-07, three cases
    .venv/bin/python bench/quick_plays_check.py --chapters 02,05

Each scene is dry-run twice, `dry_run(quick=False)` (manim's skipped plays) and `dry_run()` (the
quick plays the tests and benches use), against the tiny random GPT-2 in English and a tiny model
of SmolLM2's architecture in Spanish and Urdu. After every play the points and colours of every
mobject on screen are hashed (-0.0 counted as 0.0); the two runs must give the same list of
hashes and the same scene time. Prints each scene that differs and the play where it first does;
exits 1 if any does. Takes a few minutes (two dry runs of some ninety scenes).
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from manim import Scene  # noqa: E402

from onepass.data import extract  # noqa: E402
from onepass.engine.dry_run import dry_run  # noqa: E402
from onepass.scenes.base import SceneInputs  # noqa: E402
from onepass.scenes.registry import chapters, scenes_of  # noqa: E402

DRAWN = ("points", "fill_rgbas", "stroke_rgbas", "stroke_width", "background_stroke_rgbas")


def digest(scene: Scene) -> str:
    """The points and colours of every mobject on screen, family by family."""
    h = hashlib.sha256()
    for top in scene.mobjects:
        for m in top.get_family():
            h.update(type(m).__name__.encode())
            for name in DRAWN:
                h.update((np.asarray(getattr(m, name, 0), dtype=float) + 0.0).tobytes())
    return h.hexdigest()


def ends(cls, inputs: SceneInputs, quick: bool) -> list:
    """The digest after each play of the scene, then its time."""
    seen, play = [], Scene.play

    def recorded(self, *args, **kwargs):
        out = play(self, *args, **kwargs)
        seen.append(digest(self))
        return out
    Scene.play = recorded
    try:
        with dry_run(quick=quick):
            scene = cls(inputs)
            scene.render()
    finally:
        Scene.play = play
    return seen + [("time", scene.renderer.time)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chapters", default=",".join(chapters()), help="comma-separated (default: all)")
    args = ap.parse_args(argv)
    root = tempfile.mkdtemp(prefix="quick-plays-")
    prompt = "The cat sat on the"
    gpt2 = extract.extract(prompt, "tiny", root=root, log=lambda m: None)
    llama = extract.extract(prompt, "tiny", model="smollm2-135m-instruct", root=root, log=lambda m: None)
    differ = compared = 0
    for model, lang, bundle in (("gpt2", "en", gpt2), ("smollm2-shaped", "es", llama), ("smollm2-shaped", "ur", llama)):
        for chapter in args.chapters.split(","):
            for cls in scenes_of(chapter):
                inputs = SceneInputs(Path(bundle.path), lang=lang)
                manims, quick = ends(cls, inputs, False), ends(cls, inputs, True)
                compared += 1
                if manims != quick:
                    differ += 1
                    at = next((i for i, (a, b) in enumerate(zip(manims, quick)) if a != b), "the count of plays")
                    print(f"differs: {model} {lang} chapter {chapter} {cls.__name__}, play {at}", flush=True)
    print(f"{compared} scenes compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
