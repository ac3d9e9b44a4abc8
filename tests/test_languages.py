"""The film in Spanish and Urdu: catalogs, numbers as each language writes and says them, voices
that speak the language, right-to-left words, captions and every chapter on frame.

What a lecturer teaching in Spanish or Urdu relies on: `--lang es|ur` renders every word in that
language (nothing English escapes the catalog), numbers use the language's separators and are
read the way its speakers read them, the voice speaks the language (or the run stops with one
clear line), and Urdu reads right to left while GPT-2's own tokens stay as GPT-2 sees them.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from onepass.data.chapters import CHAPTERS as CHAPTER_MODULES
from onepass.film.plan.keys import chapter_source
from tests.helpers import assert_picture_follows_words, english_on_screen, frame_checks, run_main
from onepass.voiceover import captions, services
from onepass.words import catalog, numbers as N
from onepass.words.catalog import Words

ROOT = Path(__file__).resolve().parents[1]
LANGS = ["es", "ur"]
CHAPTERS = ["00", "01", "02", "03", "04", "05", "06"]
SCENES = [(c, name) for c in CHAPTERS for name in chapter_source(CHAPTER_MODULES[c].module).scenes]


# -- catalogs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_each_catalog_is_complete_checked_and_says_how_it_was_made(lang):
    """Every English message translated (no English fallback), every placeholder and marker kept
    (Words.load checks them against English), and each file's header says how it was made."""
    words = Words.load(lang)
    assert words.fallbacks == set(), sorted(words.fallbacks)[:10]
    assert catalog.check(catalog._catalog(lang)[0], lang) == []
    for po in sorted((catalog.CATALOGS / lang).glob("*.po")):
        head = po.read_text(encoding="utf-8").split("msgid", 1)[0].lower()
        assert "translated" in head and "reviewed" in head, po.name
        assert f'"language: {lang}\\n"' in po.read_text(encoding="utf-8").lower()


@pytest.mark.parametrize("lang", LANGS)
def test_a_translation_keeps_no_english_sentence(lang):
    """A narration line whose translation equals its English was never translated."""
    base, words = catalog.english(), Words.load(lang)
    same = [mid for mid, m in base.items() if "-" in mid.split(":")[0] and mid.startswith("ch")
            and words.messages[mid].forms == m.forms and len(m.forms[0].split()) > 3]
    assert same == []


def test_urdu_is_written_in_urdu_letters_not_arabic_lookalikes():
    """ک ی ہ, not Arabic's ك ي ه: Urdu readers and espeak-ng's Urdu voice expect Urdu's own letters."""
    words = Words.load("ur")
    wrong = {mid for mid, m in words.messages.items() for f in m.forms if re.search("[\u0643\u064a\u0647]", f)}
    assert wrong == set()


def test_a_token_drawn_among_urdu_words_sits_in_a_left_to_right_isolate():
    """A token on screen keeps its leading-space dot ('·the'): among right-to-left words, outside an
    isolate (U+2066..U+2069), the bidi algorithm moved the dot to the token's far end ('the·')."""
    words = Words.load("ur")
    bare = re.compile(r"(?<!\u2066)\{(?:[a-z]+_)*token\}(?!\u2069)")
    drawn = {mid for mid in words.messages if ":" in mid and not mid.startswith(("kit:", "film:quoted"))}
    assert {mid for mid in drawn for f in words.messages[mid].forms if bare.search(f)} == set()


def test_list_languages_says_how_complete_each_is_and_a_partial_catalog_is_named(tmp_path, monkeypatch):
    rc, out, _ = run_main("--list-languages")
    assert rc == 0
    assert re.search(r"^es\s+Spanish\s+(\d+) of \1 messages translated \(100%\)", out, re.M)
    assert re.search(r"^ur\s+Urdu\s+(\d+) of \1 messages translated \(100%\)", out, re.M)
    # a lecturer's third language, partly translated: English where it lacks messages, and said so
    folder = tmp_path / "catalogs"
    folder.mkdir()
    for lang in ("en", "es", "ur"):
        (folder / lang).symlink_to(catalog.CATALOGS / lang)
    (folder / "fr").mkdir()
    (folder / "fr" / "film.po").write_text(
        'msgid ""\nmsgstr ""\n"Language: fr\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgctxt "chapter-00"\nmsgid "Tokens"\nmsgstr "Jetons"\n', encoding="utf-8")
    monkeypatch.setattr(catalog, "CATALOGS", folder)
    catalog._catalog.cache_clear()
    try:
        words = Words.load("fr")
        assert words.text("chapter-00") == "Jetons" and words.text("chapter-01") == "Embeddings and positions"
        assert "chapter-01" in words.fallbacks and "chapter-00" not in words.fallbacks
        rc, out, _ = run_main("--list-languages")
        assert re.search(r"^fr\s+French\s+1 of \d+ messages translated", out, re.M)
    finally:
        catalog._catalog.cache_clear()


