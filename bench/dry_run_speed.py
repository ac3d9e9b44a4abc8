#!/usr/bin/env python3
"""Seconds per scene dry run (what the tests spend most of their time on), with manim's own
mobject copies and plays and with engine/'s, measured in one process.

    .venv/bin/python bench/dry_run_speed.py                       # the default scenes, English
    .venv/bin/python bench/dry_run_speed.py --lang ur --scenes 02/Projections,02/Scores

Each scene of the list (default: two or three from each of chapters 00-06) is dry-run as the
tests run it (engine/dry_run.py: every play skipped to its end, nothing drawn, nothing written),
against the tiny random model's bundle, with the silent voice. Labels are built once per
process as render processes build them (scenes/text.py's text cache, no shelf): a first, cold
pass builds them and is reported apart; then each scene runs --repeat times in each variant,
alternating, and the fastest run of each counts:

  manim    dry_run(faster=False, quick=False): manim's own Mobject.__deepcopy__, get_family,
           subpaths and skipped plays
  copies   manim's own but Mobject.__deepcopy__ (engine/copies.py faster_copies())
  faster   engine/frames.py faster_manim() (the three above), manim's skipped plays
  quick    dry_run() as the tests run it: faster, and engine/dry_run.py quick_plays() (no
           starting copy where a Transform ends on its target, no moving/static split)

Prints seconds per scene per variant, and the ratios of each to manim over the whole list.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import extract  # noqa: E402
from onepass.engine.copies import faster_copies  # noqa: E402
from onepass.engine.dry_run import dry_run  # noqa: E402
from onepass.scenes.base import SceneInputs  # noqa: E402
from onepass.scenes.registry import scenes_of  # noqa: E402
from onepass.scenes.text import enable_text_cache  # noqa: E402

SCENES = ("00/Prompt,00/Merges,01/Lookup,01/Positions,02/Projections,02/Scores,02/Mixing,"
          "03/Heads,03/Mlp,04/Softmax,04/Pick,05/MaskOff,05/Towers,06/Loop,06/Cache")
VARIANTS = ("manim", "copies", "faster", "quick")


def run_once(inputs, chapter: str, name: str, media: str, variant: str) -> float:
    cls = {c.__name__: c for c in scenes_of(chapter)}[name]
    gc.collect()
    with dry_run(media, faster=variant in ("faster", "quick"), quick=variant == "quick"), \
            (faster_copies() if variant == "copies" else contextlib.nullcontext()):
        start = time.perf_counter()
        scene = cls(inputs)
        scene.render()
        took = time.perf_counter() - start
    del scene
    return took


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenes", default=SCENES, help="chapter/Scene, comma-separated")
    p.add_argument("--lang", default="en")
    p.add_argument("--repeat", type=int, default=2, help="runs of each scene in each variant")
    a = p.parse_args(argv)
    scenes = [tuple(s.split("/")) for s in a.scenes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="onepass-dry-run-speed-"))
    bundle = extract.extract("The cat sat on the", "tiny", root=work / "bundles", log=lambda m: None)
    inputs = SceneInputs(Path(bundle.path), lang=a.lang)
    media = str(work / "media")
    enable_text_cache(True)
    try:
        print(f"{'scene':18s} {'cold':>7s} " + " ".join(f"{v:>7s}" for v in VARIANTS)
              + "   " + " ".join(f"{v + '/manim':>12s}" for v in VARIANTS[1:]), flush=True)
        totals = dict.fromkeys(VARIANTS, 0.0)
        for chapter, name in scenes:
            cold = run_once(inputs, chapter, name, media, "manim")      # builds the scene's labels
            best = {v: float("inf") for v in VARIANTS}
            for _ in range(a.repeat):
                for v in VARIANTS:
                    best[v] = min(best[v], run_once(inputs, chapter, name, media, v))
            for v in VARIANTS:
                totals[v] += best[v]
            print(f"{chapter}/{name:15s} {cold:7.2f} " + " ".join(f"{best[v]:7.2f}" for v in VARIANTS)
                  + "   " + " ".join(f"{best[v] / best['manim']:12.2f}" for v in VARIANTS[1:]), flush=True)
        print(f"{'total':18s} {'':7s} " + " ".join(f"{totals[v]:7.2f}" for v in VARIANTS)
              + "   " + " ".join(f"{totals[v] / totals['manim']:12.2f}" for v in VARIANTS[1:]))
    finally:
        enable_text_cache(False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
