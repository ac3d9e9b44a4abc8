#!/usr/bin/env python3
"""Rendering speed: how long a chapter takes to render, against how long it plays.

    .venv/bin/python bench/render_speed.py            # (what `make bench` runs)
    .venv/bin/python bench/render_speed.py --qualities low --jobs 1 --repeat 1

In one run it
1. renders chapter 02 (from a --weights random bundle) through `render.py` at low (480p15) and
   high (1080p60) quality, from an empty output folder (and an empty label shelf before the first
   quality: the low run builds every label, the high run loads them back), and prints per scene: render wall
   time, CPU time, video seconds, render-time factor (wall / video seconds) and totals. The
   chapter's wall time is the whole command: extraction cache lookup, scene processes
   (--jobs in parallel), the join, captions and thumbnail;
2. re-runs the low-quality command with nothing changed and prints its time as a fraction of
   the first run (the scene cache at work);
3. renders two small scenes that draw the same Σ FLOPs meter running up twice and a 5 x 5
   number grid changing its values: once the stock manim way (a DecimalNumber driven by an
   updater, DecimalNumbers in the grid) and once with our widgets (GlyphCounter meter,
   NumberGrid), each --repeat times in its own process, and prints the speed-up (the best
   stock time over the best of ours);
4. checks the joined MP4: its frame count equals the sum of the scenes' (no gap, no doubled
   frame at a join), and its length is the sum of theirs within one frame.

Wall times depend on what else the machine is doing (other renders, tests); the CPU columns
and the ratios measured in the same run are the figures to compare across runs.
"""
from __future__ import annotations

import argparse
import json
import resource
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.film.plan import jobs as jobs_of  # noqa: E402
from onepass.film.make import request  # noqa: E402
from onepass.film.run.runner import default_jobs  # noqa: E402
from onepass.scenes.registry import chapters  # noqa: E402
from onepass.voiceover import media as probe  # noqa: E402  (ffprobe facts; `media` names folders below)

TARGETS = {"low": 1.0, "high": 4.0}     # render-time factor ceilings from issue 6
# issue 24's ceilings: wall / video at 480p15, wall and CPU / video at 1080p60 (2 cores, --jobs 2)
TARGETS_24 = {"low": {"wall": 0.1}, "high": {"wall": 0.5, "cpu": 1.0}}
# film/run/render_job.py's TIMES_ENV (not imported: it imports manim): the file each scene process
# appends its CPU split to
TIMES_ENV = "ONEPASS_FRAME_TIMES"
# data/home.py's LABELS_ENV: the bench's scene processes keep their labels in a folder of its
# own, emptied at the start, so the first chapter run builds every label (as on a new machine) and
# the later ones load them back (as a lecturer's second render does)
LABELS_ENV = "ONEPASS_LABEL_CACHE"
SPEEDUP_TARGET = 5.0                    # issue 24 (issue 6 asked for 3)
PICTURE_TARGETS = {"ssim": 0.99, "size": 1.5}   # issue 24: the published MP4 against one rendered before
CACHE_TARGET = 0.10
QUALITY_NAMES = {name: what for name, (_, what) in request.QUALITIES.items()}


# ---------------------------------------------------------------------------------------
# Widget comparison scenes (run in a child process: `render_speed.py --child stock|ours`)

METER_STEPS = (24_379_392, 70_963_200)      # two payments of the meter (any large totals do)
GRID_SEED = 7


