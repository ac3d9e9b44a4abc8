#!/usr/bin/env python3
"""Rendering speed: how long a chapter takes to render, against how long it plays.

    .venv/bin/python bench/render_speed.py            # (what `make bench` runs)
    .venv/bin/python bench/render_speed.py --qualities low --jobs 1 --repeat 1

In one run it
1. renders chapter 02 (from a --weights random bundle) through `render.py` at low (480p15) and
   high (1080p60) quality, from an empty output folder, and prints per scene: render wall
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

from film import jobs as jobs_of  # noqa: E402
from film import request  # noqa: E402
from film.runner import default_jobs  # noqa: E402
from scenes.registry import chapters  # noqa: E402
from voiceover import media as probe  # noqa: E402  (ffprobe facts; `media` names folders below)

TARGETS = {"low": 1.0, "high": 4.0}     # render-time factor ceilings from issue 6
SPEEDUP_TARGET = 3.0
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

    from scenes import style as S
    from scenes.meter import CountTo, FlopsMeter
    from scenes.widgets import NumberGrid

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
            meter = FlopsMeter(0, "", widest=max(METER_STEPS)).to_corner(UR, buff=S.MARGIN)
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
    both idioms use: LaTeX SVGs for DecimalNumber, Pango SVGs for Text)."""
    # deferred: manim is imported only in the child process that renders
    from manim import DecimalNumber, Text, tempconfig

    from film.request import QUALITIES
    from scenes import style as S
    media.mkdir(parents=True, exist_ok=True)
    cls = comparison_scene(kind)
    with tempconfig({"quality": QUALITIES[quality][0], "media_dir": str(media), "disable_caching": True,
                     "progress_bar": "none", "verbosity": "WARNING", "write_to_movie": True,
                     "output_file": f"bench-{kind}", "background_color": S.BACKGROUND}):
        if kind == "stock":   # typeset every glyph once, so the timing is steady state, not first LaTeX run
            DecimalNumber(-1234567890.5, num_decimal_places=2, group_with_commas=True, font_size=28)
        else:                 # as in a render process (film/render_job.py)
            from scenes.text import enable_text_cache  # child process only (imports manim)
            enable_text_cache()
            Text("0123456789,.−", font=S.MONO)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        scene = cls()
        scene.render()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        movie = Path(scene.renderer.file_writer.movie_file_path)
    frames, fps = probe.video_facts(movie)
    return {"kind": kind, "wall": wall, "cpu": cpu, "frames": frames, "seconds": frames / fps}


# ---------------------------------------------------------------------------------------
# Measuring

def timed_cli(args: list[str]) -> tuple[float, float, subprocess.CompletedProcess]:
    """render.py in a process of its own; CPU time includes the scene processes it waits for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "render.py"), *args], cwd=ROOT, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
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
    wall, cpu, proc = timed_cli(cli)
    # the scene keys render.py used: the same request, made into options the one way there is
    options = request.build_options(request.from_argv(cli))
    jobs_planned = jobs_of.plan([chapter], bundle, options)[chapter]
    scenes = []
    for job in jobs_planned:
        meta = json.loads(job.meta.read_text(encoding="utf-8"))
        scenes.append({"scene": job.scene, "wall": meta["render_wall"], "cpu": meta["render_cpu"],
                       "seconds": meta["seconds"], "frames": meta["frames"], "fps": meta["fps"], "mp4": str(job.mp4)})
    final = dest / f"{jobs_of.chapter_file(chapter, chapters()[chapter])}.mp4"
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
    p.add_argument("--child", choices=("stock", "ours"), help=argparse.SUPPRESS)
    p.add_argument("--child-quality", default="low", help=argparse.SUPPRESS)
    p.add_argument("--child-media", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(run_child(a.child, a.child_quality, a.child_media)))
        return 0

    # the parent's imports: a child process (above) needs none of these
    from rich.console import Console
    from rich.table import Table

    from data import extract
    console = Console() if sys.stdout.isatty() else Console(width=110)
    jobs = a.jobs or default_jobs()
    load = os.getloadavg()[0]
    console.print(f"[bold]onepass render speed[/bold]: {default_jobs()} cores, load average {load:.1f} at "
                  f"start (other work on the machine inflates wall times; compare ratios from one run)")
    bundle = extract.extract(a.prompt, a.weights, log=lambda m: console.print(f"[dim]{m}[/dim]"))
    report: dict = {"cores": default_jobs(), "load_at_start": load, "bundle": str(bundle.path), "runs": []}

    for q in [q.strip() for q in a.qualities.split(",") if q.strip()]:
        run = chapter_run(a.chapter, bundle, q, a.out, jobs, console)
        report["runs"].append(run)
        print_chapter(run, console)

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
    t = Table(title="against the targets of issue 6", title_justify="left")
    for col in ("figure", "measured", "target", ""):
        t.add_column(col, justify="left" if col == "figure" else "right")

    def verdict(ok: bool) -> str:
        return "[green]met[/green]" if ok else "[red]not met[/red]"
    for run in report["runs"]:
        q = run["quality"]
        f = run["wall"] / run["seconds"]
        t.add_row(f"render-time factor, chapter {a.chapter} at {QUALITY_NAMES[q]}", f"{f:.2f}",
                  f"≤ {TARGETS[q]:.1f}" if q in TARGETS else "-", verdict(f <= TARGETS[q]) if q in TARGETS else "")
        t.add_row(f"  same, CPU time / video ({QUALITY_NAMES[q]})", f"{run['cpu'] / run['seconds']:.2f}", "", "")
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
