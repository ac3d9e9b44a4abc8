"""Scene processes forked from a server that imported manim once (film/run/forkserver.py): the same
file as the command makes, the same errors, the same clean ends on stop and on a dead server, and
never older code than the disk holds."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from onepass.film.run import forkserver, runner
from onepass.film.plan.errors import PipelineError
from onepass.film.plan.jobs import SceneJob
from onepass.voiceover import media
from onepass.words.catalog import CATALOGS, SOURCE


def _job(work: Path, chapter: str, scene: str, tag: str) -> SceneJob:
    return SceneJob(chapter, scene, 0, tag * 64, work / ".scenes" / f"ch{chapter}-{scene}.{tag * 16}")


def _media_of(work: Path) -> list[Path]:
    return list(runner.media_root().glob(runner.media_prefix(work / ".scenes") + "*"))


def _cues(job: SceneJob) -> list:
    """The scene's cues, less whether its voice clips came from the voice cache (the second run's do)."""
    return [{k: v for k, v in cue.items() if k != "cached"} if isinstance(cue, dict) else cue
            for cue in json.loads(job.cues.read_text(encoding="utf-8"))]


def _server(r: runner.Runner) -> forkserver.Server:
    return forkserver._servers[tuple(sorted(r.env.items()))]


@pytest.mark.render
def test_a_forked_scene_is_the_file_the_command_makes(tiny_bundle, tmp_path, monkeypatch):
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    forked = r.run(_job(tmp_path / "forked", "00", "SameWord", "a"))
    assert _server(r).forked, "the scene did not go through the fork server"
    monkeypatch.setenv(forkserver.SERVER_ENV, "off")
    fresh = r.run(_job(tmp_path / "fresh", "00", "SameWord", "a"))
    assert forked.job.mp4.read_bytes() == fresh.job.mp4.read_bytes()
    assert _cues(forked.job) == _cues(fresh.job)
    assert forked.frames == fresh.frames > 0 and 0 < forked.cpu
    assert media.decode_problems(forked.job.mp4) is None
    assert _media_of(tmp_path / "forked") == []


def test_a_failing_scene_says_why_as_the_command_does(tiny_bundle, tmp_path):
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    job = _job(tmp_path, "02", "NoSuchScene", "b")
    with pytest.raises(PipelineError, match="exit 1") as caught:
        r.run(job)
    assert "chapter 02 has no scene 'NoSuchScene'" in str(caught.value)
    assert _server(r).forked
    assert "has no scene" in job.log.read_text()


def test_code_changed_on_disk_gets_a_server_that_imports_it_anew(tmp_path):
    env = runner.child_env()
    first = forkserver._server_for(env)
    assert first is not None and first.usable()
    assert any(p.endswith(os.path.join("scenes", "ch02_attention.py")) for p in first.files), \
        "the server did not import the scenes"
    # the English catalog it read once for every scene: an edited or added file retires it too
    english = CATALOGS / SOURCE
    assert {str(english), *(str(p) for p in english.glob("*.po"))} <= set(first.files)
    path = next(iter(first.files))
    first.files[path] = [first.files[path][0] - 1, first.files[path][1]]     # as if edited since
    second = forkserver._server_for(env)
    assert second is not None and second is not first and second.usable()
    first.proc.wait(timeout=60)            # the retired one ends (it ran nothing)


def _render_in_thread(r: runner.Runner, job: SceneJob) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def go():
        try:
            out["result"] = r.run(job)
        except BaseException as exc:
            out["error"] = exc
    t = threading.Thread(target=go)
    t.start()
    return t, out


def _wait_for_media(work: Path, running, why=lambda: "the scene never made its media folder", settle: float = 1.0):
    """Wait until a scene under `work` has made its media folder, or `running()` says it ended; then
    `settle` seconds more (inside manim's render)."""
    for _ in range(1200):
        if _media_of(work) or not running():
            break
        time.sleep(0.05)
    assert _media_of(work), why()
    time.sleep(settle)


@pytest.mark.render
def test_stop_ends_a_forked_scene_and_its_media_folder(tiny_bundle, tmp_path):
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    job = _job(tmp_path, "02", "Scores", "c")
    t, out = _render_in_thread(r, job)
    _wait_for_media(tmp_path, t.is_alive)
    r.stop()
    t.join(timeout=60)
    assert isinstance(out.get("error"), PipelineError) and "stopped" in str(out["error"])
    assert _media_of(tmp_path) == [] and not job.mp4.exists()


@pytest.mark.render
def test_a_server_that_dies_ends_its_scene_and_the_next_gets_a_new_one(tiny_bundle, tmp_path):
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    job = _job(tmp_path, "02", "Scores", "d")
    t, out = _render_in_thread(r, job)
    _wait_for_media(tmp_path, t.is_alive)
    dead = _server(r)
    os.kill(dead.proc.pid, signal.SIGKILL)
    t.join(timeout=60)
    assert isinstance(out.get("error"), PipelineError) and "failed to render" in str(out["error"])
    for _ in range(60):                    # the scene got SIGTERM (its parent died) and unwound
        if not _media_of(tmp_path):
            break
        time.sleep(0.05)
    assert _media_of(tmp_path) == [] and not job.mp4.exists()
    again = r.run(_job(tmp_path / "again", "00", "SameWord", "e"))
    assert again.frames > 0 and _server(r) is not dead


@pytest.mark.render
def test_a_server_whose_caller_is_gone_ends_its_scenes(tiny_bundle, tmp_path):
    """The caller goes while its scene renders: the scene unwinds, leaving no media folder and no MP4.
    Where this test's process was not scheduled until the scene had finished (a loaded machine: the scene
    renders about 5 s after its media folder appears), the premise did not hold and it tries again."""
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    for attempt in range(3):
        work = tmp_path / str(attempt)
        server = forkserver.Server(r.env)           # one of this test's own (not the shared one)
        job = _job(work, "02", "Scores", "f")
        job = replace(job, stem=job.stem.parent / "stage" / job.stem.name)     # where Runner.run stages it
        job.mp4.parent.mkdir(parents=True)
        job.log.touch()
        child = server.fork(r.argv(job, job.cues)[3:], job.log)
        _wait_for_media(work, lambda: child.poll() is None, job.log.read_text, settle=0.5)
        finished_first = job.mp4.exists()            # written whole, at the scene's very end
        server.sock.shutdown(socket.SHUT_RDWR)       # as when the render that started it is killed
        ended = child.wait()
        server.proc.wait(timeout=60)
        if not finished_first:
            break
    assert not finished_first, "the scene finished before its caller went, three times"
    assert ended != 0
    assert _media_of(work) == [] and not job.mp4.exists(), job.log.read_text()
    # it unwound as SIGTERM unwinds a scene: no code ran on while it did (a narration block that played
    # its line's rest on the way out raised a second error in a segment still open)
    assert "During handling of the above exception" not in job.log.read_text(), job.log.read_text()


def _server_with_grace(env: dict, grace: float) -> forkserver.Server:
    """A server of this test's own whose scenes get `grace` seconds to unwind instead of UNWIND_GRACE: the same
    serve(), started with the module's constant set first (the server is a process of its own)."""
    real = subprocess.Popen

    def popen(cmd, *args, **kwargs):
        assert cmd[1:3] == ["-m", "onepass.film.run.forkserver"], cmd
        start = ("import sys; from onepass.film.run import forkserver as f; "
                 f"f.UNWIND_GRACE = {grace!r}; sys.exit(f.serve(int(sys.argv[1])))")
        return real([cmd[0], "-c", start, *cmd[3:]], *args, **kwargs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(forkserver.subprocess, "Popen", popen)
        return forkserver.Server(env)


def _held(pid: int) -> bool:
    """Whether process `pid` is stopped (by SIGSTOP), within a few seconds of being told to."""
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in "tT":
            return True
        time.sleep(0.05)
    return False


STUCK_GRACE = 1.0      # the server kills a stuck scene this long after its caller went (UNWIND_GRACE: 10 s)


@pytest.mark.render
def test_a_scene_stuck_after_its_caller_is_gone_is_killed_and_its_media_folder_removed(tiny_bundle, tmp_path):
    """A scene that cannot unwind (here: stopped, so SIGTERM waits) must not keep its server, or
    its media folder, alive for ever once the render that started it is gone. The server here gives
    its scenes STUCK_GRACE seconds, not UNWIND_GRACE's 10: a stopped scene never unwinds, however long."""
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    server = _server_with_grace(r.env, STUCK_GRACE)
    job = _job(tmp_path, "02", "Scores", "g")
    job = replace(job, stem=job.stem.parent / "stage" / job.stem.name)
    job.mp4.parent.mkdir(parents=True)
    job.log.touch()
    child = server.fork(r.argv(job, job.cues)[3:], job.log)
    _wait_for_media(tmp_path, lambda: child.poll() is None, job.log.read_text)
    assert child.started.wait(timeout=30) and child.pid
    os.kill(child.pid, signal.SIGSTOP)
    server.sock.shutdown(socket.SHUT_RDWR)
    server.proc.wait(timeout=STUCK_GRACE + 60)
    assert _media_of(tmp_path) == [] and not job.mp4.exists()


@pytest.mark.render
def test_a_retired_server_finishes_the_scene_it_runs_however_long_it_takes(tiny_bundle, tmp_path, monkeypatch):
    """Code edited while a scene renders retires its server (the next scene gets a new one); the running
    scene still finishes. Retiring waited 60 s and then killed the server and its scenes ("exit -15":
    issue 51's 64-token chapter 03 while a file changed); here the default wait is half a second, and the
    scene is held still (SIGSTOP) for three times that once its server is retired, so a retirement that
    relied on the wait fails."""
    monkeypatch.setattr(forkserver.Server.close, "__defaults__", (0.5,))
    r = runner.Runner(tiny_bundle.path, "draft", "none", None)
    job = _job(tmp_path, "00", "SameWord", "h")
    t, out = _render_in_thread(r, job)
    _wait_for_media(tmp_path, t.is_alive, settle=0.0)
    old = _server(r)
    [child] = old.children.values()
    assert child.started.wait(timeout=30) and child.pid
    os.kill(child.pid, signal.SIGSTOP)     # it takes as long as it takes: here, longer than the wait
    try:
        assert _held(child.pid), "the scene ended before the test could hold it"
        path = next(iter(old.files))
        old.files[path] = [old.files[path][0] - 1, old.files[path][1]]         # as if edited since
        retired = time.monotonic()
        assert forkserver._server_for(r.env) is not old      # returns once the new server has imported
        time.sleep(max(0.0, retired + 1.5 - time.monotonic()))     # held three times the wait, in all
        assert old.proc.poll() is None and child.poll() is None, "the retired server ended while its scene ran"
    finally:
        os.kill(child.pid, signal.SIGCONT)
    t.join(timeout=300)
    assert "error" not in out, out.get("error")
    assert out["result"].frames > 0 and job.mp4.exists()
    old.proc.wait(timeout=60)              # and then it ends
