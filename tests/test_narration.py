"""Narration: scripts render from the bundle, voices, mastering, cache, captions, sync. No network."""
from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from onepass.voiceover import audio, captions, script, services

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def voice_cache(tmp_path, monkeypatch):
    """A private clip cache, so tests never depend on (or fill) the user's."""
    cache = tmp_path / "voice-cache"
    monkeypatch.setenv(services.CACHE_ENV, str(cache))
    return cache


def registered_chapters() -> list[str]:
    from onepass.data.chapters import titles
    return list(titles())


def fast_build(bundle, chapter: str, scene_name: str, voice: str = "none"):
    """construct() with animations skipped (scene time still advances): cues without frames."""
    from onepass.engine.dry_run import dry_run
    from onepass.scenes.base import SceneInputs
    from onepass.scenes.registry import scenes_of
    cls = {c.__name__: c for c in scenes_of(chapter)}[scene_name]
    with dry_run():
        scene = cls(SceneInputs(Path(bundle.path), None, voice))
        scene.render()
    return scene


# -- scripts ------------------------------------------------------------------

@pytest.mark.parametrize("chapter", registered_chapters())
def test_every_chapter_script_renders_against_tiny_bundles(chapter, tiny_bundle, tiny_long_bundle):
    for bundle in (tiny_bundle, tiny_long_bundle):
        lines = script.chapter_lines(chapter, bundle, bundle.ledger())
        assert lines, f"chapter {chapter} has no narration"
        for beat, line in lines.items():
            text = line.text
            assert text.strip() and "{" not in text and "}" not in text, (beat, text)
            assert script.split_sentences(text), (beat, text)


def test_missing_value_fails_loudly_naming_it():
    from onepass.words.catalog import CatalogError, Words
    words = Words.load("en")
    with pytest.raises(CatalogError, match=r"ch02-inputs names d, which the caller does not provide") as info:
        words.line("ch02-inputs", {"T": 5})
    assert "it gives: T" in str(info.value)


def test_missing_value_from_a_chapter_values_fails_at_render(tiny_bundle, monkeypatch):
    from onepass.voiceover.scripts import ch02
    from onepass.words.catalog import CatalogError
    real = ch02.values
    monkeypatch.setattr(ch02, "values", lambda b, l, w: {k: v for k, v in real(b, l, w).items() if k != "T"})
    with pytest.raises(CatalogError, match=r"ch02-\w+ names T"):
        script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger())


def test_sentences_split_on_sentence_ends_only():
    text = "Each row sums to 1.0 exactly. Read “the.” Then 2.6 million FLOPs! Done"
    assert script.split_sentences(text) == ["Each row sums to 1.0 exactly.", "Read “the.”",
                                            "Then 2.6 million FLOPs!", "Done"]
    # any language: Spanish opens a question with ¿, Urdu has no capitals and its own full stop
    assert script.split_sentences("Hola. ¿Qué tal? Bien, e.g. así.") == ["Hola.", "¿Qué tal?", "Bien, e.g. así."]
    assert script.split_sentences("یہ پہلا جملہ ہے۔ یہ دوسرا ہے۔") == ["یہ پہلا جملہ ہے۔", "یہ دوسرا ہے۔"]


# -- voices, stdin, cache -------------------------------------------------------

def test_network_voice_without_credentials_is_a_clear_error(monkeypatch, voice_cache):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(services.VoiceError, match="OPENAI_API_KEY|openai"):
        services.make_service("openai")


def test_unknown_voice_lists_the_choices():
    with pytest.raises(services.VoiceError, match="espeak.*none"):
        services.make_service("klingon")


def test_auto_picks_an_installed_voice(voice_cache):
    spec = services.best_offline_spec()
    assert spec.split(":")[0] in ("piper", "festival", "espeak", "none")
    svc = services.make_service("auto")
    assert svc.name == spec.split(":")[0]
    assert services.make_service(svc.spec).describe() == svc.describe()


