"""The film build (film/): cache keys, what a change re-renders, parallel jobs, exact joins.

Scenes here are rendered by a stand-in command (a few frames of ffmpeg's test picture), so the
tests exercise the pipeline's own decisions in seconds; chapter modules live in a throwaway
project folder, so editing them touches nothing real.
"""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import extract  # noqa: E402
from onepass.film.make import build  # noqa: E402
from onepass.film.run import join  # noqa: E402
from onepass.film.plan import keys  # noqa: E402
from onepass.film.plan import jobs as film_jobs  # noqa: E402
from onepass.voiceover import media  # noqa: E402

from tests.helpers import (CHAPTER, FAKE_RENDER, FPS, FRAMES, Project, StandInVoice, stand_in_clip,  # noqa: E402
                           stand_in_tone)

@pytest.fixture()
def project(tmp_path):
    return Project(tmp_path)


def frames_and_seconds(path: Path) -> tuple[int, float]:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                          "stream=nb_read_packets,r_frame_rate,duration", "-of", "json", str(path)],
                         capture_output=True, text=True, check=True).stdout
    s = json.loads(out)["streams"][0]
    return int(s["nb_read_packets"]), float(s["duration"])


def test_first_run_renders_every_scene_and_joins_them(project):
    r = project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]
    assert [s.cached for s in r.scenes] == [False, False, False]
    assert r.final.is_file() and r.final.with_suffix(".srt").is_file() and r.final.with_suffix(".png").is_file()
    assert "line of Beta" in r.final.with_suffix(".srt").read_text()


def test_unchanged_rerun_renders_nothing_and_keeps_the_joined_file(project):
    first = project.render()
    stamp = first.final.stat().st_mtime_ns
    again = project.render()
    assert project.last == []                                 # no scene process was even started
    assert all(s.cached for s in again.scenes)
    assert not again.joined and again.final.stat().st_mtime_ns == stamp


def test_changed_narration_line_rerenders_only_the_scene_that_speaks_it(project):
    project.render()
    project.lines["b"] = "Second line, reworded."
    r = project.render()
    assert project.last == ["Beta"]
    assert r.joined                                           # the chapter is rebuilt from the new part


def test_narration_script_code_is_shared_by_the_chapter(project):
    project.render()
    project.script.write_text(project.script.read_text() + "\n\ndef extra():\n    return 3\n")
    project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]         # the values every line may name


def test_changed_scene_code_rerenders_only_that_scene(project):
    project.render()
    project.chapter.write_text(CHAPTER.replace("            helper()", "            helper()\n            helper()"))
    project.render()
    assert project.last == ["Beta"]


def test_comments_and_formatting_do_not_count_as_changes(project):
    project.render()
    project.chapter.write_text(CHAPTER.replace("class Gamma(Base):", "# a comment\nclass Gamma(Base):  # another")
                               .replace("        with self.beat(\"c\"):", "        with self.beat( 'c' ):"))
    project.render()
    assert project.last == []


def test_keys_read_from_kept_source_facts_are_the_keys_read_afresh(project, tmp_path, monkeypatch):
    """An unchanged re-run reads its keys from facts kept on disk (film/plan/source_memo.py): they are
    the keys a fresh read gives, a damaged fact is read again, an edited file is read afresh."""
    def stems():
        return [j.stem.name for j in film_jobs.plan(["99"], project.bundle, project.options())["99"]]

    monkeypatch.setenv("ONEPASS_SOURCE_CACHE", "off")
    fresh = stems()
    kept = tmp_path / "facts"
    monkeypatch.setenv("ONEPASS_SOURCE_CACHE", str(kept))
    assert stems() == fresh and len(list(kept.glob("*.json"))) > 5        # read, then kept
    assert stems() == fresh                                                # read back
    for f in kept.glob("*.json"):
        f.write_text('{"half')
    assert stems() == fresh                                                # damaged: read again
    project.chapter.write_text(CHAPTER.replace("            helper()", "            helper()\n            helper()"))
    edited = stems()
    monkeypatch.setenv("ONEPASS_SOURCE_CACHE", "off")
    assert edited == stems() and [a == b for a, b in zip(edited, fresh)] == [True, False, True]


