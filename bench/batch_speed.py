#!/usr/bin/env python3
"""Batch speed: the same small course on the local process pool and on a dask LocalCluster.

    .venv/bin/python bench/batch_speed.py                     # 2 prompts x chapters 02 05, tiny, low
    .venv/bin/python bench/batch_speed.py --workers 4 --weights random --chapters 02 04

In one run it
1. writes a manifest of two prompts x two chapters (low quality, --voice none) and extracts
   its bundles (not timed);
2. renders it from an empty output folder through film/make/batch.py on the local pool of N
   processes, then from another empty folder on a LocalCluster of N worker processes (one
   scene at a time each; `--cluster-first` for the other order, since the second path may find
   warmer file caches): wall time, scenes per minute, and the overhead ratio cluster / local.
   The cluster's start-up is timed apart and the ratio given with and without it, and the
   scene processes' CPU seconds (a fairer figure on a busy machine);
3. checks that both paths wrote the same files with the same decoded frames (ffmpeg framemd5).

Wall times depend on what else the machine does; the ratio, measured in the same run, is the
figure to compare.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import extract  # noqa: E402
from onepass.film.make import batch  # noqa: E402
from onepass.film.run import executors  # noqa: E402
from onepass.film.run.cluster import DaskExecutor  # noqa: E402
from onepass.film.run.runner import default_jobs  # noqa: E402

PROMPTS = ("The cat sat on the", "The capital of Pakistan is")


def framemd5(path: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:v:0", "-f", "framemd5", "-"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line and not line.startswith("#")]


def manifest(folder: Path, out: str, chapters: list[str], weights: str) -> Path:
    text = "".join(f'[[job]]\nprompt = "{p}"\nchapters = {chapters!r}\nquality = "low"\nweights = "{weights}"\n'
                   f'voice = "none"\nout = "{out}"\n\n' for p in PROMPTS).replace("'", '"')
    path = folder / f"{out}.toml"
    path.write_text(text)
    return path


def run(label: str, jobs, executor) -> tuple[float, list]:
    t0 = time.perf_counter()
    reports = batch.run(jobs, executor=executor)
    wall = time.perf_counter() - t0
    failed = [r for r in reports if r.error]
    if failed:
        sys.exit(f"{label}: {failed[0].job.label} failed: {failed[0].error}")
    return wall, reports


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=default_jobs(), help="processes / cluster workers (default: cores)")
    p.add_argument("--weights", default="tiny", choices=("tiny", "random"))
    p.add_argument("--chapters", nargs=2, default=["02", "05"])
    p.add_argument("--cluster-first", action="store_true", help="render on the cluster first, then locally")
    a = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="onepass-batch-bench-"))    # removed when the frames agree
    measure(tmp, a)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def measure(tmp: Path, a: argparse.Namespace):
    for prompt in PROMPTS:
        extract.extract(prompt, a.weights, log=lambda m: None)
    local_jobs = batch.load_manifest(manifest(tmp, "local", a.chapters, a.weights))
    cluster_jobs = batch.load_manifest(manifest(tmp, "cluster", a.chapters, a.weights))

    def local():
        with executors.LocalExecutor(a.workers) as ex:
            return run("local pool", local_jobs, ex)

    def cluster():
        t0 = time.perf_counter()
        with DaskExecutor(f"local:{a.workers}") as ex:
            startup = time.perf_counter() - t0
            return (*run("cluster", cluster_jobs, ex), startup)

    if a.cluster_first:           # the other order: the second path may find warmer file caches
        cluster_wall, cluster_reports, startup = cluster()
        local_wall, local_reports = local()
    else:
        local_wall, local_reports = local()
        cluster_wall, cluster_reports, startup = cluster()

    scenes = sum(r.rendered for r in local_reports)
    assert scenes == sum(r.rendered for r in cluster_reports), "both paths render every scene"
    print(f"batch: {len(PROMPTS)} prompts x chapters {' '.join(a.chapters)}, low quality, --weights {a.weights}, "
          f"--voice none: {scenes} scenes, {a.workers} workers, {'cluster' if a.cluster_first else 'local'} first")
    print(f"{'path':<28}{'wall':>10}{'scenes/min':>12}")
    print(f"{'local process pool':<28}{local_wall:>9.1f}s{60 * scenes / local_wall:>12.2f}")
    print(f"{'LocalCluster':<28}{cluster_wall:>9.1f}s{60 * scenes / cluster_wall:>12.2f}")
    print(f"{'LocalCluster + start-up':<28}{cluster_wall + startup:>9.1f}s"
          f"{60 * scenes / (cluster_wall + startup):>12.2f}")
    print(f"overhead ratio cluster / local: {cluster_wall / local_wall:.3f} "
          f"({(cluster_wall + startup) / local_wall:.3f} with the cluster's {startup:.1f} s start-up)")

    cpu = {}
    for path in ("local", "cluster"):       # CPU seconds of the scene processes, from their cache records
        records = [json.loads(f.read_text()) for f in (tmp / path).glob("*/*/.scenes/*.json")
                   if f.name.count(".") == 2 and not f.name.endswith((".cues.json", ".join.json"))]
        cpu[path] = sum(r.get("render_cpu", 0.0) for r in records)
    print(f"scene CPU seconds: local {cpu['local']:.1f}, cluster {cpu['cluster']:.1f}, "
          f"ratio {cpu['cluster'] / cpu['local']:.3f}")

    same = 0
    for lr, cr in zip(local_reports, cluster_reports):
        mp4s = sorted(p for p in lr.files if p.suffix == ".mp4")
        other = sorted(p for p in cr.files if p.suffix == ".mp4")
        assert [p.name for p in mp4s] == [p.name for p in other], "the same files"
        for x, y in zip(mp4s, other):
            if framemd5(x) != framemd5(y):
                parts = [f"{p.name}: {sum(u != v for u, v in zip(framemd5(p), framemd5(q)))} frames differ"
                         for p, q in zip(sorted((x.parent / ".scenes").glob(x.stem + "-*.mp4")),
                                         sorted((y.parent / ".scenes").glob(y.stem + "-*.mp4")))]
                sys.exit(f"frames differ: {x} vs {y} (kept); scenes: {'; '.join(parts)}")
            same += 1
    print(f"identical decoded frames: {same} of {same} chapter MP4s (framemd5)")


if __name__ == "__main__":
    sys.exit(main())