needs_espeak = pytest.mark.skipif(services.espeak_binary() is None, reason="espeak-ng not installed")


@needs_espeak
def test_lines_are_cached_by_text_voice_and_settings(voice_cache, monkeypatch):
    svc = services.make_service("espeak")
    calls = []
    real = svc.speak
    monkeypatch.setattr(svc, "speak", lambda s: calls.append(s) or real(s))
    a = svc.generate_from_text("The score grid is five by five.", line_id="ch02-a")
    b = svc.generate_from_text("Each row sums to one.", line_id="ch02-b")
    assert not a["cached"] and not b["cached"] and len(calls) == 2
    again = svc.generate_from_text("The score grid is five by five.", line_id="ch02-a")
    assert again["cached"] and again["final_audio"] == a["final_audio"] and len(calls) == 2
    edited = svc.generate_from_text("The score grid is six by six.", line_id="ch02-a")
    assert not edited["cached"] and len(calls) == 3           # only the edited line
    assert svc.generate_from_text("Each row sums to one.", line_id="ch02-b")["cached"]
    other = services.EspeakService("en-gb")                     # another voice: its own clips
    assert other.cache_key("Each row sums to one.", None) != svc.cache_key("Each row sums to one.", None)


@needs_espeak
def test_mastered_lines_share_one_loudness_without_clipping(voice_cache):
    svc = services.make_service("espeak")
    for text in ("Quiet words.", "A longer line, with a comma. And a second sentence that runs on a while."):
        data = svc.generate_from_text(text, line_id=None)
        x, sr = audio.read_wav(Path(svc.cache_dir) / data["final_audio"])
        assert sr == audio.SR == 48_000
        speech = x[: int(round(data["speech_seconds"] * sr))]
        # measured by ffmpeg's ebur128: a meter apart from pyloudnorm, which mastered the clip
        lufs, peak = audio.loudness(speech)
        assert abs(lufs - audio.TARGET_LUFS) <= 0.5 and peak <= audio.CEILING_DBTP + 0.1
        assert abs(data["lufs"] - lufs) <= 0.1
        assert np.abs(x).max() < 1.0
        gap = x[-int(audio.LINE_GAP * sr):]
        assert np.abs(gap).max() == 0                          # the silence that closes a line
        assert data["segments"][0]["start"] == 0 and len(data["segments"]) == len(script.split_sentences(text))