def comparison_scene(kind: str):
    # deferred: manim takes seconds to import and only the child processes draw
    import numpy as np
    from manim import (DOWN, LEFT, RIGHT, UR, DecimalNumber, FadeIn, Rectangle, Scene, Text, Transform, VGroup,
                       ValueTracker, linear)

    from onepass.scenes import style as S
    from onepass.scenes.meter import CountTo, FlopsMeter
    from onepass.scenes.widgets import NumberGrid

    rng = np.random.default_rng(GRID_SEED)
    before, after = rng.normal(0, 1.5, (5, 5)), rng.normal(0, 1.5, (5, 5))

    class Stock(Scene):
        """The meter and the grid as the manim docs would write them."""

        def grid(self, values):
            cells, numbers = VGroup(), VGroup()
            for r in range(5):
                for c in range(5):
                    cell = Rectangle(width=1.15, height=0.5, stroke_width=1, stroke_color=S.BACKGROUND,
                                     fill_color=S.diverging(values[r, c], 3.0), fill_opacity=1)
                    cell.move_to([c * 1.15, -r * 0.5, 0])
                    n = DecimalNumber(values[r, c], num_decimal_places=2, font_size=S.NUMBER_SIZE, color=S.INK)
                    n.move_to(cell).align_to(cell, RIGHT).shift(LEFT * 0.05)
                    cells.add(cell)
                    numbers.add(n)
            return VGroup(cells, numbers).move_to(DOWN * 0.4)

        def construct(self):
            title = Text("Σ FLOPs", font=S.SANS, font_size=S.SMALL, color=S.MUTED)
            total = ValueTracker(0)
            meter = DecimalNumber(0, num_decimal_places=0, group_with_commas=True, font_size=28, color=S.FLOPS)
            meter.add_updater(lambda m: m.set_value(total.get_value()))
            VGroup(title, meter).arrange(RIGHT, buff=0.2).to_corner(UR, buff=S.MARGIN)
            self.add(title, meter)
            g = self.grid(before)
            self.play(FadeIn(g), run_time=1.0)
            self.play(total.animate.set_value(METER_STEPS[0]), run_time=3.0, rate_func=linear)
            g2 = self.grid(after)
            self.play(*[Transform(a, b) for a, b in zip(g[1], g2[1])],
                      *[Transform(a, b) for a, b in zip(g[0], g2[0])], run_time=1.5)
            self.play(total.animate.set_value(METER_STEPS[1]), run_time=3.0, rate_func=linear)
            self.wait(1.0)

    class Ours(Scene):
        """The same picture with the film's widgets."""

        def grid(self, values):
            return NumberGrid(values, vmax=3.0).move_to(DOWN * 0.4)

        def construct(self):
            meter = FlopsMeter(0, "", widest=max(METER_STEPS), title="Σ FLOPs").to_corner(UR, buff=S.MARGIN)
            self.add(meter)
            g = self.grid(before)
            self.play(FadeIn(g), run_time=1.0)
            self.add(meter)     # drawn last while it counts, as ChapterScene.play does
            self.play(CountTo(meter.counter, METER_STEPS[0], rate_func=linear), run_time=3.0)
            g2 = self.grid(after)
            self.play(*[Transform(g.values_mobs[k], g2.values_mobs[k]) for k in g.values_mobs],
                      *[Transform(g.cells[k], g2.cells[k]) for k in g.cells], run_time=1.5)
            self.add(meter)
            self.play(CountTo(meter.counter, METER_STEPS[1], rate_func=linear), run_time=3.0)
            self.wait(1.0)

    return {"stock": Stock, "ours": Ours}[kind]


