"""A course in one command (film/make/batch.py) and scenes on a dask cluster (film/run/cluster.py).

* The manifest validator reports every problem of a file at once and renders nothing.
* One executor shared by two builds renders a scene they share once (stand-in renders: seconds);
  an executor is a concurrent.futures Executor.
* A real LocalCluster (two worker processes) renders chapter 00 (the shortest: any chapter's scenes
  travel the same way) from the tiny model while one
  of its workers is killed mid-scene: the MP4 has the same decoded frames as the local
  render, and a second run sends no task. A worker with other code is refused.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass import cli as render  # noqa: E402
from onepass.data import extract  # noqa: E402
from onepass.film.make import batch, build  # noqa: E402
from onepass.film.run import cluster as film_cluster, executors, scheduler  # noqa: E402
from onepass.film.plan import identity  # noqa: E402
from onepass.film.plan.jobs import SceneJob  # noqa: E402
from onepass.film.run.runner import Runner  # noqa: E402
from onepass.voiceover.media import packet_hashes  # noqa: E402
from tests import cluster_hooks  # noqa: E402
from tests.helpers import Project  # noqa: E402


# ---------------------------------------------------------------------------------------
# The manifest

BAD = '''\
title = "a course"

[[job]]
prompt = "The cat sat on the"
chapters = ["02", "99", "2"]
quality = "ultra"
voise = "none"
burn_captions = "yes"

[[job]]
prompt = ""

[[job]]
prompt = "A"
chapters = "all"
weights = "nope"
clip_format = "gif"

[[job]]
prompt = "B"
chapters = ["02"]
voice = "none"
out = "o"

[[job]]
prompt = "B"
chapters = [2]
voice = "none"
out = "o"

[[job]]
prompt = "B"
chapters = ["02"]
voice = "none"
burn_captions = true
out = "o"
'''

EXPECTED_PROBLEMS = [
    "top level, title: unknown key",
    "job 1, voise: unknown key (did you mean 'voice'?)",
    "job 1, chapters: there is no chapter '99'",
    "job 1, chapters: chapter 02 is listed twice",
    "job 1, quality: must be one of draft, low, medium, high, 4k (got 'ultra')",
    "job 1, burn_captions: must be true or false (got 'yes')",
    "job 2, prompt: must be a non-empty string",
    "job 2, chapters: missing",
    "job 3, weights: must be auto, gpt2, distilgpt2, gpt2-medium, gpt2-large, gpt2-xl, smollm2-135m-instruct, "
    "llama-3.2-1b, qwen3-0.6b, random, peaked, tiny, tiny-peaked, mini, mini-peaked, a directory of weights or a "
    ".gguf file",
    "job 3, clip_format: needs clips = true or slides = true",
    "job 5: repeats job 4",
    "job 6, out: would overwrite job 4's chapter 02",
]


def test_manifest_reports_every_problem_together_and_renders_nothing(tmp_path, monkeypatch, capsys):
    manifest = tmp_path / "course.toml"
    manifest.write_text(BAD)
    with pytest.raises(batch.ManifestError) as err:
        batch.load_manifest(manifest)
    problems = err.value.problems
    for expected in EXPECTED_PROBLEMS:
        assert any(p.startswith(expected) for p in problems), (expected, problems)
    assert len(problems) == len(EXPECTED_PROBLEMS), problems

    # through the CLI: exit 2, every problem printed, nothing extracted, nothing written
    monkeypatch.setattr(extract, "extract", lambda *a, **k: pytest.fail("extracted before validating"))
    assert render.main(["--batch", str(manifest)]) == 2
    shown = " ".join(capsys.readouterr().err.split())
    assert "12 problems, nothing rendered" in shown and "job 6, out: would overwrite" in shown
    assert not (tmp_path / "o").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, problem", [
    ("[[job]\n", "not valid TOML"),
    ("title = 1\n", "no [[job]] tables"),
    ('[[job]]\nprompt = "x"\nchapters = ["02"]\nvoice = "no-such-voice"\n', "job 1, voice: no-such-voice"),
])
def test_manifest_one_line_problems(tmp_path, text, problem):
    manifest = tmp_path / "course.toml"
    manifest.write_text(text)
    with pytest.raises(batch.ManifestError) as err:
        batch.load_manifest(manifest)
    assert any(problem in p for p in err.value.problems), err.value.problems


def test_example_course_loads(tmp_path):
    jobs = batch.load_manifest(ROOT / "examples" / "course.toml")
    assert len({j.prompt for j in jobs}) == 2 and all(j.weights == "random" for j in jobs)
    assert all(len(j.chapters) == 2 and j.quality == "low" for j in jobs)
    assert all(j.out == (ROOT / "out" / "course").resolve() for j in jobs)     # relative to the manifest


# ---------------------------------------------------------------------------------------
# Shared scenes render once (stand-in renders)

def test_a_scene_two_jobs_share_renders_once(tmp_path):
    """Two builds into two folders on one executor: each scene of the chapter is rendered
    once, and both folders get every scene, joined."""
    project = Project(tmp_path)
    options = []
    for name in ("a", "b"):
        options.append(build.BuildOptions(quality="low", out=tmp_path / name, titles={"99": "Fake chapter"},
                                          modules={"99": "scenes.ch99_fake"}, root=project.root,
                                          lines_of=lambda chapter, bundle: dict(project.lines),
                                          command=project.command))
    results = {}
    with executors.LocalExecutor(2) as ex:
        for o in options:
            o.executor = ex
        threads = [threading.Thread(target=lambda o=o: results.setdefault(o.out.name, build.render(
            ["99"], project.bundle, o))) for o in options]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(project.rendered()) == ["Alpha", "Beta", "Gamma"]       # once each
    assert ex.started == 3 and len(ex.shared) == 3
    for name in ("a", "b"):
        r = results[name][0]
        assert r.final.is_file() and all(s.job.cached() for s in r.scenes)
        assert r.final.is_relative_to(tmp_path / name)


# ---------------------------------------------------------------------------------------
# A real LocalCluster

def framemd5(path: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:v:0", "-f", "framemd5", "-"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line and not line.startswith("#")]


def same_frames(a: Path, b: Path) -> bool:
    """Whether two videos decode to the same frames. The same encoded packets decode alike, and
    comparing them is a demux (0.07 s for chapter 00 at draft, against 1.3 s of CPU to decode it);
    only videos whose packets differ are decoded and compared frame by frame."""
    return packet_hashes(a) == packet_hashes(b) or framemd5(a) == framemd5(b)


@pytest.fixture(scope="module")
def kill_marker(tmp_path_factory):
    return tmp_path_factory.mktemp("kill") / "kill-once"


@pytest.fixture(scope="module")
def cluster(kill_marker):
    """Two worker processes, one scene at a time each, with the test's hooks on every worker
    (tests/cluster_hooks.py: a task count, and a kill armed only when the marker file exists)."""
    with film_cluster.DaskExecutor("local:2") as ex:
        ex.client.register_plugin(cluster_hooks.Hooks(str(kill_marker)))
        yield ex


def tasks_run(ex) -> int:
    """Scene tasks the cluster's workers started since they started."""
    return sum(ex.client.run(cluster_hooks.tasks_run).values())