# -- numbers ---------------------------------------------------------------------------------------
def test_numbers_are_written_as_each_language_writes_them():
    cases = {"en": ("927,466,752", "41.2%", "−0.12", "17.7"),
             "es": ("927.466.752", "41,2\u00a0%", "−0,12", "17,7"),
             "ur": ("927,466,752", "41.2%", "−0.12", "17.7")}      # Urdu: Western digits (docs/LANGUAGES.md)
    for lang, (count, pct, signed, ratio) in cases.items():
        with N.language(lang):
            assert (N.fmt_int(927_466_752), N.fmt_pct(0.412), N.fmt_signed(-0.1249, 2), N.fmt_ratio(17.71)) == \
                (count, pct, signed, ratio), lang
    with N.language("es"):
        assert N.fmt_prob(0.0761) == "7,6\u00a0%" and N.fmt_signed(-0.001, 2) == "0,00"
    # the short forms of a floor's FLOPs tag and the family table (they were f-strings once)
    for lang, (tag, short) in {"en": ("307.4M", "1.56G"), "es": ("307,4M", "1,56G"), "ur": ("307.4M", "1.56G")}.items():
        with N.language(lang):
            assert (N.fmt_human(307_364_000), N.fmt_short(1_557_611_200)) == (tag, short), lang


def test_the_same_digits_in_every_language():
    """Only separators change: a language never rounds to another digit than English."""
    for x in np.random.default_rng(0).normal(0, 3, 200):
        with N.language("en"):
            en = N.fmt_signed(float(x), 2)
        with N.language("es"):
            es = N.fmt_signed(float(x), 2)
        assert es == en.replace(".", ",")


def test_spoken_numbers_use_the_languages_words_and_separators():
    es, ur = Words.load("es"), Words.load("ur")
    assert N.spoken_count(17_694_720, es) == es.text("film:number-million", count=2, value="17,7")
    assert "17,7" in N.spoken_count(17_694_720, es) and "millones" in N.spoken_count(17_694_720, es)
    assert N.spoken_count(17_694_720, ur) == ur.text("film:number-million", count=2, value="17.7")
    assert N.spoken_pct(0.412, es) == es.text("film:number-percent", value="41,2")


@pytest.mark.skipif(services.espeak_binary() is None, reason="espeak-ng is not installed")
@pytest.mark.parametrize("lang, written, spoken", [
    # espeak-ng's phonemes (-x) for the written form, as a native speaker reads it
    ("es", "17,7 millones", "dj,ETisj'ete k,oma sj'ete"),          # diecisiete coma siete
    ("es", "927.466.752", "n,oBeTj'Entos B,eIntisj'ete"),          # novecientos veintisiete millones ...
    ("ur", "17.7", "s'atRaH _,ISaRI;'I;a_ s'a:t"),                 # سترہ اعشاریہ سات
    ("ur", "927,466,752", "b'a:nve: kaR'o:R"),                     # بانوے کروڑ ...
])
def test_the_voice_reads_the_written_numbers_as_its_speakers_do(lang, written, spoken):
    out = subprocess.run([services.espeak_binary(), "-v", lang, "-q", "-x", written], capture_output=True,
                         text=True, check=True).stdout
    assert spoken in out, out