def run_child(kind: str, quality: str, media: Path) -> dict:
    """Render one comparison scene here; report its render time (after a warm-up of the caches
    both idioms use: LaTeX SVGs for DecimalNumber, Pango SVGs for Text). Both idioms render the
    way a scene process does (film/run/render_job.py: its renderer, frame path and x264 settings), so
    the difference is the widgets'."""
    # deferred: manim is imported only in the child process that renders
    from manim import DecimalNumber, Text, tempconfig

    from onepass.film.run.render_job import ENCODER_OPTIONS, FilmRenderer, FrameTimes
    from onepass.film.make.request import QUALITIES
    from onepass.scenes import style as S
    media.mkdir(parents=True, exist_ok=True)
    cls = comparison_scene(kind)
    with tempconfig({**QUALITIES[quality][0], "media_dir": str(media), "disable_caching": True,
                     "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                     "output_file": f"bench-{kind}", "background_color": S.BACKGROUND,
                     "video_encoder_options": ENCODER_OPTIONS}):
        if kind == "stock":   # typeset every glyph once, so the timing is steady state, not first LaTeX run
            DecimalNumber(-1234567890.5, num_decimal_places=2, group_with_commas=True, font_size=28)
        else:                 # as in a render process (film/run/render_job.py), after its first number at each size
            from onepass.scenes.text import MonoGlyphs, enable_text_cache  # child process only (imports manim)
            from onepass.words import numbers as N
            enable_text_cache()
            Text("0123456789,.−", font=S.MONO)
            for size in (max(S.NUMBER_SIZE, S.SMALL), 28):   # the grid's numbers, the meter's digits
                MonoGlyphs.at(size)
            N.fmt_int(max(METER_STEPS))
        times = FrameTimes()
        wall0, cpu0, main0 = time.perf_counter(), time.process_time(), time.thread_time()
        scene = cls(renderer=FilmRenderer(times))
        scene.render()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        main = time.thread_time() - main0
        movie = Path(scene.renderer.file_writer.movie_file_path)
    frames, fps = probe.video_facts(movie)
    return {"kind": kind, "wall": wall, "cpu": cpu, "frames": frames, "seconds": frames / fps,
            "draw_cpu": times.draw, "convert_cpu": times.convert, "encode_cpu": cpu - main,
            "other_cpu": main - times.draw - times.convert}


# ---------------------------------------------------------------------------------------
# Encoder candidates: the same frames through each x264 setting (`--encoders`)

# (name, PyAV options): today's setting first (film/run/render_job.py's, before issue 24), then the
# candidates of issue 24. Every one encodes the same decoded frames of one scene.
ENCODER_CANDIDATES = (
    ("veryfast (before issue 24)", {"preset": "veryfast", "threads": "1"}),
    ("veryfast subme=0 (issue 24, first)", {"preset": "veryfast", "threads": "1", "x264-params": "subme=0"}),
    ("veryfast subme=0 trellis=0", {"preset": "veryfast", "threads": "1", "x264-params": "subme=0:trellis=0"}),
    ("veryfast subme=0 trellis=0 bframes=1 (issue 24, second)", {"preset": "veryfast", "threads": "1",
                                                                "x264-params": "subme=0:trellis=0:bframes=1"}),
    ("veryfast subme=0 trellis=0 bframes=0 rc-lookahead=3 (chosen)",
     {"preset": "veryfast", "threads": "1", "x264-params": "subme=0:trellis=0:bframes=0:rc-lookahead=3"}),
    ("veryfast subme=0 trellis=0 bframes=0", {"preset": "veryfast", "threads": "1",
                                              "x264-params": "subme=0:trellis=0:bframes=0"}),
    ("veryfast subme=0 trellis=0 no-mbtree", {"preset": "veryfast", "threads": "1",
                                              "x264-params": "subme=0:trellis=0:mbtree=0"}),
    ("veryfast sliced-threads=1 threads=2", {"preset": "veryfast", "threads": "2", "x264-params": "sliced-threads=1"}),
    ("veryfast tune=animation", {"preset": "veryfast", "tune": "animation", "threads": "1"}),
    ("veryfast tune=stillimage", {"preset": "veryfast", "tune": "stillimage", "threads": "1"}),
    ("superfast", {"preset": "superfast", "threads": "1"}),
    ("superfast crf=25", {"preset": "superfast", "crf": "25", "threads": "1"}),
    ("ultrafast", {"preset": "ultrafast", "threads": "1"}),
)