def test_an_executor_runs_any_callable_as_a_concurrent_futures_executor(cluster):
    import concurrent.futures as cf
    with executors.LocalExecutor(2) as local:
        assert isinstance(local, cf.Executor) and list(local.map(abs, [-1, -2])) == [1, 2]
    assert isinstance(cluster, cf.Executor) and cluster.submit(sum, [1, 2]).result(timeout=60) == 3
    with pytest.raises(RuntimeError):
        local.submit(abs, -1)                    # after shutdown, as any executor


def test_worker_with_other_code_is_refused(cluster):
    request = {"expect": dict(identity.code_identity(), code="0123456789abcdef")}
    fut = cluster.client.submit(film_cluster.render_task, request, {}, pure=False)
    with pytest.raises(identity.WorkerMismatch) as err:
        fut.result()
    message = str(err.value.args[0])
    assert "refused" in message and "scene code" in message and "client: 0123456789abcdef" in message
    assert "make install" in message


def test_each_bundle_reaches_the_workers_as_its_own(cluster, tiny_bundle, bundle_root):
    """Two prompts' bundles hold files of the same names: a task for each must get its own files
    (they once shared dask keys named "meta.json", and one prompt's scenes drew the other's numbers)."""
    other = extract.extract("The capital of Pakistan is", "tiny", root=bundle_root, log=lambda m: None)
    sent = [cluster._bundle(b.path) for b in (tiny_bundle, other)]
    seen = [cluster.client.submit(lambda files: json.loads(files["meta.json"])["cache_key"], files, pure=False).result()
            for _, files in sent]
    assert seen == [b.meta["cache_key"] for b in (tiny_bundle, other)]
    assert seen[0] != seen[1]


@pytest.mark.render
def test_a_bundle_the_cluster_lost_is_sent_again(cluster, tiny_bundle, tmp_path):
    """Scattered data has no recipe: when every worker holding a bundle is gone, dask drops the
    tasks that need it. The executor scatters the bundle anew and sends the scene once more."""
    _, lost = cluster._bundle(tiny_bundle.path)
    cluster.client.cancel(lost)                 # as if every worker holding it had died
    runner = Runner(tiny_bundle.path, "draft", "none", None)
    job = SceneJob("00", "SameWord", 1, "0" * 64, tmp_path / ".scenes" / f"ch00-SameWord.{'0' * 16}")
    result = cluster.submit(runner, job).result(timeout=300)
    assert result.frames > 0 and job.mp4.is_file() and job.damage() is None
    assert cluster._bundle(tiny_bundle.path)[1].key != lost.key