def test_changed_shared_code_rerenders_every_scene_using_it(project):
    project.render()
    project.chapter.write_text(CHAPTER.replace("    return 1", "    return 10"))   # the chapter's own helper
    project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]
    project.shared.write_text("def helper():\n    return 20\n")                   # a module it imports
    project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]


def test_new_bundle_rerenders_everything(project):
    project.render()
    project.bundle.meta["cache_key"] = "bundle-2"        # another prompt or other weights
    project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]


def test_quality_and_voice_are_part_of_the_key(project):
    project.render()
    project.render(voice=StandInVoice())
    assert project.last == ["Alpha", "Beta", "Gamma"]
    project.render(voice=StandInVoice())
    assert project.last == []


def test_force_rerenders_everything(project):
    project.render()
    project.render(force=True)
    assert project.last == ["Alpha", "Beta", "Gamma"]


def test_jobs_run_scenes_at_the_same_time(project, tmp_path):
    project.barrier, project.barrier_n = str(tmp_path / "barrier"), 3
    (tmp_path / "barrier").mkdir()
    r = project.render(jobs=3)          # each scene waits until all three have started
    assert [s.cached for s in r.scenes] == [False, False, False]


def test_a_failing_scene_is_named_and_the_others_are_kept(project):
    project.fail = "Beta"
    with pytest.raises(build.PipelineError, match="scene Beta of chapter 99"):
        project.render(jobs=1)
    project.fail = "-"
    project.render()
    assert project.last == ["Beta"]     # Alpha and Gamma finished before and were cached


def test_joined_chapter_is_exactly_as_long_as_its_parts(project):
    r = project.render()
    frames, seconds = frames_and_seconds(r.final)
    assert frames == sum(FRAMES.values())                     # no gap, no doubled frame at a join
    assert abs(seconds - sum(FRAMES.values()) / FPS) <= 1 / FPS
    assert abs(r.seconds - sum(FRAMES.values()) / FPS) < 1e-9
    assert r.report["frames"] == r.report["parts_frames"] == frames


def test_old_renders_of_a_scene_are_pruned(project):
    for i in range(film_jobs.KEEP_VARIANTS + 1):
        project.lines["a"] = f"Version {i}."
        project.render()
    work = film_jobs.destination(project.out, project.bundle, "low") / ".scenes"
    alphas = [p for p in work.glob("ch99-fake-chapter-Alpha.*.mp4")]
    assert len(alphas) == film_jobs.KEEP_VARIANTS


def test_spoken_beats_are_read_from_the_scene_code(project):
    src = keys.chapter_source("scenes.ch99_fake", project.root)
    assert src.beats == {"Alpha": ["a"], "Beta": ["b"], "Gamma": ["c"]}
    # a loop over a literal tuple of keys is read too
    looped = CHAPTER.replace('        with self.beat("c"):\n            pass',
                             '        for key, n in zip(("c", "d"), (1, 2)):\n'
                             '            with self.beat(key):\n                pass')
    project.chapter.write_text(looped)
    assert keys.chapter_source("scenes.ch99_fake", project.root).beats["Gamma"] == ["c", "d"]


@pytest.mark.parametrize("edit, message", [
    (('with self.beat("c")', "with self.beat(self.key)"), r"ch99_fake\.py:\d+: `self\.beat\(self\.key\)`"),
    (('with self.beat("c")', 'with self.beat("c" + suffix)'), "string literal"),
    (('with self.beat("c"):\n            pass', 'for k in KEYS:\n            with self.beat(k):\n                pass'),
     r"self\.beat\(k\)"),
    (("SCENES = [Alpha, Beta, Gamma]", "SCENES = [Alpha, Beta] + [Gamma]"), "literal list"),
    (("SCENES = [Alpha, Beta, Gamma]", "SCENES = [Alpha, Beta, Gamma, Delta]"), "Delta, not defined"),
])
def test_a_chapter_that_breaks_a_key_convention_fails_loudly(project, edit, message):
    """A beat key or a scene list the cache key cannot read from the source is an error naming
    the file and line, not a silent guess (nothing is rendered)."""
    project.chapter.write_text(CHAPTER.replace(*edit))
    with pytest.raises(build.PipelineError, match=message):
        project.render()
    assert project.rendered() == []


