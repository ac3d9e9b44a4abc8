"""Nothing lost, ever (docs/RELIABILITY.md): damaged cache entries, two runs at once, interrupts,
colliding output folders.

Most tests drive the real film build (film/make/build.py: cache, runner, joins, locks) in its own
process, with scenes rendered by a stand-in command (a few frames of ffmpeg's test picture), so
each takes seconds (the output folder has a quote in its name, as a user's may); the
render_job tests run manim on the tiny bundle.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data.bundle import sha256_file  # noqa: E402
from onepass.film.make import build  # noqa: E402
from onepass.film.run import join, runner  # noqa: E402
from onepass.film.plan import jobs as film_jobs  # noqa: E402
from tests.helpers import packets_account, stand_in_clip  # noqa: E402
from onepass.voiceover import media, mixdown  # noqa: E402

FRAMES = {"Alpha": 12, "Beta": 30, "Gamma": 9}
SCENES = list(FRAMES)

CHAPTER = '''\
"""A throwaway chapter."""


class Alpha:
    def build(self):
        with self.beat("a"):
            pass


class Beta:
    def build(self):
        with self.beat("b"):
            pass


class Gamma:
    def build(self):
        with self.beat("c"):
            pass


SCENES = [Alpha, Beta, Gamma]
'''

# Stand-in for onepass.film.run.render_job: N frames of a noisy test picture (so damage lands in picture
# data), cues; records each start; can be slow (to be interrupted) or write a damaged file.
FAKE_RENDER = '''\
import json, os, subprocess, sys, time
out, cues, frames, scene, cfg = sys.argv[1:6]
cfg = json.loads(cfg)
with open(cfg["record"], "a") as f:
    f.write(scene + "\\n")
if scene == cfg.get("slow"):
    open(os.path.join(cfg["started"], scene), "w").close()
    time.sleep(cfg.get("slow_secs", 60))
tmp = out + ".tmp.mp4"
subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=15",
                "-vf", "noise=alls=30:allf=t", "-frames:v", frames, "-c:v", "libx264", "-pix_fmt", "yuv420p", tmp],
               check=True)
''' + packets_account("tmp", "out") + '''\
if scene == cfg.get("damage"):       # damaged after its encoder made it: not the packets it said
    with open(tmp, "r+b") as f:
        f.seek(os.path.getsize(tmp) // 2)
        f.write(os.urandom(4096))
os.replace(tmp, out)
json.dump([{"beat": scene, "start": 0.0, "end": 0.3, "text": "line of " + scene}], open(cues, "w"))
'''

# One build of chapter 99, as render.py would run it; prints what it did as JSON.
DRIVER = '''\
import faulthandler, json, signal, sys
faulthandler.register(signal.SIGUSR1, all_threads=True)    # Film.ended: where it waits, if it hangs
from pathlib import Path
from types import SimpleNamespace
cfg = json.loads(sys.argv[1])
sys.path.insert(0, cfg["repo"])
from onepass.film.make import build

def command(job, cues):
    return [sys.executable, cfg["fake"], str(job.mp4), str(cues), str(cfg["frames"][job.scene]), job.scene,
            json.dumps(cfg)]

bundle = SimpleNamespace(meta={"cache_key": "bundle-1", "tensors_sha256": "t-1", "schema_version": 1},
                         prompt=cfg["prompt"], path=Path(cfg["root"]) / "bundle")
options = build.BuildOptions(quality="low", out=Path(cfg["out"]), jobs=cfg["jobs"], titles={"99": "Fake chapter"},
                             modules={"99": "scenes.ch99_fake"}, root=Path(cfg["root"]),
                             lines_of=lambda chapter, b: dict(cfg["lines"]), command=command, force=cfg["force"],
                             burn_captions=cfg["burn"])
try:
    r = build.render(["99"], bundle, options)[0]
except build.PipelineError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr)
    sys.exit(130)
print(json.dumps({"final": str(r.final), "frames": r.report["frames"], "joined": r.joined,
                  "rendered": [s.job.scene for s in r.scenes if not s.cached]}))
'''


class Film:
    """A throwaway project with one chapter ('99'), built by DRIVER in its own process."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.root = tmp / "proj"
        for pkg in ("scenes", "voiceover", "voiceover/scripts"):
            (self.root / pkg).mkdir(parents=True, exist_ok=True)
            (self.root / pkg / "__init__.py").write_text("")
        (self.root / "scenes" / "ch99_fake.py").write_text(CHAPTER)
        (self.root / "voiceover" / "scripts" / "ch99.py").write_text(
            'LINES = ["a", "b", "c"]\n\n\ndef values(bundle, ledger):\n    return {}\n')
        (tmp / "fake_render.py").write_text(FAKE_RENDER)
        (tmp / "driver.py").write_text(DRIVER)
        (tmp / "started").mkdir()
        self.record = tmp / "record.txt"
        self.record.write_text("")
        self.cfg = {"repo": str(ROOT), "root": str(self.root), "fake": str(tmp / "fake_render.py"),
                    "record": str(self.record), "started": str(tmp / "started"), "out": str(tmp / "it's out"),
                    "prompt": "a fake prompt", "frames": FRAMES, "jobs": 2, "force": False, "burn": False,
                    "lines": {"a": "First line.", "b": "Second line.", "c": "Third line."}}
        bundle = SimpleNamespace(meta={"cache_key": "bundle-1"}, prompt=self.cfg["prompt"])
        self.dest = film_jobs.destination(Path(self.cfg["out"]), bundle, "low")
        self.work = self.dest / ".scenes"

    def spawn(self, **cfg) -> subprocess.Popen:
        """A build in its own process group (like a terminal's foreground job)."""
        return subprocess.Popen([sys.executable, str(self.tmp / "driver.py"), json.dumps({**self.cfg, **cfg})],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    def run(self, expect: int = 0, **cfg) -> SimpleNamespace:
        proc = self.spawn(**cfg)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == expect, err[-3000:]
        return SimpleNamespace(err=err, **(json.loads(out) if expect == 0 else {}))

    def wait_started(self, scene: str, proc: subprocess.Popen, timeout: float = 60):
        flag = self.tmp / "started" / scene
        for _ in range(int(timeout / 0.05)):
            if flag.exists():
                return
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            time.sleep(0.05)
        raise AssertionError(f"scene {scene} never started")

    def ended(self, proc: subprocess.Popen, timeout: float = 60) -> str:
        """The build's stderr once it has ended. One that has not ended in `timeout` fails the test with
        what it was doing: each thread's stack, and which signals each process of its group ignores,
        blocks or catches (a Ctrl-C run hung once in a full run of the suite, and never again in 80)."""
        try:
            return proc.communicate(timeout=timeout)[1]
        except subprocess.TimeoutExpired:
            pids = subprocess.run(["ps", "-o", "pid=", "-g", str(proc.pid)], capture_output=True, text=True).stdout
            states = []
            for pid in pids.split():
                try:
                    status = Path(f"/proc/{pid}/status").read_text().splitlines()
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
                except OSError:
                    continue
                states.append(f"{pid} {cmd}: " + " ".join(line for line in status
                                                          if line.startswith(("State", "SigBlk", "SigIgn", "SigCgt"))))
            os.kill(proc.pid, signal.SIGUSR1)
            time.sleep(1)
            os.killpg(proc.pid, signal.SIGKILL)
            err = proc.communicate()[1]
            raise AssertionError(f"the build did not end in {timeout} s:\n" + "\n".join(states) + "\n" + err[-6000:])

    def rendered(self) -> list[str]:
        return self.record.read_text().split()

    def jobs(self) -> list[film_jobs.SceneJob]:
        return [film_jobs.SceneJob("99", scene, i, "", stem)
                for i, scene in enumerate(SCENES)
                for stem in [p.with_suffix("") for p in self.work.glob(f"ch99-fake-chapter-{scene}.*.json")
                             if p.name.count(".") == 2]]

    def entries_intact(self) -> dict[str, bool]:
        """scene -> its newest cache entry matches its record (sha256 of MP4 and cues)."""
        out = {}
        for job in self.jobs():
            job.key = json.loads(job.meta.read_text())["key"]
            out.setdefault(job.scene, True)
            out[job.scene] &= job.damage() is None
        return out

    def chapter(self) -> dict[str, str]:
        """sha256 of the chapter MP4 and its captions and thumbnail."""
        final = self.dest / "ch99-fake-chapter.mp4"
        return {p.suffix: sha256_file(p) for p in
                (final, final.with_suffix(".srt"), final.with_suffix(".vtt"), final.with_suffix(".png"))}

    def leftovers(self) -> list[str]:
        found = [p.name for folder in (self.dest, self.work) for p in folder.iterdir()
                 if p.name.startswith(build.LEFTOVER_FOLDERS) or ".part" in p.name or p.name.endswith(".tmp.mp4")]
        return found + [p.name for p in runner.media_root().glob(runner.media_prefix(self.work) + "*")]


@pytest.fixture()
def film(tmp_path):
    return Film(tmp_path)


def check_video(path: Path, frames: int):
    assert media.video_facts(path)[0] == frames
    assert media.decode_problems(path) is None


def damage(path: Path, size: int = 4096):
    with open(path, "r+b") as f:
        f.seek(path.stat().st_size // 2)
        f.write(os.urandom(size))


# ---------------------------------------------------------------------------------------
# 1. A damaged cached scene never replaces a good chapter

def test_a_damaged_cached_scene_is_rendered_again_and_named(film):
    first = film.run()
    check_video(Path(first.final), sum(FRAMES.values()))
    beta = next(j for j in film.jobs() if j.scene == "Beta")
    damage(beta.mp4)                                   # a few KB in the middle of the cached scene
    again = film.run(burn=True)                        # the chapter is joined again (captions burnt in)
    assert again.rendered == ["Beta"]                  # re-rendered, the others taken from the cache
    assert "scene Beta of chapter 99" in again.err and "damaged" in again.err
    check_video(Path(again.final), sum(FRAMES.values()))
    assert film.entries_intact() == {s: True for s in SCENES}


def test_a_broken_scene_render_never_replaces_the_good_chapter(film):
    film.run()
    good = film.chapter()
    film.cfg["lines"]["b"] = "Second line, reworded."      # Beta renders afresh ...
    r = film.run(expect=2, damage="Beta")                  # ... into a damaged file
    assert "scene Beta" in r.err and "run the same command again" in r.err
    assert film.chapter() == good                          # MP4, captions, thumbnail all kept
    assert film.leftovers() == []
    again = film.run()                                     # its entry was dropped: rendered afresh
    assert again.rendered == ["Beta"]
    check_video(Path(again.final), sum(FRAMES.values()))


def test_ffmpeg_errors_are_caught_even_when_it_exits_0(tmp_path):
    """ffmpeg's concat logs 'Invalid data found' for a damaged part and still exits 0."""
    parts = []
    for i in range(2):
        p = tmp_path / f"p{i}.mp4"
        stand_in_clip(p, frames=30, noise=30)
        parts.append(p)
    damage(parts[0])
    out = tmp_path / "joined.mp4"
    out.write_bytes(b"the good file")
    with pytest.raises(media.MediaError, match="Invalid|invalid|Error"):
        mixdown.join(parts, [[], []], out, voiced=False, durations=[2.0, 2.0])
    assert out.read_bytes() == b"the good file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["joined.mp4", "p0.mp4", "p1.mp4"]


def test_a_join_is_checked_packet_for_packet_against_its_parts(tmp_path):
    """The join is checked without decoding: its picture must be its parts' packets, in order."""
    parts = []
    for i in range(2):
        p = tmp_path / f"p{i}.mp4"
        stand_in_clip(p, frames=30, noise=10 + 20 * i)
        parts.append(p)
    out = tmp_path / "joined.mp4"
    mixdown.join(parts, [[], []], out, voiced=False, durations=[2.0, 2.0])
    assert join.check_joined(out, parts) == (60, 15.0)
    with pytest.raises(media.MediaError, match="not its parts'"):
        join.check_joined(out, parts[::-1])            # the same frames in another order
    with pytest.raises(media.MediaError, match="60 frames but its parts have 30"):
        join.check_joined(out, parts[:1])


def test_an_unchanged_file_is_probed_once_and_a_rewritten_or_replaced_one_afresh(tmp_path, monkeypatch):
    """probe's answers are kept per process for a file whose path, inode, size and mtime are
    unchanged; a file rewritten in place, touched, or replaced by another is read again."""
    asked = []
    real_read = media.read_stream_fields

    def counting(path, *args, **kwargs):
        asked.append(path)
        return real_read(path, *args, **kwargs)
    monkeypatch.setattr(media, "read_stream_fields", counting)
    clip = stand_in_clip(tmp_path / "clip.mp4", frames=10)
    assert media.video_facts(clip) == (10, 15.0)
    assert media.video_facts(clip) == (10, 15.0) and media.video_seconds(clip) == pytest.approx(10 / 15)
    assert len(asked) == 1                                   # the same question: asked once
    assert media.frame_rate(clip) == 15.0 and len(asked) == 2      # another question: asked
    stand_in_clip(clip, frames=20)                           # ffmpeg rewrites it in place
    assert media.video_facts(clip) == (20, 15.0) and len(asked) == 3
    stamp = clip.stat().st_mtime_ns
    os.utime(clip, ns=(stamp + 10**9, stamp + 10**9))       # only its mtime changes
    assert media.video_facts(clip) == (20, 15.0) and len(asked) == 4
    other = stand_in_clip(tmp_path / "other.mp4", frames=20)
    os.utime(other, ns=(stamp + 10**9, stamp + 10**9))
    os.replace(other, clip)                                  # another inode, maybe the same size and mtime
    assert media.video_facts(clip) == (20, 15.0) and len(asked) == 5
    assert media.video_facts(clip) == (20, 15.0) and len(asked) == 5


# ---------------------------------------------------------------------------------------
# 2. Two runs into the same folder at once

def test_two_runs_at_once_take_turns_and_both_succeed(film):
    film.cfg.update(slow="Gamma", slow_secs=1.5)
    a = film.spawn()
    film.wait_started("Gamma", a)                      # the first is rendering ...
    b = film.spawn()                                   # ... when the second starts
    (_, err_a), (out_b, err_b) = a.communicate(timeout=120), b.communicate(timeout=120)
    assert a.returncode == 0, err_a[-3000:]
    assert b.returncode == 0, err_b[-3000:]
    assert "another render is writing to" in err_b and "waiting" in err_b
    assert sorted(film.rendered()) == sorted(SCENES)   # each scene rendered once: the second waited
    assert json.loads(out_b)["rendered"] == []
    check_video(Path(json.loads(out_b)["final"]), sum(FRAMES.values()))
    assert film.entries_intact() == {s: True for s in SCENES}
    assert film.leftovers() == []


def test_temporary_names_are_unique(tmp_path):
    from onepass.data.files import temp_name
    final = tmp_path / "ch02.mp4"
    a, b = temp_name(final), temp_name(final)
    assert a != b and a.parent == b.parent == tmp_path and a.suffix == ".mp4"


def test_clips_a_killed_run_half_wrote_leave_the_voice_cache(tmp_path, monkeypatch):
    """Scene processes write narration clips into one shared cache without a lock; a killed one
    leaves a part file. The next voice opened there removes those over an hour old, and nothing
    a live writer might still be writing, nor any finished clip."""
    from onepass.data.files import temp_name, write_bytes
    from onepass.voiceover import services
    monkeypatch.setenv(services.CACHE_ENV, str(tmp_path))
    folder = tmp_path / services.SilentService.name
    folder.mkdir()
    clip = write_bytes(folder / "0123.wav", b"RIFF")
    old, fresh = temp_name(clip), temp_name(clip)
    os.utime(old, (time.time() - 7200,) * 2)
    services.SilentService()
    assert not old.exists() and fresh.exists() and clip.read_bytes() == b"RIFF"


# ---------------------------------------------------------------------------------------
# 3. Interrupts lose nothing

@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_force_run_keeps_every_cached_scene(film, how):
    film.run()
    good = film.chapter()
    proc = film.spawn(force=True, slow="Gamma")
    film.wait_started("Gamma", proc)
    os.killpg(proc.pid, how)                           # Ctrl-C reaches the whole foreground group
    err = film.ended(proc)
    assert proc.returncode != 0, err
    assert film.entries_intact() == {s: True for s in SCENES}
    assert film.chapter() == good
    assert film.leftovers() == []                      # its folders and temporary files removed on exit
    film.record.write_text("")
    assert film.run().rendered == []                   # nothing to render again


def test_a_killed_run_loses_nothing_and_the_next_run_cleans_up(film):
    film.run()
    good = film.chapter()
    film.cfg["lines"].update(a="First line, new.", c="Third line, new.")
    proc = film.spawn(jobs=1, slow="Gamma")            # Alpha finishes, then Gamma hangs
    film.wait_started("Gamma", proc)
    # a stale manim media folder of a killed scene process, as onepass.film.run.render_job would have left
    stale = Path(tempfile.mkdtemp(prefix=runner.media_prefix(film.work), dir=runner.media_root()))
    os.killpg(proc.pid, signal.SIGKILL)                # the whole process group, no chance to clean up
    proc.communicate(timeout=30)
    assert film.chapter() == good
    assert film.entries_intact() == {s: True for s in SCENES}
    assert film.leftovers()                            # what the killed run left ...
    film.record.write_text("")
    r = film.run()
    # Gamma never finished; Alpha did if the runner took it first (the order is longest-first by the
    # previous run's timings, which a loaded machine can swap), and a finished render is kept
    assert r.rendered in (["Gamma"], ["Alpha", "Gamma"])
    assert "left in" in r.err and "interrupted run" in r.err
    assert film.leftovers() == [] and not stale.exists()   # ... removed by the next run
    check_video(Path(r.final), sum(FRAMES.values()))


def _scores_job(bundle, tmp_path, prefix) -> list[str]:
    """render_job's arguments for chapter 02's Scores into tmp_path/s.mp4, silent, manim's media under `prefix`."""
    return ["--bundle", str(bundle.path), "--chapter", "02", "--scene", "Scores", "--out", str(tmp_path / "s.mp4"),
            "--media", str(prefix), "--voice", "none"]


@pytest.mark.render
def test_render_job_removes_its_media_folder_when_terminated(tiny_bundle, tmp_path):
    prefix = tmp_path / "media" / "onepass-media-x-"
    prefix.parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "onepass.film.run.render_job",
                             *_scores_job(tiny_bundle, tmp_path, prefix)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(1200):
        if list(prefix.parent.iterdir()) or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert list(prefix.parent.iterdir()), "render_job never made its media folder"
    time.sleep(1.0)                                    # inside manim's render
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, err[-3000:]
    assert list(prefix.parent.iterdir()) == [] and not (tmp_path / "s.mp4").exists()


SIGNAL_IN_THREAD_START = """
import os, runpy, signal, sys, threading
class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.{signal})
        sum(range(1000))                          # the handler runs here: its exception is only reported
start = threading.Thread.start
def start_then_signal(self):
    start(self)
    if self.name.startswith("partial-movie-encoder") and not getattr(threading, "signalled", False):
        threading.signalled = True
        if {in_finalizer}:
            Finalized()
        else:
            os.kill(os.getpid(), signal.{signal})     # handled before manim keeps the job it belongs to
threading.Thread.start = start_then_signal
sys.argv = ["render_job", *sys.argv[1:]]
runpy.run_module("onepass.film.run.render_job", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("stop, code, in_finalizer", [("SIGTERM", 128 + signal.SIGTERM, False),
                                                     ("SIGINT", -signal.SIGINT, False),
                                                     ("SIGTERM", 128 + signal.SIGTERM, True)])
def test_a_signal_inside_an_encoder_threads_start_still_ends_render_job(tiny_bundle, tmp_path, stop, code,
                                                                        in_finalizer):
    """The window a SIGTERM found under load (2 render_jobs of 45 lived on, their media folders gone):
    the handler's exception unwinds out of Thread.start(), the encoder thread already runs and waits for
    frames no one will send, and Python's exit waited for it for ever. It ends now, by its signal. And a
    signal handled inside a finalizer, whose exception Python only reports (a full suite run saw a
    render_job sent SIGTERM end with status 0): the scene runs on, then ends by the signal, writing nothing."""
    prefix = tmp_path / "media" / "onepass-media-x-"
    prefix.parent.mkdir()
    script = SIGNAL_IN_THREAD_START.format(signal=stop, in_finalizer=in_finalizer)
    proc = subprocess.Popen([sys.executable, "-c", script, *_scores_job(tiny_bundle, tmp_path, prefix)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"render_job did not end after {stop} inside an encoder thread's start")
    assert proc.returncode == code, err
    assert list(prefix.parent.iterdir()) == [] and not (tmp_path / "s.mp4").exists()


@pytest.mark.render
def test_a_quote_in_the_output_path_renders(tiny_bundle, tmp_path):
    """Manim's own concat of a scene's partial movies writes `file '<path>'` unescaped."""
    folder = tmp_path / "it's here"
    folder.mkdir()
    out = folder / "scene.mp4"
    subprocess.run([sys.executable, "-m", "onepass.film.run.render_job", "--bundle", str(tiny_bundle.path), "--chapter", "00",
                    "--scene", "SameWord", "--out", str(out), "--cues", str(folder / "cues.json"), "--voice", "none"],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    frames, _ = media.video_facts(out)
    assert frames > 0 and media.decode_problems(out) is None
    assert sorted(p.name for p in folder.iterdir()) == ["cues.json", "scene.mp4"]


# ---------------------------------------------------------------------------------------
# 4. Every prompt its own folder

def _bundle(prompt: str, weights: str = "w-1"):
    return SimpleNamespace(prompt=prompt, meta={"weights": {"sha256": weights}, "cache_key": "k"})


@pytest.mark.parametrize("a, b", [
    ("The cat sat on the", "THE CAT SAT ON THE!!"),
    ("Привет, как дела?", "Привет, как дела!"),
    ("東京は日本の首都です", "北京是中国的首都"),
    ("x" * 60 + " one ending", "x" * 60 + " another ending"),
])
def test_different_prompts_get_different_folders(a, b, tmp_path):
    da, db = (build.destination(tmp_path, _bundle(p), "low") for p in (a, b))
    assert da != db


def test_output_folders_are_readable_stable_and_safe(tmp_path):
    assert film_jobs.output_name(_bundle("The cat sat on the")).startswith("the-cat-sat-on-the-")
    assert film_jobs.output_name(_bundle("Привет, мир")).startswith("привет-мир-")
    assert film_jobs.output_name(_bundle("東京は日本の首都です")).startswith("東京は日本の首都です-")
    same = [film_jobs.output_name(_bundle("The cat sat on the")) for _ in range(2)]
    assert same[0] == same[1]                                          # a re-run finds its cache
    assert film_jobs.output_name(_bundle("The cat", "w-2")) != film_jobs.output_name(_bundle("The cat"))
    for prompt in ("a/b/../c", "\x00\x1f\x7f\u202e", "🙂" * 300, "é" * 500, "x\udce9y", ""):
        name = film_jobs.output_name(_bundle(prompt))
        assert "/" not in name and name.isprintable() and not name.startswith((".", "-"))
        assert len(name.encode("utf-8", "surrogatepass")) <= 120
        (tmp_path / name).mkdir()                                      # the file system takes it


def test_the_folder_name_uses_the_weights_of_a_real_bundle(tiny_bundle, tmp_path):
    name = film_jobs.output_name(tiny_bundle)
    assert name.startswith("the-cat-sat-on-the-") and len(name) == len("the-cat-sat-on-the-") + 8


def test_a_bundle_another_run_just_installed_is_kept(tmp_path):
    """Two runs extracting the same new prompt at once: the second to finish keeps the first's
    bundle (same folder, same key) instead of failing, or renaming it from under its scenes."""
    import numpy as np

    from onepass.data import bundle
    target = bundle.save(tmp_path / "prompt-key", {"x": np.zeros(2, np.float32)}, {"cache_key": "k"})
    theirs = sha256_file(target / bundle.TENSORS)
    mine = tmp_path / ".prompt-key.mine"
    mine.mkdir()
    (mine / bundle.META).write_text("{}")
    bundle._install(mine, target)                      # the rename that lost the race
    assert sha256_file(target / bundle.TENSORS) == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prompt-key"]


# ---------------------------------------------------------------------------------------
# Issue 21: the lecture kit and the batch

def _burned_band(tmp_path: Path, text: str, name: str) -> "np.ndarray":
    """The caption band of a frame with `text` burned in (white on dark): a grey image."""
    import numpy as np
    from onepass.voiceover import captions
    video, srt, out = tmp_path / "v.mp4", tmp_path / f"{name}.srt", tmp_path / f"{name}.mp4"
    if not video.exists():
        stand_in_clip(video, seconds=1, size="854x480", picture="color", colour="0x0E1117")
    captions.write_srt([{"start": 0.0, "end": 1.0, "text": text}], srt)
    mixdown.burn_captions(video, srt, out)
    raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-ss", "0.5", "-i", str(out), "-frames:v", "1",
                          "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.uint8).reshape(480, 854)[int(480 * 0.8):]


def test_burned_captions_show_markup_as_written(tmp_path):
    """libass reads `{\\...}` as a style block and ffmpeg's SRT reader drops it and `<i>`: the
    burned caption must draw those characters, as wide as the same text with look-alikes."""
    import numpy as np

    def width(band):
        cols = np.nonzero((band > 200).any(axis=0))[0]
        return 0 if len(cols) == 0 else cols[-1] - cols[0]
    markup = _burned_band(tmp_path, "{\\b1}x{\\b0} <i>y</i> a\\Nb", "markup")
    alike = _burned_band(tmp_path, "(/b1)x(/b0) [i]y[/i] a/Nb", "alike")
    assert 0.9 < width(markup) / width(alike) < 1.5        # braces are a little wider than parentheses
    assert (_burned_band(tmp_path, "{\\", "brace") > 200).any()         # a lone `{\` token is drawn too


@pytest.mark.parametrize("spec", ["tcp://127.0.0.1:abc", "tcp://[::1", "inproc://x", "ucx://127.0.0.1:8786",
                                  "tls://127.0.0.1:8786", "tcp://127.0.0.1:0"])
def test_a_scheduler_address_dask_cannot_use_is_one_clear_line_at_once(spec, tmp_path):
    """dask's Client raised ValueError/TypeError for these ("this is a bug"), then hung 40 s."""
    from tests.helpers import one_clear_line, run_main
    t0 = time.monotonic()
    rc, _, err = run_main("--chapter", "00", "--weights", "tiny", "--voice", "none", "--scheduler", spec,
                          "--out", str(tmp_path / "out"))
    assert rc == 2 and "--scheduler" in one_clear_line(err) and "tcp://HOST:PORT" in err
    assert time.monotonic() - t0 < 10
    assert not (tmp_path / "out").exists()


def _edited_bundle(tiny_bundle, tmp_path: Path, **meta) -> Path:
    import shutil
    copy = tmp_path / "bundle"
    shutil.copytree(tiny_bundle.path, copy)
    data = json.loads((copy / "meta.json").read_text())
    (copy / "meta.json").write_text(json.dumps({**data, **meta}))
    return copy


@pytest.mark.parametrize("meta", [{"top_ids": [1000000000]}, {"top_ids": [-1]}, {"prompt": "The cat\x00"},
                                  {"prompt": "The \x1b[31mcat"}])
def test_a_bundle_whose_meta_cannot_be_shown_is_refused_on_load(meta, tiny_bundle, tmp_path):
    """top_ids outside the vocabulary raised IndexError/OverflowError; a stored prompt holding NUL
    or ESC failed inside a scene (Pango): both are checked when the bundle loads."""
    from tests.helpers import one_clear_line, run_main
    rc, _, err = run_main("--inspect", "--bundle", str(_edited_bundle(tiny_bundle, tmp_path, **meta)))
    line = one_clear_line(err)
    assert rc == 2 and ("top_ids" in line or "control characters (U+00" in line), line


def test_an_empty_out_is_refused_not_the_current_folder(tmp_path, monkeypatch):
    from tests.helpers import one_clear_line, run_main
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_main("--chapter", "00", "--weights", "tiny", "--voice", "none", "--out", "")
    assert rc == 2 and "--out: must be a non-empty string" in one_clear_line(err)
    assert list(tmp_path.iterdir()) == []


def test_manifest_out_starts_at_home_and_an_unwritable_one_is_refused_up_front(tmp_path, monkeypatch):
    from onepass.film.make import batch
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    job = '[[job]]\nprompt = "hi"\nchapters = ["00"]\nweights = "tiny"\nvoice = "none"\nout = "{}"\n'
    (tmp_path / "a.toml").write_text(job.format("~/x"))
    assert batch.load_manifest(tmp_path / "a.toml")[0].out == tmp_path / "home" / "x"
    (tmp_path / "b.toml").write_text(job.format("/proc/nope"))
    with pytest.raises(batch.ManifestError, match="job 1, out: /proc/nope cannot be created"):
        batch.load_manifest(tmp_path / "b.toml")


def test_a_lecture_kit_that_cannot_be_written_is_refused_before_the_build(tiny_bundle, tmp_path, monkeypatch):
    from tests.helpers import one_clear_line, run_main
    from onepass.film.plan.jobs import destination
    dest = destination(tmp_path / "out", tiny_bundle, "low", "en")
    dest.mkdir(parents=True)
    (dest / "clips").write_text("not a folder")
    built = []
    monkeypatch.setattr(build, "render", lambda *a, **k: built.append(a) or [])
    rc, _, err = run_main("--chapter", "00", "--bundle", str(tiny_bundle.path), "--voice", "none", "--clips",
                          "--out", str(tmp_path / "out"))
    assert rc == 2 and "lecture kit's folder" in one_clear_line(err) and built == []


def test_batch_jobs_that_resolve_to_the_same_folder_cannot_overwrite_each_other(tmp_path, monkeypatch):
    """weights "auto" is "random" here: the two jobs write the same chapter file, one burned."""
    from onepass.data import extract
    from onepass.film.make import batch
    monkeypatch.setattr(extract, "find_real_weights", lambda *a, **k: None)
    job = '[[job]]\nprompt = "hi"\nchapters = ["00"]\nvoice = "none"\nweights = "{}"\n'
    (tmp_path / "c.toml").write_text(job.format("auto") + job.format("random") + "burn_captions = true\n")
    with pytest.raises(batch.ManifestError, match="job 2, out: would overwrite job 1's chapter 00"):
        batch.load_manifest(tmp_path / "c.toml")
    (tmp_path / "d.toml").write_text(job.format("random") + 'watch = "none"\n' + job.format("random")
                                     + 'watch = " hi"\n')
    with pytest.raises(batch.ManifestError, match="job 2, out: would overwrite job 1's chapter 00"):
        batch.load_manifest(tmp_path / "d.toml")


MANIFEST_VALUES = [None, True, 0, -1, 1.5, "", " ", "all", "02", "x" * 300, "~/m", "/proc/nope", "/dev/null",
                   "..", "a\x00b", "\u202e", "tcp://h:1", [], ["02"], ["02", 2], [[]], {}, {"a": 1}, "none", "tiny",
                   "gif", "ur", "recorded:/nope"]


def test_any_manifest_value_ends_in_exit_0_or_2_without_a_traceback(tiny_bundle, tmp_path, monkeypatch):
    """Every key, wrong types and paths: one clear report (exit 2) or a run (exit 0), nothing else."""
    import tomllib
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from onepass.film.make import request
    from tests.helpers import run_main
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(request, "produce", lambda *a, **k: request.Produced([], None, [], []))
    monkeypatch.setattr(request, "get_bundle", lambda *a, **k: tiny_bundle)
    keys = st.sampled_from(list(request.MANIFEST_KEYS) + ["jobs", "scheduler", "bundle", "nope"])

    def toml_value(v):
        return "[" + ", ".join(toml_value(x) for x in v) + "]" if isinstance(v, list) else \
            "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}" if isinstance(v, dict) else \
            ("true" if v else "false") if isinstance(v, bool) else repr(v) if isinstance(v, (int, float)) else \
            '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\x00", "\\u0000") + '"'

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(keys, st.sampled_from([v for v in MANIFEST_VALUES if v is not None]), max_size=5))
    def one(table):
        text = "[[job]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in table.items())
        tomllib.loads(text)
        (tmp_path / "m.toml").write_text(text)
        rc, _, err = run_main("--batch", str(tmp_path / "m.toml"), "--jobs", "1")
        assert "Traceback" not in err and rc in (0, 2), (text, err)
    one()


# ---------------------------------------------------------------------------------------
# A dask worker killed mid-scene (issue 21)

def test_a_worker_killed_mid_scene_is_named_while_the_client_waits_for_another(tmp_path):
    """The client once waited 83 s in silence for a worker to take a killed one's scene: it now
    names the worker, the scene and what it waits for."""
    from distributed import Client, LocalCluster
    from onepass.film.run import cluster as film_cluster
    from tests import cluster_hooks
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "meta.json").write_text(json.dumps({"cache_key": "k", "tensors_sha256": "t", "schema_version": 1}))
    holding, lines = tmp_path / "holding", []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as lc, \
            Client(lc, set_as_default=False) as client:
        ex = film_cluster.DaskExecutor(lc.scheduler_address, client=client)
        ex.log = lines.append
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", lc.scheduler_address,
                                   "--no-nanny", "--nthreads", "1", "--no-dashboard",
                                   "--local-directory", str(tmp_path / "worker")],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            client.wait_for_workers(1, timeout=60)
            address = next(iter(client.nthreads()))
            client.run(cluster_hooks.hold, str(holding))
            job = film_jobs.SceneJob("02", "Scores", 0, "2" * 64, tmp_path / ".scenes" / f"ch02-Scores.{'2' * 16}")
            fut = ex.submit(runner.Runner(bundle, "low", "none", None), job)
            for _ in range(600):
                if holding.exists():
                    break
                assert not fut.done(), fut.exception()
                time.sleep(0.1)
            assert holding.exists(), "the scene task never started"
            time.sleep(film_cluster.DaskExecutor.WATCH_SECONDS + 0.5)     # a scene runs longer than a look
            os.kill(worker.pid, signal.SIGKILL)            # mid-scene, no chance to say goodbye
            for _ in range(150):
                if any("was lost" in line for line in lines):
                    break
                time.sleep(0.1)
            died = [line for line in lines if "was lost" in line]
            assert len(died) == 1, lines
            assert address in died[0] and "scene Scores of chapter 02" in died[0]
            assert "waiting for another worker" in died[0] and "none connected" in died[0]
            assert "Ctrl-C" in died[0] and not fut.done()
        finally:
            worker.kill()
            worker.wait()
            ex.stop()
            ex.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------------------