def encode_candidate(source: Path, options: dict, out: Path, limit: int = 0) -> dict:
    """Encode `source`'s frames (its first `limit`, 0: all; decoded on one thread) with `options`
    into `out`: the CPU of the encoder alone (its own threads included), and a hash of the packets
    it wrote."""
    import hashlib

    import av  # deferred: the bench's parent needs PyAV only here
    from fractions import Fraction
    h = hashlib.sha256()
    with av.open(str(source)) as inp, av.open(str(out), "w", format="mp4") as dst:
        vin = inp.streams.video[0]
        vin.thread_count = 1
        rate = Fraction(vin.average_rate)
        st = dst.add_stream("libx264", rate=rate, options=dict(options))
        st.pix_fmt, st.width, st.height = "yuv420p", vin.width, vin.height
        cpu, n = 0.0, 0
        for frame in inp.decode(vin):
            if limit and n == limit:
                break
            f = av.VideoFrame.from_ndarray(frame.to_ndarray(format="yuv420p"), format="yuv420p")
            f.pts, f.time_base = n, 1 / rate
            n += 1
            t0 = time.process_time()
            packets = st.encode(f)
            cpu += time.process_time() - t0
            for pkt in packets:
                h.update(bytes(pkt))
                dst.mux(pkt)
        t0 = time.process_time()
        packets = st.encode()
        cpu += time.process_time() - t0
        for pkt in packets:
            h.update(bytes(pkt))
            dst.mux(pkt)
    return {"cpu": cpu, "frames": n, "bytes": out.stat().st_size, "packets": h.hexdigest()}


def picture_against(video: Path, reference: Path) -> dict:
    """SSIM (all planes) and PSNR (average) of `video`'s frames against `reference`'s, frame by
    frame, from ffmpeg's own filters (their per-frame statistics, averaged here)."""
    import math
    import tempfile
    with tempfile.TemporaryDirectory(prefix="onepass-ssim-") as tmp:
        # ffmpeg runs in a folder of its own, the statistics files named plainly in the filter graph
        probe.run_ffmpeg(["-i", Path(video).resolve(), "-i", Path(reference).resolve(), "-lavfi",
                          "[0:v][1:v]ssim=stats_file=ssim.log;[0:v][1:v]psnr=stats_file=psnr.log", "-f", "null",
                          "-"], cwd=Path(tmp))
        ssim = [float(m.group(1)) for m in re.finditer(r"All:([0-9.]+)", (Path(tmp) / "ssim.log").read_text())]
        mse = [float(m.group(1)) for m in re.finditer(r"mse_avg:([0-9.]+)", (Path(tmp) / "psnr.log").read_text())]
    mean_mse = sum(mse) / max(len(mse), 1)
    return {"ssim": sum(ssim) / max(len(ssim), 1), "ssim_min": min(ssim, default=float("nan")),
            "psnr": 10 * math.log10(255 ** 2 / mean_mse) if mean_mse > 0 else float("inf"), "frames": len(ssim)}


def encoder_table(source: Path, work: Path, console, limit: int = 900) -> list[dict]:
    """Every ENCODER_CANDIDATES setting on `source`'s first `limit` frames: encoder CPU, size, and
    SSIM/PSNR against the first (today's) setting's encode; a setting with threads is run twice
    (the same packets both times?)."""
    from rich.table import Table  # the parent's report only
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (name, options) in enumerate(ENCODER_CANDIDATES):
        console.print(f"[dim]encoder candidate {name} …[/dim]")
        first = encode_candidate(source, options, work / f"cand{i}.mp4", limit)
        again = first if options.get("threads") == "1" else \
            encode_candidate(source, options, work / f"cand{i}-again.mp4", limit)
        rows.append({"name": name, "options": options, **first, "cpu": min(first["cpu"], again["cpu"]),
                     "same_packets": None if again is first else first["packets"] == again["packets"]})
    base = rows[0]
    for i, r in enumerate(rows):
        r.update(picture_against(work / f"cand{i}.mp4", work / "cand0.mp4") if i else
                 {"ssim": 1.0, "ssim_min": 1.0, "psnr": float("inf")})
    t = Table(title=f"x264 settings on the same {base['frames']} frames ({source.name}; encoder CPU)",
              title_justify="left")
    for col in ("setting", "CPU s", "ms/frame", "vs today", "size", "size vs today", "SSIM vs today",
                "PSNR dB", "same bytes twice"):
        t.add_column(col, justify="left" if col == "setting" else "right")
    for r in rows:
        t.add_row(r["name"], fmt_s(r["cpu"]), f"{1000 * r['cpu'] / r['frames']:.2f}", f"{r['cpu'] / base['cpu']:.2f}",
                  f"{r['bytes'] / 1e6:.2f} MB", f"{r['bytes'] / base['bytes']:.2f}",
                  f"{r['ssim']:.4f}", f"{r['psnr']:.1f}",
                  "-" if r["same_packets"] is None else "yes" if r["same_packets"] else "[red]no[/red]")
    console.print(t)
    return rows