def test_shared_scene_code_with_a_computed_beat_fails_loudly(project):
    project.shared.write_text("def helper():\n    return 2\n\n\ndef card(scene, key):\n    with scene.beat(key):\n"
                              "        pass\n")
    with pytest.raises(build.PipelineError, match=r"shared\.py:6"):
        project.render()


def test_every_chapter_speaks_each_of_its_lines_once():
    """Read from the sources alone (as the cache key reads them): the beats the scenes and the
    shared scene code speak are exactly the chapter's script lines plus the title card."""
    from onepass.voiceover import script
    options = film_jobs.BuildOptions()
    for chapter in options.chapter_titles():
        module = options.chapter_module(chapter)
        src = keys.chapter_source(module)
        deps = keys.dependencies([module])
        shared = keys.shared_beats({n: p for n, p in deps.items() if n != module})
        spoken = [b for s in src.scenes for b in src.beats[s] if b not in shared] + shared
        assert sorted(spoken) == sorted({"title", *script.beats(chapter)}), chapter    # the catalog's lines


def test_a_cached_rerun_imports_neither_manim_nor_torch(tiny_bundle, bundle_root):
    """What an unchanged re-run of render.py does before it knows every scene is cached: load
    the bundle (and chapter 07's second bundle, as request.get_bundle attaches it), plan the chapters
    (keys from the sources), check the joins. Manim (2 s) and torch are imported only when something
    must render or be extracted."""
    other = extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=bundle_root,
                            log=lambda m: None)
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from onepass import cli as render
from onepass.data import bundle
from onepass.film.plan import jobs
from onepass.voiceover import services
voice = services.make_service("none")
b = bundle.load({str(tiny_bundle.path)!r})
b.compare = bundle.load({str(other.path)!r})
plans = jobs.plan(list(render.chapters()), b, jobs.BuildOptions(voice=voice))
assert all(plans.values())
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("manim", "manim_voiceover", "torch", "transformers"))
print(heavy)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_ffconcat_listing_quotes_awkward_paths(tmp_path):
    folder = tmp_path / "it's a 'folder'"
    folder.mkdir()
    parts = []
    for i, n in enumerate((4, 6)):
        p = folder / f"part '{i}'.mp4"
        stand_in_clip(p, frames=n, size="64x36", picture="testsrc")
        parts.append(p)
    out = folder / "joined.mp4"
    join.join_parts(parts, [[] for _ in parts], out, voiced=False)
    assert media.video_facts(out) == (10, 15.0)


def test_atomic_writes_leave_the_old_file_or_the_new_one(tmp_path):
    from onepass.data.files import write_json, write_text
    target = tmp_path / "stamp.json"
    write_json(target, {"keys": ["a"]})
    assert json.loads(target.read_text()) == {"keys": ["a"]}
    with pytest.raises(TypeError):
        write_json(target, {"keys": object()})            # fails before anything is replaced
    assert json.loads(target.read_text()) == {"keys": ["a"]}
    write_text(target, "{}")
    assert target.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == ["stamp.json"]
    assert target.stat().st_mode & 0o644 == 0o644          # readable like any file written with open()


def test_render_py_accepts_jobs():
    from onepass import cli as render
    assert render.parse_args(["--chapter", "02", "--jobs", "3"]).jobs == 3
    assert render.parse_args(["--chapter", "02"]).jobs is None          # the pipeline uses every core
    from onepass.film.make import request      # the request's validator refuses what argparse lets through
    with pytest.raises(request.RequestError, match="--jobs: must be at least 1"):
        request.from_args(render.parse_args(["--chapter", "02", "--jobs", "0", "--voice", "none"]))


