#!/usr/bin/env python3
"""Decoded frame hashes per scene: are two trees' frames identical?

    .venv/bin/python bench/frame_hashes.py --chapters 00,02 --json after.json
    .venv/bin/python bench/frame_hashes.py --tree /tmp/before --chapters 00,02 --json before.json
    .venv/bin/python bench/frame_hashes.py --compare before.json after.json

Renders each scene of the given chapters in its own scene process (the tree's render_job, as
the film build runs it) at low quality (480p15), from one bundle extracted by that tree (--weights
tiny by default, or tiny-peaked, or --bundle DIR: the same folder for both trees), silent by
default (--voice none: timed at the estimated speaking rate; --voice espeak speaks), and hashes
every decoded video frame with ffmpeg's framemd5 (and its decoded sound track, if any, with md5).
Prints per scene: frames, one digest of all its frames' hashes, the sound's; --compare names each
scene whose frames differ (frame count, the first differing frame and how many differ) or whose
sound differs.

The tree is any checkout of onepass (--tree, default this one), run with this venv's Python
(--python) and its own code first on the path; its label shelf is a fresh folder (built
labels are never shared between trees), removed at the end. An extracted bundle is kept and
its folder printed: pass it as --bundle to the other tree's run, so both draw the same numbers.
Method used for issue 42 (frames identical before and after the engine boundary): the baseline
commit in a worktree, `--tree WORKTREE`, then this tree with `--bundle` of that run.
Issue 50 (engine/copies.py's mobject copies): this tree with `--manim-copies`, then without it,
with `--bundle` of the first run; engine/glyphs.py's Text the same way, with `--manim-text`.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


SHIM = """# written by bench/frame_hashes.py: `import onepass...` loads {tree}'s code
import importlib.abc, importlib.util, sys
FOLDERS = {folders!r}


class TreeFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in FOLDERS:
            return importlib.util.spec_from_file_location(name, FOLDERS[name] + "/__init__.py",
                                                          submodule_search_locations=[FOLDERS[name]])
        return None


sys.meta_path.insert(0, TreeFinder())
"""


def import_shim(tree: Path, folder: Path) -> Path:
    """A folder that, on PYTHONPATH, makes `import onepass...` load `tree`'s code: its
    sitecustomize.py puts a finder first that maps onepass and its packages to the tree's folders,
    as its pyproject.toml maps them (package-dir). PYTHONPATH=tree alone is not enough: the tree's
    top folders are not named onepass.*, so every subpackage would resolve through the venv's
    editable install, which is this checkout's code, and two trees would be compared as one (and a
    finder on a path entry would lose to the tree's own onepass/ folder, first on sys.path as the
    working folder)."""
    import tomllib
    dirs = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    folder.mkdir(parents=True)
    folders = {name: str((tree / where).resolve()) for name, where in dirs.items()}
    (folder / "sitecustomize.py").write_text(SHIM.format(tree=tree, folders=folders), encoding="utf-8")
    return folder


def tree_env(tree: Path, labels: Path, voice_cache: Path | None) -> dict:
    shim = import_shim(tree, labels.parent / "import")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(shim), str(tree))), ONEPASS_LABEL_CACHE=str(labels),
               PYTHONHASHSEED="0")
    if voice_cache is not None:
        env["ONEPASS_VOICE_CACHE"] = str(voice_cache)
    return env


def py(python: str, tree: Path, env: dict, code: str) -> str:
    return subprocess.run([python, "-c", code], cwd=tree, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def render_job_module(tree: Path) -> str:
    """The dotted name of the tree's scene-process module (wherever its film package keeps it)."""
    found = sorted(p for p in (tree / "film").rglob("render_job.py"))
    if not found:
        raise SystemExit(f"{tree}: no render_job.py under film/")
    name = ".".join(found[0].relative_to(tree).with_suffix("").parts)
    # a tree whose code names its packages under the distribution's one name (onepass.film...): its
    # modules resolve through the venv's (editable) install of that tree
    return f"onepass.{name}" if "from onepass." in found[0].read_text(encoding="utf-8") else name


# --manim-copies: the scene process with manim's own Mobject.__deepcopy__ (engine/frames.py's
# faster_manim() without engine/copies.py's), its module then run as `python -m` runs it
MANIM_COPIES = ("import contextlib, runpy, sys; from onepass.engine import frames; "
                "frames.faster_copies = contextlib.nullcontext; del sys.argv[0]; "
                "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)")
# --manim-text: the scene process with manim's own parse of a Text's whole SVG (faster_manim()
# without engine/glyphs.py's glyph-by-glyph reading)
MANIM_TEXT = ("import runpy, sys; from manim import SVGMobject; from onepass.engine import frames; "
              "frames.glyph_svg_mobject = SVGMobject.generate_mobject; del sys.argv[0]; "
              "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)")


def audio_md5(video: Path) -> str | None:
    """The md5 of the decoded sound track (None: the scene has none, as a silent one)."""
    streams = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=index",
                              "-of", "csv=p=0", str(video)], check=True, capture_output=True, text=True).stdout
    if not streams.strip():
        return None
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(video), "-map", "0:a", "-f", "md5", "-"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return out.removeprefix("MD5=") or None


def framemd5(video: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(video), "-map", "0:v", "-f", "framemd5", "-"],
                         check=True, capture_output=True, text=True).stdout
    return [line.rsplit(",", 1)[1].strip() for line in out.splitlines() if line and not line.startswith("#")]