@pytest.mark.render
def test_a_cluster_whose_workers_are_still_starting_is_waited_for(tiny_bundle, tmp_path, monkeypatch):
    """On SLURM the workers come when their jobs leave the queue: a scene sent before any worker
    has joined waits for one instead of failing. What is checked is the client's wait, so the worker
    that joins late is a thread of this process (a worker process is the killed-worker test's), and
    each of the client's waits lasts one second instead of JOIN_SECONDS."""
    from distributed import Client, LocalCluster
    monkeypatch.setattr(film_cluster.DaskExecutor, "JOIN_SECONDS", 1.0)
    said = []
    with LocalCluster(n_workers=0, threads_per_worker=1, processes=False, dashboard_address=None) as lc, \
            Client(lc, set_as_default=False, timeout=2) as client, \
            film_cluster.DaskExecutor(lc.scheduler_address, client=client) as ex:
        def log(line):
            said.append(line)
            if line.startswith("no dask worker is connected"):
                # the worker joins only once the client has said it waits (after its first wait), and later
                # than the client's own timeout (scattering gives up then) and a second wait
                threading.Timer(1.5, lambda: lc.scale(1)).start()
        ex.log = log
        runner = Runner(tiny_bundle.path, "draft", "none", None)
        job = SceneJob("00", "SameWord", 1, "1" * 64, tmp_path / ".scenes" / f"ch00-SameWord.{'1' * 16}")
        result = ex.submit(runner, job).result(timeout=120)     # (no worker ever joins unless the client says it waits)
        assert result.frames > 0 and job.damage() is None


CLUSTER_CHAPTER = "00"     # the shortest chapter: what is checked is how scenes travel, not what they draw


@pytest.mark.render
def test_cluster_render_survives_a_killed_worker_and_matches_local(cluster, kill_marker, tiny_bundle, tmp_path):
    local = build.render([CLUSTER_CHAPTER], tiny_bundle, build.BuildOptions(quality="draft", out=tmp_path / "local"))

    kill_marker.write_text("")                  # the first scene task to start kills its worker
    sent = cluster.started
    options = build.BuildOptions(quality="draft", out=tmp_path / "cluster", executor=cluster)
    remote = build.render([CLUSTER_CHAPTER], tiny_bundle, options)
    assert not kill_marker.exists(), "no task killed its worker"
    n = len(remote[0].scenes)
    assert [s.cached for s in remote[0].scenes] == [False] * n
    assert cluster.started - sent == n
    assert [s.job.key for s in remote[0].scenes] == [s.job.key for s in local[0].scenes], \
        "the project's files changed between the two renders (a shared working tree?): run the test again"
    assert same_frames(remote[0].final, local[0].final)
    assert remote[0].final.with_suffix(".srt").read_text() == local[0].final.with_suffix(".srt").read_text()
    assert all(s.job.damage() is None for s in remote[0].scenes)     # the client wrote true cache entries

    # a second run: no cached scene is sent again; a scene whose key changed meanwhile (someone
    # edited its code in a shared working tree) is the only kind that may be
    first = {s.job.key for s in remote[0].scenes}
    sent, ran = cluster.started, tasks_run(cluster)
    again = build.render([CLUSTER_CHAPTER], tiny_bundle, options)
    changed = sum(s.job.key not in first for s in again[0].scenes)
    assert [s.cached for s in again[0].scenes] == [s.job.key in first for s in again[0].scenes]
    assert (cluster.started - sent, tasks_run(cluster) - ran) == (changed, changed)


def test_a_failed_job_stops_no_other_and_the_exit_status_says_which(tmp_path, monkeypatch, capsys):
    """Orchestration only (the renders are stand-ins): job 2's build fails, jobs 1 and 3 still
    run to the end; the summary names job 2 and its reason; exit status 1."""
    manifest = tmp_path / "course.toml"
    manifest.write_text("".join(f'[[job]]\nprompt = "{p}"\nchapters = ["02"]\nweights = "tiny"\nvoice = "none"\n\n'
                                for p in ("A", "B", "C")))
    ran = []

    def fake_render(chapters, bundle, options):
        ran.append(bundle.prompt)
        if bundle.prompt == "B":
            raise build.PipelineError("scene Scores of chapter 02 failed to render (exit 1): boom")
        return []

    monkeypatch.setattr(extract, "extract", lambda prompt, weights, log=None, watch=None, model=None:
                        SimpleNamespace(prompt=prompt, model=model, meta={"cache_key": prompt}))   # the batch reads its folder
    monkeypatch.setattr(batch, "plan", lambda chapters, bundle, options: {"02": []})
    monkeypatch.setattr(build, "render", fake_render)
    assert render.main(["--batch", str(manifest), "--jobs", "1"]) == 1
    assert sorted(ran) == ["A", "B", "C"]
    err = " ".join(capsys.readouterr().err.split())
    assert "job 2 failed: scene Scores of chapter 02 failed to render (exit 1): boom" in err
    assert "job 1 failed" not in err and "job 3 failed" not in err


@pytest.mark.parametrize("spec", ["local:0", "local:x", "http://host:8786", "head:8786"])
def test_a_bad_scheduler_address_is_one_clear_line(spec):
    with pytest.raises(build.PipelineError, match="--scheduler"):
        scheduler.open_executor(spec)