def test_joined_picture_keeps_every_frame(tmp_path):
    parts = []
    for i, n in enumerate((5, 9, 4)):
        p = tmp_path / f"p{i}.mp4"
        stand_in_clip(p, frames=n, size="64x36", picture="testsrc")
        parts.append(p)
    out = tmp_path / "joined.mp4"
    join.join_parts(parts, [[] for _ in parts], out, voiced=False)
    frames, fps = media.video_facts(out)
    assert frames == 18 and Fraction(fps) == 15


def test_voiced_chapter_audio_is_as_long_as_the_picture(project, tmp_path):
    pytest.importorskip("onepass.voiceover.mixdown")
    clip = tmp_path / "clip.wav"               # 0.3 s of tone: every scene speaks one
    stand_in_tone(clip, 0.3)
    project.fake.write_text(FAKE_RENDER.replace(
        '"text": "line of " + scene}',
        f'"text": "line of " + scene, "clip_start": 0.1, "clip": {str(clip)!r}, '
        '"segments": [{"start": 0.1, "end": 0.4, "text": "line of " + scene}]}'))
    r = project.render(voice=StandInVoice())
    frames, seconds = frames_and_seconds(r.final)
    assert frames == sum(FRAMES.values())
    audio = media.stream_seconds(r.final, "a")
    assert audio is not None and abs(audio - frames / FPS) <= 1 / FPS    # no drift: the track ends with the picture


def test_scene_whose_narration_clip_is_gone_is_rendered_again(project, tmp_path):
    clip = tmp_path / "clip.wav"
    clip.write_bytes(b"RIFF")
    project.fake.write_text(FAKE_RENDER.replace('"text": "line of " + scene}',
                                                f'"text": "line of " + scene, "clip": {str(clip)!r}}}'))
    project.render()
    clip.unlink()                       # e.g. the voice cache was cleared
    project.fake.write_text(FAKE_RENDER)
    project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]


def test_lines_spoken_by_shared_scene_code_count_for_every_scene(project):
    project.shared.write_text("def helper():\n    return 2\n\n\ndef card(scene):\n    with scene.beat('t'):\n"
                              "        pass\n")
    project.lines["t"] = "Chapter ninety-nine."
    project.render()
    project.lines["t"] = "Chapter ninety-nine, again."
    project.render()
    assert project.last == ["Alpha", "Beta", "Gamma"]
    project.lines["a"] = "First line, reworded."
    project.render()
    assert project.last == ["Alpha"]


def test_film_joins_chapters_with_markers_and_shifted_captions(tmp_path):
    from types import SimpleNamespace

    from onepass.voiceover import captions
    results = []
    for i, seconds in enumerate((2, 3)):
        p = tmp_path / f"ch0{i}.mp4"
        stand_in_clip(p, seconds=seconds, size="64x36", picture="testsrc", tone=440)
        captions.write_srt([{"start": 0.5, "end": 1.5, "text": f"line {i}"}], p.with_suffix(".srt"))
        results.append(SimpleNamespace(final=p, chapter=f"0{i}", title=f"Title = {i}"))
    film = join.join_film(results, tmp_path, "One forward pass of GPT-2 small")
    info = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_chapters", "-show_format", "-of", "json", str(film)],
                                     capture_output=True, text=True, check=True).stdout)
    marks = [(round(float(c["start_time"]), 1), c["tags"]["title"]) for c in info["chapters"]]
    assert marks == [(0.0, "00 · Title = 0"), (2.0, "01 · Title = 1")]
    assert abs(float(info["format"]["duration"]) - 5.0) < 0.1
    cues = captions.read_srt(film.with_suffix(".srt"))
    assert [(c["start"], c["text"]) for c in cues] == [(0.5, "line 0"), (2.5, "line 1")]
