#!/usr/bin/env python3
"""The described cut's picture: how long cutting a chapter takes with the film's x264 settings against
the 'fast' preset the cut used before (film/kit/describe.py cut_video, cut_options).

    .venv/bin/python bench/cut_speed.py out/.../ch05-....mp4 [--holds 35] [--repeat 2]

For a rendered chapter it plans `--holds` holds spread evenly over the film (each 3 s, the length of a
short description), then cuts the picture `--repeat` times with each setting, alternating, and prints
per setting: CPU seconds (this process and x264's threads), wall seconds, the file's size, and its SSIM
against the same cut encoded losslessly (what the cut should show), as ffmpeg's ssim filter gives it.
Compare the ratios of one run: the machine's speed drifts between runs.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ssim(a: Path, b: Path) -> float:
    """ffmpeg's SSIM (All) of `a` against `b`, frame by frame."""
    err = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-i", str(a), "-i", str(b), "-lavfi", "ssim",
                          "-f", "null", "-"], capture_output=True, text=True).stderr
    return float(re.findall(r"All:([0-9.]+)", err)[-1])


def main() -> int:
    from onepass.film.kit import describe
    from onepass.voiceover.media import frame_rate, video_facts, video_height
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("chapter", type=Path, help="a rendered chapter's MP4")
    p.add_argument("--holds", type=int, default=35, help="holds spread over the film (default 35)")
    p.add_argument("--repeat", type=int, default=2, help="cuts per setting, alternating (default 2)")
    a = p.parse_args()
    frames, _ = video_facts(a.chapter)
    rate = Fraction(frame_rate(a.chapter)).limit_denominator(1001)
    height = video_height(a.chapter)
    length = max(1, int(round(3 * rate)))
    holds = [describe.Hold(float(Fraction(k) / rate), k, length, None, [], [], 3.0, [])
             for k in (int(frames * (i + 0.5) / a.holds) for i in range(a.holds))]
    settings = {"before: x264 'fast'": {"crf": describe.cut_options(height)["crf"], "preset": "fast"},
                "now: the film's settings": describe.cut_options(height)}
    print(f"{a.chapter.name}: {frames} frames at {float(rate):g} fps, {height}p; {len(holds)} holds of "
          f"{length} frames: {frames + len(holds) * length} frames cut")
    with tempfile.TemporaryDirectory() as work:
        reference = Path(work) / "lossless.mp4"
        describe.cut_video(a.chapter, reference, holds, rate, height, {"qp": "0", "preset": "ultrafast"})
        rows = {name: [] for name in settings}
        for r in range(a.repeat):
            for name, options in settings.items():
                out = Path(work) / f"cut-{r}-{len(rows[name])}-{abs(hash(name))}.mp4"
                c0, w0 = time.process_time(), time.perf_counter()
                describe.cut_video(a.chapter, out, holds, rate, height, options)
                rows[name].append((time.process_time() - c0, time.perf_counter() - w0, out))
        base = min(c for c, _, _ in rows["before: x264 'fast'"])
        print(f"{'setting':28} {'CPU s (each run)':>22} {'wall s':>16} {'MB':>7} {'SSIM':>8} {'CPU ratio':>9}")
        for name, runs in rows.items():
            cpu = " / ".join(f"{c:.1f}" for c, _, _ in runs)
            wall = " / ".join(f"{w:.1f}" for _, w, _ in runs)
            out = runs[-1][2]
            print(f"{name:28} {cpu:>22} {wall:>16} {out.stat().st_size / 1e6:7.2f} {ssim(out, reference):8.4f} "
                  f"{min(c for c, _, _ in runs) / base:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
