"""Captions people can read (issue 43 item 4): the checker fails a cue over each limit it states,
the film's cutting keeps every chapter within them in every stored language, and a user's own
caption file is checked from the command line."""
from __future__ import annotations

import pytest

from tests.helpers import run_main, stand_in_clip  # noqa: F401  (the helpers put the repository on the path)
from onepass.voiceover import captions
from onepass.voiceover.captions_check import (
    Report, check, check_file, failures, main, narration_cues, read_cues,
)

GOOD = {"start": 0.0, "end": 3.0, "text": "A caption that reads\nat an easy pace."}


def kinds(cue):
    return [p.kind for p in failures([cue])]


def test_a_cue_within_every_limit_passes():
    assert check([GOOD]) == []
    assert Report.of([GOOD]).ok


@pytest.mark.parametrize("cue, kind", [
    ({"start": 0.0, "end": 4.0, "text": "one\ntwo\nthree"}, "lines"),
    ({"start": 0.0, "end": 4.0, "text": "x" * (captions.LINE_CHARS + 1)}, "length"),
    ({"start": 0.0, "end": 0.9, "text": "Hi."}, "short"),
    ({"start": 0.0, "end": 7.2, "text": "A slow caption."}, "long"),
    ({"start": 0.0, "end": 2.0, "text": "forty-two characters read in two seconds."}, "cps"),
])
def test_a_cue_over_each_limit_fails_and_says_which(cue, kind):
    assert kinds(cue) == [kind]
    assert not Report.of([cue]).ok
    said = {"lines": "over 2 lines", "length": "a line over 42 characters", "short": "under 1 s",
            "long": "over 7 s", "cps": "at 20+ characters/s"}[kind]
    assert said in Report.of([cue]).line()


def test_a_fast_cue_is_excused_only_where_the_speech_itself_is_that_fast():
    fast = {"start": 0.0, "end": 2.0, "text": "forty-two characters read in two seconds."}
    assert kinds({**fast, "speech_cps": 15.0}) == ["cps"]             # the cutting could have done better
    [p] = check([{**fast, "speech_cps": 24.0}])
    assert p.excused and "24.0" in p.why                               # the narration itself runs at 24
    assert failures([{**fast, "speech_cps": 24.0}]) == []
    assert Report.of([{**fast, "speech_cps": 24.0}]).ok


def test_direction_marks_are_not_counted_as_characters():
    rtl = {"start": 0.0, "end": 3.0, "text": captions.directed("ا" * captions.LINE_CHARS, "ur")}
    assert check([rtl]) == []


def test_a_long_sentence_is_cut_so_no_piece_stays_over_seven_seconds():
    seg = {"start": 0.0, "end": 13.0, "text": "GPT-2 keeps a table with one row for every token of its vocabulary, and reads it."}
    blocks = captions.caption_blocks(seg)
    assert blocks[0]["start"] == 0.0 and blocks[-1]["end"] == 13.0
    assert all(b["end"] - b["start"] <= captions.MAX_SECONDS for b in blocks)
    assert failures(blocks) == []


def test_a_short_caption_stays_on_into_the_silence_but_never_over_the_next():
    cues = captions.join_cues([[{"start": 0.0, "end": 0.4, "text": "And mat?"},
                                {"start": 0.45, "end": 3.0, "text": "It ranks second."},
                                {"start": 5.0, "end": 5.5, "text": "Yes."}]], [8.0])
    assert cues[0]["end"] == pytest.approx(0.45)          # held to the next caption, no further
    assert cues[2]["end"] == pytest.approx(6.0)           # held to a full second in the silence after it
    assert [c["start"] for c in cues] == [0.0, 0.45, 5.0]  # a caption appears when its words are spoken


def test_a_caption_a_little_short_of_a_second_may_delay_the_next_by_a_quarter_second_at_most():
    cues = captions.join_cues([[{"start": 0.0, "end": 0.6, "text": "And mat?"},
                                {"start": 0.9, "end": 3.0, "text": "It ranks second."}]], [8.0])
    assert cues[0]["end"] == pytest.approx(1.0) == cues[1]["start"]      # 0.1 s later than its words
    assert failures(cues) == []


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
@pytest.mark.parametrize("chapter", ["00", "01", "02", "03", "04", "05", "06"])
def test_every_chapters_captions_are_readable(tiny_bundle, chapter, lang):
    from onepass.words.catalog import Words
    cues = narration_cues(chapter, tiny_bundle, Words.load(lang))
    assert cues
    report = Report.of(cues)
    assert report.ok, "\n".join([report.line(f"ch{chapter} {lang}")] + [str(p) for p in report.problems])


def test_a_users_caption_file_is_checked_from_the_command_line(tmp_path, capsys):
    good, bad = tmp_path / "good.vtt", tmp_path / "bad.srt"
    captions.write_vtt([GOOD, {"start": 3.0, "end": 5.0, "text": "a <b> & c"}], good, "en")
    captions.write_srt([{"start": 0.0, "end": 0.5, "text": "Too quick."}], bad, "en")
    assert [c["text"] for c in read_cues(good.read_text(encoding="utf-8"))][1] == "a <b> & c"
    assert check_file(good).ok
    assert main([str(good)]) == 0
    assert main([str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "bad.srt: 1 cues, 1 under 1 s" in out and "Too quick." in out


@pytest.mark.parametrize("lang", ["en", "ur"])
def test_burned_captions_stay_in_the_band_the_scenes_keep_free(tmp_path, lang):
    """Burned in (--burn-captions), a caption of two full lines, its box included, lies below
    CAPTION_TOP (y = -2.9), the band no scene puts text in (tests/helpers.frame_checks): it never
    covers the picture's words. Measured on a white 480p frame: the box is the dark part."""
    import subprocess

    import numpy as np
    from PIL import Image

    from onepass.scenes import style as S
    from onepass.voiceover import mixdown
    video, srt, png = tmp_path / "white.mp4", tmp_path / "c.srt", tmp_path / "f.png"
    stand_in_clip(video, seconds=1, size="854x480", picture="color", colour="white", silent_audio=True)
    line = {"en": "x" * captions.LINE_CHARS, "ur": "ک" * captions.LINE_CHARS}[lang]
    captions.write_srt([{"start": 0.0, "end": 1.0, "text": f"{line}\n{line}"}], srt, lang)
    mixdown.burn_captions(video, srt, lang=lang)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-ss", "0.5", "-i", str(video), "-frames:v", "1", str(png)], check=True)
    dark = np.where(np.asarray(Image.open(png).convert("L")).min(axis=1) < 200)[0]
    assert len(dark), "no caption was burned in"
    top_y = 4.0 - dark.min() / 480 * 8.0         # the frame is 8 units tall, y = 4 at its top row
    assert top_y <= S.CAPTION_TOP + 8.0 / 480, f"the burned caption reaches y = {top_y:.2f}, above {S.CAPTION_TOP}"
