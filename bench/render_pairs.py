#!/usr/bin/env python3
"""Two identical renders started 0.3 s apart, N times in a loop (issue 51 item 2).

    .venv/bin/python bench/render_pairs.py                    # 50 pairs, chapter 00, tiny weights
    .venv/bin/python bench/render_pairs.py --pairs 10 --gap 0.1 --out /tmp/me/pairs

The race it looks for is in the writing of a render's outputs (the film, the descriptions track,
the transcript), not in scene rendering: one render fills the scene cache first, then every pair
runs the same command line (`render.py --chapter 00 --weights tiny --voice none --quality low
--out DIR`) twice, the second started `--gap` seconds after the first, into the same folder. For
each pair it checks both exit 0, no `.part` file is left, and every output file (all but
`.scenes/` and the lock) has the sha256 that a render alone then gives it (one lone render after
each pair: a checkout others edit meanwhile changes the words a transcript holds, so the files
are compared with a render of the same code, not with the first pair's). It prints one line per
pair and a summary: pairs run, failed renders, pairs whose files differ, wall time per pair. The
tests run 4 pairs (tests/test_reliability_round5.py); docs/RELIABILITY.md gives this loop's result.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command(out: Path) -> list[str]:
    return [sys.executable, str(ROOT / "render.py"), "--chapter", "00", "--weights", "tiny",
            "--voice", "none", "--quality", "low", "--out", str(out)]


def digests(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*"))
            if p.is_file() and ".scenes" not in p.parts and p.name != ".onepass.lock"}


def checkout() -> str:
    """A fingerprint of the working tree's code and words (HEAD and every uncommitted change): a pair
    whose files differ while this changed met someone's edit, not a race."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    diff = subprocess.run(["git", "diff", "HEAD"], cwd=ROOT, capture_output=True).stdout
    new = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         capture_output=True).stdout.split(b"\0")
    h = hashlib.sha256(head.encode() + diff)
    for name in filter(None, new):
        h.update(name + (ROOT / name.decode()).read_bytes() if (ROOT / name.decode()).is_file() else name)
    return h.hexdigest()[:12]


def start(out: Path) -> subprocess.Popen:
    return subprocess.Popen(command(out), cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--gap", type=float, default=0.3, help="seconds between the two starts")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="render-pairs-"))
    first = subprocess.run(command(out), cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if first.returncode != 0:
        print(first.stderr[-2000:])
        return 1
    print(f"first render: {len(digests(out))} files in {out}")
    failed_runs = differing = edited = leftovers = 0
    times = []
    for n in range(1, args.pairs + 1):
        t0 = time.monotonic()
        tree = checkout()
        a = start(out)
        time.sleep(args.gap)
        b = start(out)
        codes = []
        for proc in (a, b):
            _, err = proc.communicate()
            codes.append(proc.returncode)
            if proc.returncode != 0:
                failed_runs += 1
                print(f"  pair {n}: exit {proc.returncode}: {err.strip().splitlines()[-1:]}")
        times.append(time.monotonic() - t0)
        got = digests(out)
        alone = subprocess.run(command(out), cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if alone.returncode != 0:
            failed_runs += 1
            print(f"  pair {n}: the lone render after it: exit {alone.returncode}")
        want = digests(out)
        same = got == want
        moved = checkout() != tree
        parts = [p.name for p in out.rglob("*") if ".part" in p.name]
        differing += not same and not moved
        edited += not same and moved
        leftovers += bool(parts)
        what = "identical" if same else ("differ (the checkout was edited meanwhile)" if moved else "DIFFER")
        names = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
        print(f"pair {n:2d}: exit {codes}, files {what}{': ' + ', '.join(names) if names else ''}"
              f"{', leftover ' + ', '.join(parts) if parts else ''}, {times[-1]:.1f} s", flush=True)
    print(f"\n{args.pairs} pairs ({2 * args.pairs} renders, {args.gap} s apart): {failed_runs} failed renders, "
          f"{differing} pairs with files differing from a lone render's ({len(want)} files, sha256; "
          f"{edited} more while the checkout was being edited), "
          f"{leftovers} pairs leaving a .part file; {sum(times) / len(times):.1f} s a pair "
          f"(min {min(times):.1f}, max {max(times):.1f})")
    return 0 if failed_runs == differing == leftovers == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