def test_the_mastering_meters_are_pyloudnorms_and_the_envelopes_to_the_last_bit():
    """voiceover/audio.py measures loudness with pyloudnorm's algorithm in its own faster code, and the
    final true peak without the envelope: the same floats as pyloudnorm's Meter.integrated_loudness
    and true_peak_env(x).max(), so a clip masters exactly as it did (its cache key is unchanged).
    Speech-like bursts, noise, a quiet half (both gates at work), silence, a signal whose peaks all
    point down; lengths on and off the 100 ms block grid."""
    import pyloudnorm
    rng = np.random.default_rng(50)
    sr = audio.SR
    meter = pyloudnorm.Meter(sr)
    t = np.arange(7 * sr) / sr
    bursts = (0.4 * np.sin(2 * np.pi * 180 * t) * (np.sin(2 * np.pi * 1.3 * t) > 0.2)).astype(np.float32)
    quiet_half = (rng.normal(size=9 * sr) * 0.3).astype(np.float32)
    quiet_half[: 4 * sr] *= 1e-3
    downward = -np.abs(bursts)
    for x in (bursts, quiet_half, (rng.normal(size=3 * sr + 7) * 0.1).astype(np.float32),
              np.zeros(2 * sr, np.float32), downward):
        for n in (len(x), int(0.4 * sr), int(0.4 * sr) + 4799, 5 * sr // 3 + 11):
            y = np.asarray(x[:n], dtype=np.float64)
            with np.errstate(divide="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                theirs = meter.integrated_loudness(y)
                assert audio._integrated_loudness(meter, y) == theirs, n
        assert audio.true_peak(x) == float(audio.true_peak_env(x).max())

def test_recorded_voice_lists_missing_clips(tmp_path, voice_cache):
    folder = tmp_path / "takes"
    folder.mkdir()
    audio.write_wav(folder / "ch02-intro.wav", 0.1 * np.sin(np.linspace(0, 2000, audio.SR)))
    svc = services.make_service(f"recorded:{folder}")
    wanted = [("ch02-intro", "first"), ("ch02-inputs", "second"), ("ch02-qkv", "third")]
    assert svc.missing(wanted) == [("ch02-inputs", "second"), ("ch02-qkv", "third")]
    err = services.MissingClips(folder, svc.missing(wanted))
    assert "ch02-inputs: second" in str(err) and "ch02-intro" not in str(err)


def test_recorded_voice_lists_missing_clips_before_rendering(tmp_path, tiny_bundle):
    folder = tmp_path / "takes"
    folder.mkdir()
    audio.write_wav(folder / "ch02-intro.wav", np.zeros(audio.SR // 2))
    r = subprocess.run([sys.executable, str(ROOT / "render.py"), "--chapter", "02", "--bundle", str(tiny_bundle.path),
                        "--voice", f"recorded:{folder}", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stderr[-2000:]
    lines = script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger())
    for beat in lines:
        if beat != "intro":
            assert script.line_id("02", beat) in r.stderr
    assert "ch02-intro:" not in r.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.mp4"))


# -- captions ----------------------------------------------------------------------

def test_caption_blocks_cover_each_segment_exactly():
    seg = {"start": 3.25, "end": 11.5,
           "text": "An output projection mixes the twelve heads back together for five point nine million "
                   "FLOPs, and the result is added back onto the residual stream."}
    blocks = captions.caption_blocks(seg)
    assert len(blocks) >= 2
    assert blocks[0]["start"] == seg["start"] and blocks[-1]["end"] == seg["end"]
    for a, b in zip(blocks, blocks[1:]):
        assert a["end"] == b["start"]
    for b in blocks:
        assert all(len(line) <= captions.LINE_CHARS for line in b["text"].split("\n"))
        assert len(b["text"].split("\n")) <= captions.MAX_LINES
    assert " ".join(b["text"].replace("\n", " ") for b in blocks) == seg["text"]


def test_caption_times_equal_narration_segment_times(tiny_bundle, voice_cache, tmp_path):
    from onepass.scenes.registry import scenes_of
    names = [c.__name__ for c in scenes_of("02")][:2]
    scenes = [fast_build(tiny_bundle, "02", n) for n in names]
    cue_lists = [s.cues for s in scenes]
    durations = [s.time for s in scenes]
    assert all(cues for cues in cue_lists)
    srt, vtt = tmp_path / "c.srt", tmp_path / "c.vtt"
    blocks = captions.join_cues(cue_lists, durations)
    captions.write_srt(blocks, srt)
    captions.write_vtt(blocks, vtt)
    written = captions.read_srt(srt)
    expected, offset = [], 0.0
    for cues, length in zip(cue_lists, durations):
        for cue in cues:
            assert cue["start"] == cue["segments"][0]["start"] and cue["end"] == cue["segments"][-1]["end"]
            for seg in cue["segments"]:
                expected.append((seg["start"] + offset, seg["end"] + offset, seg["text"]))
        offset += length
    # every segment starts a caption and ends one, to the millisecond the files can hold
    starts, ends = [b["start"] for b in written], [b["end"] for b in written]
    for s, e, text in expected:
        assert min(abs(s - x) for x in starts) <= 0.0006 and min(abs(e - x) for x in ends) <= 0.0006, text
    assert [b["text"] for b in written] == [b["text"] for b in blocks]
    assert vtt.read_text(encoding="utf-8").startswith("WEBVTT")
    # the narration of one beat never overlaps the next
    for a, b in zip(written, written[1:]):
        assert a["end"] <= b["start"] + 1e-3


# -- the real thing: a rendered scene with espeak -----------------------------------------

@pytest.mark.render
@needs_espeak
def test_rendered_audio_matches_video_and_captions_within_a_frame(tiny_bundle, voice_cache, tmp_path, monkeypatch):
    from onepass.scenes.registry import scenes_of
    from onepass.film.run.render_job import render_scene
    from onepass.voiceover import media, mixdown
    scene = [c.__name__ for c in scenes_of("02")][-1]
    mp4, cue_file = tmp_path / f"{scene}.mp4", tmp_path / f"{scene}.json"
    render_scene(tiny_bundle.path, "02", scene, "low", mp4, cue_file, voice="espeak")
    cues = json.loads(cue_file.read_text(encoding="utf-8"))
    final = tmp_path / "ch02.mp4"
    report = mixdown.join([mp4], [cues], final, voiced=True)
    fps = media.frame_rate(final)
    streams = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,sample_rate,duration,width,height",
         "-of", "json", str(final)], capture_output=True, text=True, check=True).stdout)["streams"]
    kinds = {s["codec_type"]: s for s in streams}
    # the default quality, low, is 480p15 (the smoke render of tests/test_foundation.py runs at draft)
    assert fps == 15 and (kinds["video"]["width"], kinds["video"]["height"]) == (854, 480)
    assert kinds["audio"]["codec_name"] == "aac" and int(kinds["audio"]["sample_rate"]) == 48_000
    assert abs(float(kinds["audio"]["duration"]) - float(kinds["video"]["duration"])) <= 1 / fps
    assert abs(media.video_seconds(final) - report["seconds"]) <= 1 / fps
    assert abs(report["lufs"] - audio.TARGET_LUFS) <= 1.0 and report["true_peak_dbtp"] <= audio.CEILING_DBTP + 0.1
    # speech begins where each line's caption begins (one frame at most), read from the MP4 itself
    blocks = captions.join_cues([cues], report["durations"])
    track = audio.decode(final)
    db = audio.frame_db(track)
    for cue in cues:
        first = cue["segments"][0]["start"]
        look = int(max(0.0, first - audio.LINE_GAP / 2) * 100)     # inside the silence before the line
        onset = (look + int(np.argmax(db[look:] > -45))) / 100
        assert abs(onset - first) <= 1 / fps, (cue["beat"], onset, first)
        assert first in [b["start"] for b in blocks]
    assert not list(tmp_path.glob("*.part*"))


def test_dead_air_is_reported_between_lines_only():
    from onepass.voiceover import mixdown
    sr = audio.SR
    track = np.zeros(20 * sr, dtype=np.float32)
    for a, b in ((3, 6), (6.5, 9), (13, 16)):          # speech; 4 s of silence between 9 and 13
        track[int(a * sr):int(b * sr)] = 0.1
    cues = [[{"start": 3, "end": 9, "clip": "x"}, {"start": 13, "end": 16, "clip": "y"}]]
    found = mixdown.dead_air(track, cues, [20.0])
    assert len(found) == 1 and abs(found[0][0] - 9) < 0.05 and abs(found[0][1] - 13) < 0.05


def test_burned_captions_draw_in_the_bottom_band(tmp_path):
    from onepass.voiceover import media, mixdown
    from tests.helpers import stand_in_clip
    video = tmp_path / "v.mp4"
    stand_in_clip(video, seconds=2, size="854x480", picture="color", colour="0x0E1117", silent_audio=True)
    srt = tmp_path / "v.srt"
    captions.write_srt([{"start": 0.0, "end": 2.0, "text": "Each row now sums to one."}], srt)
    mixdown.burn_captions(video, srt)
    frame = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-ss", "1", "-i", str(video), "-frames:v", "1",
                            "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True, check=True).stdout
    img = np.frombuffer(frame, dtype=np.uint8).reshape(480, 854)
    assert img[int(480 * 0.86):].max() > 200            # white caption text in the band kept for captions
    assert img[: int(480 * 0.8)].max() < 40             # nothing drawn above it
    assert abs(media.video_seconds(video) - 2.0) <= 1 / 15