# ---------------------------------------------------------------------------------------
# Measuring

def timed_cli(args: list[str], env: dict | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """render.py in a process of its own; CPU time includes the scene processes it waits for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "render.py"), *args], cwd=ROOT, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"render.py {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return wall, cpu, proc


def child_result(kind: str, quality: str, media: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", kind, "--child-quality", quality,
                           "--child-media", str(media)], cwd=ROOT, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"comparison scene {kind!r} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def fmt_s(x: float) -> str:
    return f"{x:,.1f}"


def factor_cell(f: float, target: float | None) -> str:
    if target is None:
        return f"{f:.2f}"
    return f"[{'green' if f <= target else 'red'}]{f:.2f}[/]"


def chapter_run(chapter: str, bundle, quality: str, out: Path, jobs: int, console) -> dict:
    """Render `chapter` from an empty output folder, then again unchanged; collect the figures."""
    dest = jobs_of.destination(out, bundle, quality)
    shutil.rmtree(dest, ignore_errors=True)
    cli = ["--chapter", chapter, "--bundle", str(bundle.path), "--quality", quality, "--out", str(out),
           "--jobs", str(jobs), "--voice", "none"]
    console.print(f"[dim]rendering chapter {chapter} at {quality} ({QUALITY_NAMES[quality]}) with --jobs {jobs} …[/dim]")
    split_file = out / f".frame-times-{quality}.jsonl"      # each scene process appends its CPU split
    split_file.unlink(missing_ok=True)
    wall, cpu, proc = timed_cli(cli, env={**os.environ, TIMES_ENV: str(split_file), LABELS_ENV: str(out / ".labels")})
    split = {}
    if split_file.is_file():
        for line in split_file.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            split[rec["scene"]] = rec
        split_file.unlink()
    # the scene records this render used: the join's own list of keys (not a fresh plan, whose keys
    # differ when someone edits a scene's sources while the bench runs)
    name = jobs_of.chapter_file(chapter, chapters()[chapter])
    keys = json.loads((dest / ".scenes" / f"{name}.join.json").read_text(encoding="utf-8"))["keys"]
    scenes = []
    for key in keys:
        found = [m for m in (dest / ".scenes").glob(f"{name}-*.{key[:16]}.json") if not m.name.endswith(".cues.json")]
        meta = json.loads(found[0].read_text(encoding="utf-8"))
        scenes.append({"scene": meta["scene"], "wall": meta["render_wall"], "cpu": meta["render_cpu"],
                       "seconds": meta["seconds"], "frames": meta["frames"], "fps": meta["fps"],
                       "mp4": str(found[0].with_suffix(".mp4")), "split": split.get(meta["scene"])})
    final = dest / f"{name}.mp4"
    frames, fps = probe.video_facts(final)
    run = {"quality": quality, "jobs": jobs, "wall": wall, "cpu": cpu, "scenes": scenes,
           "seconds": sum(s["seconds"] for s in scenes), "final": str(final), "final_frames": frames,
           "final_seconds": probe.stream_seconds(final), "parts_frames": sum(s["frames"] for s in scenes),
           "fps": fps}
    console.print("[dim]re-running the same command unchanged …[/dim]")
    run["rerun_wall"], run["rerun_cpu"], again = timed_cli(cli)
    m = re.search(r"(\d+) of (\d+) scenes rendered", again.stderr)
    run["rerun_rendered"] = int(m.group(1)) if m else None   # >0: someone edited a scene's sources meanwhile
    return run


def print_chapter(run: dict, console):
    from rich.table import Table  # the parent's report only; children never print tables
    q = run["quality"]
    t = Table(title=f"chapter 02 at {q} ({QUALITY_NAMES[q]}), --jobs {run['jobs']}", title_justify="left")
    for col in ("scene", "wall s", "CPU s", "video s", "frames", "wall/video", "CPU/video"):
        t.add_column(col, justify="left" if col == "scene" else "right")
    for s in run["scenes"]:
        t.add_row(s["scene"], fmt_s(s["wall"]), fmt_s(s["cpu"]), fmt_s(s["seconds"]), str(s["frames"]),
                  factor_cell(s["wall"] / s["seconds"], None), f"{s['cpu'] / s['seconds']:.2f}")
    sw, sc = sum(s["wall"] for s in run["scenes"]), sum(s["cpu"] for s in run["scenes"])
    t.add_row("[dim]sum of scenes[/dim]", fmt_s(sw), fmt_s(sc), fmt_s(run["seconds"]), str(run["parts_frames"]),
              f"{sw / run['seconds']:.2f}", f"{sc / run['seconds']:.2f}", end_section=True)
    t.add_row("[bold]chapter[/bold] (render.py)", fmt_s(run["wall"]), fmt_s(run["cpu"]), fmt_s(run["seconds"]),
              str(run["final_frames"]), factor_cell(run["wall"] / run["seconds"], TARGETS.get(q)),
              f"{run['cpu'] / run['seconds']:.2f}")
    console.print(t)
    print_split(run, console)


SPLIT = (("draw_cpu", "drawing"), ("convert_cpu", "RGBA→YUV"), ("encode_cpu", "encoding"), ("other_cpu", "the rest"))


def print_split(run: dict, console):
    """Where each scene process's CPU time went (film/run/render_job.py FrameTimes)."""
    from rich.table import Table  # the parent's report only
    rows = [s for s in run["scenes"] if s.get("split")]
    if not rows:
        return
    q = run["quality"]
    t = Table(title=f"where the scene processes' CPU went, {QUALITY_NAMES[q]} (CPU s; ms per video frame)",
              title_justify="left")
    for col in ("scene", "pictures drawn / frames", *(name for _, name in SPLIT), "process CPU s"):
        t.add_column(col, justify="left" if col == "scene" else "right")

    def cells(sp: dict, frames: int) -> list[str]:
        return [f"{sp[k]:,.1f} ({1000 * sp[k] / max(frames, 1):.1f})" for k, _ in SPLIT]
    total = {k: 0.0 for k, _ in SPLIT}
    drawn = frames = 0
    for s in rows:
        sp = s["split"]
        t.add_row(s["scene"], f"{sp['drawn']} / {sp['frames']}", *cells(sp, sp["frames"]), fmt_s(sp["process_cpu"]))
        for k in total:
            total[k] += sp[k]
        drawn, frames = drawn + sp["drawn"], frames + sp["frames"]
    share = sum(total.values())
    t.add_row("[bold]all scenes[/bold]", f"{drawn} / {frames}", *cells(total, frames), fmt_s(share), end_section=True)
    t.add_row("[dim]share[/dim]", "", *[f"{total[k] / share:.0%}" for k, _ in SPLIT], "")
    console.print(t)
    run["split_total"] = total
    # how the shapes drawn got their cairo paths (film/run/render_job.py FilmCamera), and how many
    # were not drawn: still shapes on the layer a frame starts from (film/still_layer.py)
    paths = {k: sum(s["split"].get("paths", {}).get(k, 0) for s in rows) for k in ("traced", "kept", "moved", "layered")}
    if any(paths.values()):
        drawn = paths["traced"] + paths["kept"] + paths["moved"]
        console.print(f"shapes drawn, all scenes: {drawn:,}; traced {paths['traced']:,}, "
                      f"put back as traced {paths['kept']:,}, put back moved {paths['moved']:,}; "
                      f"not drawn, held still on a layer: {paths['layered']:,}")
        run["paths_total"] = paths


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chapter", default="02")
    p.add_argument("--weights", default="random", choices=("random", "tiny"))
    p.add_argument("--prompt", default="The cat sat on the")
    p.add_argument("--qualities", default="low,high", help="comma-separated (default low,high)")
    p.add_argument("--jobs", type=int, default=None, help="scene processes at once (default: number of cores)")
    p.add_argument("--repeat", type=int, default=2, help="renders of each comparison scene (best is kept)")
    p.add_argument("--no-compare", action="store_true", help="skip the stock-vs-ours widget comparison")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "bench")
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument("--encoders", action="store_true",
                   help="also run the x264 candidates (ENCODER_CANDIDATES) on the longest scene's 1080p60 frames")
    p.add_argument("--encoders-source", type=Path, help="run only the x264 candidates, on this MP4's frames")
    p.add_argument("--reference", type=Path,
                   help="a chapter MP4 rendered before (same chapter, bundle and quality as the last quality run): "
                        "the new one's SSIM, PSNR and size against it")
    p.add_argument("--child", choices=("stock", "ours"), help=argparse.SUPPRESS)
    p.add_argument("--child-quality", default="low", help=argparse.SUPPRESS)
    p.add_argument("--child-media", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(run_child(a.child, a.child_quality, a.child_media)))
        return 0
    if a.encoders_source:
        from rich.console import Console
        encoder_table(a.encoders_source, a.out / "encoders", Console() if sys.stdout.isatty() else Console(width=130))
        return 0

    # the parent's imports: a child process (above) needs none of these
    from rich.console import Console
    from rich.table import Table

    from onepass.data import extract
    console = Console() if sys.stdout.isatty() else Console(width=110)
    jobs = a.jobs or default_jobs()
    load = os.getloadavg()[0]
    console.print(f"[bold]onepass render speed[/bold]: {default_jobs()} cores, load average {load:.1f} at "
                  f"start (other work on the machine inflates wall times; compare ratios from one run)")
    bundle = extract.extract(a.prompt, a.weights, log=lambda m: console.print(f"[dim]{m}[/dim]"))
    shutil.rmtree(a.out / ".labels", ignore_errors=True)     # labels built afresh by the first run
    report: dict = {"cores": default_jobs(), "load_at_start": load, "bundle": str(bundle.path), "runs": []}

    for q in [q.strip() for q in a.qualities.split(",") if q.strip()]:
        run = chapter_run(a.chapter, bundle, q, a.out, jobs, console)
        report["runs"].append(run)
        print_chapter(run, console)
    if a.reference and report["runs"]:
        run = report["runs"][-1]
        run["against_reference"] = {**picture_against(Path(run["final"]), a.reference),
                                    "size": Path(run["final"]).stat().st_size, "reference_size": a.reference.stat().st_size}
        r = run["against_reference"]
        console.print(f"published MP4 ({QUALITY_NAMES[run['quality']]}) against {a.reference}: SSIM {r['ssim']:.4f} "
                      f"(lowest frame {r['ssim_min']:.4f}), PSNR {r['psnr']:.1f} dB, size {r['size'] / 1e6:.2f} MB = "
                      f"{r['size'] / r['reference_size']:.2f} × {r['reference_size'] / 1e6:.2f} MB")
    if a.encoders:
        high = [r for r in report["runs"] if r["quality"] == "high"]
        if high:
            longest = max(high[-1]["scenes"], key=lambda s: s["frames"])
            report["encoders"] = encoder_table(Path(longest["mp4"]), a.out / "encoders", console)

    if not a.no_compare:
        media = a.out / "compare-media"
        results = {"stock": [], "ours": []}
        console.print(f"[dim]widget comparison: stock vs ours, {a.repeat} render(s) each at low …[/dim]")
        for _ in range(a.repeat):
            for kind in ("stock", "ours"):
                results[kind].append(child_result(kind, "low", media))
        best = {k: min(v, key=lambda r: r["wall"]) for k, v in results.items()}
        best_cpu = {k: min(r["cpu"] for r in v) for k, v in results.items()}
        t = Table(title="Σ FLOPs meter + 5 x 5 number grid, 480p15 (best of "
                        f"{a.repeat}; scene.render() only)", title_justify="left")
        for col in ("idiom", "wall s", "CPU s", "video s", "wall/video"):
            t.add_column(col, justify="left" if col == "idiom" else "right")
        names = {"stock": "stock: DecimalNumber + updater, DecimalNumber grid", "ours": "ours: GlyphCounter, NumberGrid"}
        for k in ("stock", "ours"):
            r = best[k]
            t.add_row(names[k], fmt_s(r["wall"]), fmt_s(best_cpu[k]), fmt_s(r["seconds"]), f"{r['wall'] / r['seconds']:.2f}")
        console.print(t)
        speed = best["stock"]["wall"] / best["ours"]["wall"]
        speed_cpu = best_cpu["stock"] / best_cpu["ours"]
        report["compare"] = {"runs": results, "speedup_wall": speed, "speedup_cpu": speed_cpu}

    # the summary
    t = Table(title="against the targets of issues 6 and 24", title_justify="left")
    for col in ("figure", "measured", "target", ""):
        t.add_column(col, justify="left" if col == "figure" else "right")

    def verdict(ok: bool) -> str:
        return "[green]met[/green]" if ok else "[red]not met[/red]"
    for run in report["runs"]:
        q = run["quality"]
        f = run["wall"] / run["seconds"]
        t.add_row(f"render-time factor, chapter {a.chapter} at {QUALITY_NAMES[q]}", f"{f:.2f}",
                  f"≤ {TARGETS[q]:.1f}" if q in TARGETS else "-", verdict(f <= TARGETS[q]) if q in TARGETS else "")
        cpu = run["cpu"] / run["seconds"]
        ceiling = TARGETS_24.get(q, {})
        t.add_row(f"  same, CPU time / video ({QUALITY_NAMES[q]})", f"{cpu:.2f}",
                  f"≤ {ceiling['cpu']:.1f}" if "cpu" in ceiling else "", verdict(cpu <= ceiling["cpu"]) if "cpu" in ceiling else "")
        if "wall" in ceiling:
            t.add_row(f"  wall / video, issue 24 ({QUALITY_NAMES[q]}, --jobs {run['jobs']})", f"{f:.2f}",
                      f"≤ {ceiling['wall']:.1f}", verdict(f <= ceiling["wall"]))
        if "against_reference" in run:
            r = run["against_reference"]
            ratio = r["size"] / r["reference_size"]
            t.add_row(f"  published MP4 vs --reference ({QUALITY_NAMES[q]}): SSIM, size",
                      f"{r['ssim']:.4f}, {ratio:.2f}x", f"≥ {PICTURE_TARGETS['ssim']}, ≤ {PICTURE_TARGETS['size']}x",
                      verdict(r["ssim"] >= PICTURE_TARGETS["ssim"] and ratio <= PICTURE_TARGETS["size"]))
        ratio = run["rerun_wall"] / run["wall"]
        redone = "" if not run.get("rerun_rendered") else f"; {run['rerun_rendered']} scene(s) re-rendered: sources edited meanwhile"
        t.add_row(f"cached re-run / first run ({QUALITY_NAMES[q]})",
                  f"{ratio:.1%} ({run['rerun_wall']:.1f} s / {run['wall']:.1f} s{redone})", f"≤ {CACHE_TARGET:.0%}",
                  verdict(ratio <= CACHE_TARGET))
        gap = abs(run["final_seconds"] - run["seconds"]) if run["final_seconds"] is not None else float("nan")
        ok = run["final_frames"] == run["parts_frames"] and gap <= 1 / run["fps"]
        t.add_row(f"joined frames = sum of scenes' ({QUALITY_NAMES[q]})",
                  f"{run['final_frames']} vs {run['parts_frames']}, Δt {gap * 1000:.0f} ms", "equal, ≤ 1 frame",
                  verdict(ok))
    if "compare" in report:
        c = report["compare"]
        t.add_row("meter + grid speed-up over the stock idiom", f"{c['speedup_wall']:.1f}x (CPU {c['speedup_cpu']:.1f}x)",
                  f"≥ {SPEEDUP_TARGET:.0f}x", verdict(c["speedup_wall"] >= SPEEDUP_TARGET))
    console.print(t)
    report["load_at_end"] = os.getloadavg()[0]
    console.print(f"[dim]load average at the end: {report['load_at_end']:.1f}[/dim]")
    if a.json:
        a.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
