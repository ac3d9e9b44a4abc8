#!/usr/bin/env python3
"""The GPT-2 family's extraction cost: what `render.py --model M --weights random --inspect` takes
for every size, on this machine.

    .venv/bin/python bench/family.py                              # every size, random weights
    .venv/bin/python bench/family.py --models distilgpt2 gpt2-xl --weights peaked

Each size runs in a process of its own (so its peak memory is its own): render.py's main with
`--inspect --json --model M --weights W`, extracting into a fresh bundle folder (never the
cache), as a user's first run does. One table, one row per model:

* parameters: onepass.data.flops.parameter_counts of the model's architecture (extraction checks it
  against torch's own count of the model it ran);
* extraction: seconds of that run (model built from seeded random numbers, the forward pass, the
  logit lens, 4 generated tokens, the checks, the bundle written); process: the same with Python
  and the libraries starting;
* peak RSS: the process's maximum resident memory (getrusage), what must fit in RAM;
* bundle: the bundle's size on disk.

The machine matters: say what it is (cores, RAM) with the numbers. A size that fails (memory,
time) is reported as such; the others still run.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import models  # noqa: E402
from onepass.data.flops import Shape, parameter_counts  # noqa: E402


def child(model: str, weights: str, root: Path) -> dict:
    """One size in this process: render.py --inspect through its main, the bundle under `root`."""
    from onepass.data import extract
    from onepass import cli as render
    extract.extract = functools.partial(extract.extract, root=root, force=True)   # a first run: no cache
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = render.main(["--inspect", "--json", "--model", model, "--weights", weights])
    seconds = time.perf_counter() - t0
    if rc != 0:
        raise SystemExit(f"render.py --inspect --model {model} failed ({rc}): {err.getvalue()[-2000:]}")
    report = json.loads(out.getvalue())
    bundle = Path(report["bundle"])
    return {"seconds": seconds, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "bundle_bytes": sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file()),
            "model": report["model"], "parameters": report["parameters"], "flops": report["flops_total"]}


def measure(model: str, weights: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="onepass-family-") as root:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child", model, "--weights", weights, "--root", root],
                              capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:200], "process": wall}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]), process=wall)


def short(n: int) -> str:
    """The issue's way of writing a parameter count: 82M, 124M ... 1.56B."""
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def machine() -> str:
    try:
        mem = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal:"))
        ram = f", {mem / 2**20:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        ram = ""
    return f"{os.cpu_count()} cores{ram}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(models.FAMILY), choices=list(models.FAMILY))
    p.add_argument("--weights", default="random", help="synthetic weights to extract (default random)")
    p.add_argument("--json", action="store_true", help="also print every row as one JSON object")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.weights, args.root)))
        return 0

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"render.py --inspect --model M --weights {args.weights}, a fresh bundle each; {machine()}, "
          f"load average {load:.1f} at the start")
    print("| model | layers | heads | width | parameters | extraction | process | peak RSS | bundle |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows, failed = [], False
    for name in args.models:
        m = models.get(name)
        params = parameter_counts(Shape.from_config(m.config()), m.n_positions)["total"]
        r = measure(name, args.weights)
        rows.append(dict(r, name=name, computed_parameters=params))
        head = f"| {name} | {m.n_layer} | {m.n_head} | {m.n_embd} | {params:,} ({short(params)}) |"
        if "error" in r:
            failed = True
            print(f"{head} failed: {r['error']} | {r['process']:.0f} s | | |", flush=True)
            continue
        assert r["parameters"] == params and r["model"] == name, r    # the bundle is the model asked for
        print(f"{head} {r['seconds']:.1f} s | {r['process']:.1f} s | {r['maxrss_kb'] / 2**20:.2f} GiB | "
              f"{r['bundle_bytes'] / 2**20:.1f} MiB |", flush=True)
    if args.json:
        print(json.dumps(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
