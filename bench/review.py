#!/usr/bin/env python3
"""Review a rendered chapter the way a viewer sees it: a contact sheet and a stills report.

    .venv/bin/python bench/review.py out/<folder>/low/ch04-the-vote.mp4 [more.mp4 ...]
    make review CHAPTER=04 [WEIGHTS=peaked] [VOICE=espeak] [PROMPT="..."]   # renders first

For each MP4 it writes, beside a folder of your choice (default /tmp/onepass-review/):
* `<name>-sheet.png`: a frame every --every seconds (default 4), tiled 4 across, each stamped
  with its time, so a whole chapter can be looked at in one picture;
* a line of the stills report: runtime, share of it spent in still stretches of 4 s or more
  (ffmpeg freezedetect, noise 0.001, the film's review rule) and the longest still.
`--json` prints the report as JSON too; the exit status is 0 whatever the figures are (a
review tool, not a gate).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

STILL_MIN = 4.0          # a still shorter than this is a viewer taking in a picture, not dead air
NOISE = 0.001            # freezedetect's noise tolerance (differences below it count as still)
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"


def duration(path: Path) -> float:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                          str(path)], capture_output=True, text=True, check=True).stdout
    return float(out.strip())


def stills(path: Path, min_s: float = STILL_MIN) -> list[tuple[float, float]]:
    """[(start, end)] of every stretch of min_s seconds or more in which the picture does not change."""
    log = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-i", str(path), "-map", "0:v",
                          "-vf", f"freezedetect=n={NOISE}:d={min_s}", "-f", "null", "-"],
                         capture_output=True, text=True).stderr
    starts = [float(x) for x in re.findall(r"freeze_start: ([\d.]+)", log)]
    ends = [float(x) for x in re.findall(r"freeze_end: ([\d.]+)", log)]
    total = duration(path)
    ends += [total] * (len(starts) - len(ends))      # a still running to the end has no freeze_end
    return list(zip(starts, ends))


def report(path: Path) -> dict:
    total = duration(path)
    spans = stills(path)
    still = sum(b - a for a, b in spans)
    longest = max((b - a for a, b in spans), default=0.0)
    return {"file": str(path), "runtime": round(total, 1), "still_seconds": round(still, 1),
            "still_share": round(still / total, 3) if total else 0.0, "longest": round(longest, 1),
            "stills": [[round(a, 1), round(b, 1)] for a, b in spans]}


def contact_sheet(path: Path, png: Path, every: float = 4.0, across: int = 4):
    """Frames every `every` seconds, stamped with their time, tiled `across` wide."""
    n = int(duration(path) // every) + 1
    rows = -(-n // across)
    stamp = (f"drawtext=fontfile={FONT}:text='%{{pts\\:hms}}':x=8:y=8:fontsize=22:fontcolor=white:"
             "box=1:boxcolor=black@0.6")
    # the first frame at or after each multiple of `every`, stamped with its own time (fps=1/every
    # kept a window's last frame but stamped the window's centre: up to every/2 s off)
    pick = f"select='isnan(prev_selected_t)+gte(t-prev_selected_t\\,{every})'"
    vf = f"{pick},scale=427:240,{stamp},tile={across}x{rows}:padding=4:color=0x333333"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(path), "-vf", vf, "-frames:v", "1",
                    str(png)], check=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("videos", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=Path("/tmp/onepass-review"))
    p.add_argument("--every", type=float, default=4.0, help="seconds between frames on the sheet")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'chapter':40} {'runtime':>8} {'in stills ≥4 s':>15} {'longest':>8}  sheet")
    for video in a.videos:
        r = report(video)
        sheet = a.out / f"{video.stem}-sheet.png"
        contact_sheet(video, sheet, a.every)
        r["sheet"] = str(sheet)
        rows.append(r)
        print(f"{video.stem[:40]:40} {r['runtime']:>7.0f}s {100 * r['still_share']:>14.0f}% {r['longest']:>7.1f}s  {sheet}")
    if a.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