# A scene process killed with its dask worker (issue 21)

def test_a_media_folder_whose_process_is_gone_is_removed_by_the_next_run(tmp_path, monkeypatch):
    """A scene process killed with its dask worker cannot remove its manim media folder, and that
    folder is tagged by the worker's scratch folder, which no later run writes into: it is found by
    the process id in its name instead. A live process's folder is kept."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    prefix = runner.media_root() / runner.media_prefix(tmp_path / "worker" / "scene-x")
    made = subprocess.run([sys.executable, "-c", "import os, sys; from onepass.film.run.runner import media_folder; "
                           f"print(media_folder({str(prefix)!r})); sys.stdout.flush(); os._exit(0)"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    dead = Path(made.stdout.strip())
    (dead / "videos").mkdir()
    (dead / "videos" / "partial.mp4").write_bytes(b"frames")
    alive = runner.media_folder(prefix)
    assert dead.is_dir() and dead.parent == alive.parent == runner.media_root()
    assert f"p{os.getpid()}-" in alive.name and alive.name.startswith(runner.MEDIA_PREFIX)
    lines = []
    build.remove_leftovers(tmp_path / "another-out", lines.append)   # any later run on this machine
    assert not dead.exists() and alive.is_dir()
    assert any("no longer run" in line for line in lines), lines
    assert runner.remove_dead_media() == 0                            # a worker's task does the same