def hash_tree(a) -> dict:
    tree = Path(a.tree).resolve()
    work = Path(tempfile.mkdtemp(prefix="onepass-frame-hashes-"))
    env = tree_env(tree, work / "labels", Path(a.voice_cache) if a.voice_cache else None)
    module = render_job_module(tree)
    pre = "onepass." if module.startswith("onepass.") else ""
    if a.bundle:
        bundle = str(Path(a.bundle).resolve())
    else:
        bundle = py(a.python, tree, env, f"from {pre}data import extract; print(extract.extract("
                    f"{a.prompt!r}, {a.weights!r}, root=__import__('pathlib').Path({str(work / 'bundles')!r}), "
                    "log=lambda m: None).path)")
    jobs = []
    for chapter in a.chapters.split(","):
        names = py(a.python, tree, env, f"from {pre}scenes.registry import scenes_of; "
                   f"print(' '.join(c.__name__ for c in scenes_of({chapter!r})))").split()
        jobs += [(chapter, name) for name in names]

    def one(job):
        chapter, name = job
        out = work / f"ch{chapter}-{name}.mp4"
        run = (["-c", MANIM_COPIES, module] if a.manim_copies else ["-c", MANIM_TEXT, module] if a.manim_text
               else ["-m", module])
        cmd = ["nice", "-n", "10", a.python, *run, "--bundle", bundle, "--chapter", chapter, "--scene", name,
               "--quality", "low", "--out", str(out), "--voice", a.voice, "--lang", a.lang]
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        if proc.returncode:
            return job, {"error": proc.stderr.strip()[-800:]}
        frames, sound = framemd5(out), audio_md5(out)
        out.unlink()
        return job, {"frames": len(frames), "digest": hashlib.sha256("\n".join(frames).encode()).hexdigest()[:16],
                     "hashes": frames, "audio": sound}

    results = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            for (chapter, name), r in pool.map(one, jobs):
                results[f"ch{chapter}/{name}"] = r
                shown = r.get("error") or f"{r['frames']:6d} frames  {r['digest']}  audio {(r['audio'] or '-')[:16]}"
                print(f"ch{chapter}/{name:28s} {shown}", flush=True)
    finally:      # the labels and videos go; an extracted bundle stays (pass it as --bundle to the other tree)
        shutil.rmtree(work / "import", ignore_errors=True)
        shutil.rmtree(work if a.bundle else work / "labels", ignore_errors=True)
        for video in work.glob("*.mp4"):
            video.unlink(missing_ok=True)
    if not a.bundle:
        print(f"bundle: {bundle}", flush=True)
    return {"tree": str(tree), "bundle": bundle, "voice": a.voice, "lang": a.lang, "manim_copies": a.manim_copies,
            "manim_text": a.manim_text, "scenes": results}


def compare(before: dict, after: dict) -> list[str]:
    """One line per scene: 'same', or how its frames differ."""
    lines = []
    for scene in sorted(set(before["scenes"]) | set(after["scenes"])):
        b, c = before["scenes"].get(scene), after["scenes"].get(scene)
        if b is None or c is None:
            lines.append(f"{scene}: only in {'after' if b is None else 'before'}")
        elif "error" in b or "error" in c:
            lines.append(f"{scene}: failed ({(b.get('error') or c.get('error'))[-200:]})")
        elif b["hashes"] == c["hashes"]:
            sound = "" if b.get("audio") == c.get("audio") else "; its sound DIFFERS"
            lines.append(f"{scene}: same ({b['frames']} frames{', same sound' if b.get('audio') and not sound else ''}){sound}")
        else:
            differ = [i for i, (x, y) in enumerate(zip(b["hashes"], c["hashes"])) if x != y]
            first = differ[0] if differ else min(b["frames"], c["frames"])
            lines.append(f"{scene}: DIFFERENT: frames {b['frames']} -> {c['frames']}, {len(differ)} of the common "
                         f"frames differ, the first at frame {first} ({first / 15:.2f} s)")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tree", default=str(ROOT), help="the onepass checkout to render (default: this one)")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--chapters", default="00,02")
    p.add_argument("--weights", default="tiny", choices=("tiny", "tiny-peaked"))
    p.add_argument("--prompt", default="The cat sat on the")
    p.add_argument("--bundle", help="an existing bundle folder (the same one for both trees)")
    p.add_argument("--voice", default="none", help="none (silent) or espeak")
    p.add_argument("--voice-cache", help="where the voice's clips are kept (ONEPASS_VOICE_CACHE)")
    p.add_argument("--lang", default="en")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--manim-copies", action="store_true",
                   help="scene processes copy mobjects with manim's own Mobject.__deepcopy__, not engine/copies.py's")
    p.add_argument("--manim-text", action="store_true",
                   help="scene processes build Text with manim's own SVG parse, not engine/glyphs.py's")
    p.add_argument("--json", help="write the hashes here")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two --json files")
    a = p.parse_args(argv)
    if a.compare:
        before, after = (json.loads(Path(f).read_text(encoding="utf-8")) for f in a.compare)
        lines = compare(before, after)
        print("\n".join(lines))
        return 0 if all(": same" in line and "DIFFERS" not in line for line in lines) else 1
    result = hash_tree(a)
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