# -- voices ------------------------------------------------------------------------------------------
@pytest.mark.skipif(services.espeak_binary() is None, reason="espeak-ng is not installed")
def test_auto_and_espeak_pick_the_languages_voice_and_a_voice_that_cannot_speak_it_is_refused():
    assert services.make_service("espeak", "ur").voice == "ur"
    assert services.make_service("espeak", "es").voice == "es"
    auto = services.make_service("auto", "ur")
    assert auto.speaks("ur") and "Urdu" in auto.describe()
    assert services.make_service("espeak", "qps").voice == "en-us"      # the pseudo-language is English
    with pytest.raises(services.VoiceError, match="speaks English .*not Urdu"):
        services.make_service("espeak:en-us", "ur")


def test_an_english_voice_for_an_urdu_film_is_one_clear_line():
    rc, _, err = run_main("--chapter", "02", "--lang", "ur", "--weights", "tiny", "--voice", "espeak:en-us")
    assert rc == 2 and "not Urdu" in err and "Traceback" not in err


# -- captions ------------------------------------------------------------------------------------------
def test_captions_name_their_language_and_urdu_lines_read_right_to_left(tmp_path):
    cues = [{"start": 0.0, "end": 1.0, "text": "GPT-2 ایک ماڈل ہے\nدوسری سطر"},
            {"start": 1.0, "end": 2.0, "text": "ٹوکن 464"}]
    captions.write_vtt(cues, tmp_path / "ur.vtt", "ur")
    captions.write_srt(cues, tmp_path / "ur.srt", "ur")
    vtt = (tmp_path / "ur.vtt").read_text(encoding="utf-8")
    assert vtt.startswith("WEBVTT\n") and "Language: ur" in vtt.split("\n\n")[0].splitlines()
    lines = [c["text"] for c in captions.read_srt(tmp_path / "ur.srt")]
    assert all(line.startswith(captions.RLM) for text in lines for line in text.split("\n"))
    captions.write_srt(cues, tmp_path / "es.srt", "es")
    assert captions.RLM not in (tmp_path / "es.srt").read_text(encoding="utf-8")
    # read back and written again (the film joins chapters' captions): still one mark a line
    captions.write_srt(captions.read_srt(tmp_path / "ur.srt"), tmp_path / "again.srt", "ur")
    assert (tmp_path / "again.srt").read_text(encoding="utf-8") == (tmp_path / "ur.srt").read_text(encoding="utf-8")


# -- every chapter, on frame, in each language -------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter, name", SCENES)
def test_every_scene_renders_in_spanish_and_urdu_on_frame_with_no_english(tiny_bundle, chapter, name, lang,
                                                                          monkeypatch):
    built = []
    problems = frame_checks(tiny_bundle, chapter, name, monkeypatch, lang=lang, built=built)
    assert problems == [], "\n".join(problems)
    scene = built[0]
    assert english_on_screen(scene, tiny_bundle, lang) == []
    assert_picture_follows_words(scene, f"{lang} {chapter} {name}")


def test_the_check_for_english_on_screen_can_fail(tiny_bundle, monkeypatch):
    """The check above finds English: the Urdu catalog with chapter 02's labels put back into English."""
    from dataclasses import replace
    english = catalog.english()
    real_load = Words.load

    def load(lang="en", script=None):
        words = real_load(lang, script)
        if lang == "ur":
            for mid, m in english.items():
                if mid.startswith("ch02:"):
                    words.messages[mid] = replace(m)
        return words
    monkeypatch.setattr(Words, "load", staticmethod(load))
    built = []
    frame_checks(tiny_bundle, "02", "Scores", monkeypatch, lang="ur", built=built)
    assert english_on_screen(built[0], tiny_bundle, "ur") != []


def test_the_deck_and_the_powerpoint_read_right_to_left_in_urdu():
    from pptx import Presentation
    from onepass.film.kit import slides
    ui = slides.deck_words(Words.load("ur"))
    assert (ui["lang"], ui["dir"]) == ("ur", "rtl") and slides.deck_words(Words.load("es"))["dir"] == "ltr"
    assert '<html lang="ur" dir="rtl">' in slides.deck_html([], "mp4", "فلم", ui)
    box = Presentation().slides.add_slide(Presentation().slide_layouts[6]).shapes.add_textbox(0, 0, 100, 100)
    box.text_frame.text = "ایک اٹینشن ہیڈ"
    slides._right_to_left(box.text_frame)
    assert all(p._p.pPr.get("rtl") == "1" for p in box.text_frame.paragraphs)
