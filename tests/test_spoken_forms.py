"""Words as a native speaker says and reads them, in every language: one term for one concept
(words/glossary.tsv), what the voice is given (words/lexicon), numbers once the values are in
(words/numbers.py spoken_*), ordinals, signs in right-to-left text, and the deck's help."""
from __future__ import annotations

import pytest

from words import glossary

TRANSLATIONS = ("es", "ur")


# -- one term for one concept -------------------------------------------------------------
def test_glossary_is_well_formed():
    rows = glossary.terms()
    assert len(rows) >= 30
    assert len({t.en.lower() for t in rows}) == len(rows), "a concept has two rows"
    for t in rows:
        for lang in TRANSLATIONS:
            assert t.forms.get(lang), f"{t.en}: no {lang} term"
    for lang in TRANSLATIONS:
        terms = {t.forms[lang][0] for t in rows}
        for a in glossary.avoided():
            if a.lang == lang:
                assert a.avoid not in terms, f"{a.avoid!r} is both a term and avoided"


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("name", ["kit.po", "film.po"])
def test_kit_and_film_use_the_glossary(lang, name):
    found = glossary.violations(lang, glossary.catalog_messages(lang, name))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lang, english, bad, good", [
    ("ur", "queries, keys and values", "کوئریز، کیز اور ویلیوز", "کوئریز، کلیدیں اور ویلیوز"),
    ("ur", "the residual stream", "ریزیجوئل اسٹریم", "ریزیجول اسٹریم"),
    ("ur", "unembedding", "ان ایمبیڈنگ", "اَن ایمبیڈنگ"),
    ("es", "a softmax turns scores into probabilities", "un softmax convierte puntuaciones en probabilidades",
     "una softmax convierte puntuaciones en probabilidades"),
    ("es", "the KV cache", "el cache de claves", "la caché KV"),
])
def test_the_glossary_check_can_fail(lang, english, bad, good):
    assert glossary.violations(lang, {"x": (english, bad)}), f"{bad!r} passed the glossary check"
    assert not glossary.violations(lang, {"x": (english, good)}), f"{good!r} failed the glossary check"


def test_glossary_ignores_placeholders_and_markers():
    english = 'Each <bookmark mark="key"/>value is {value}.'
    assert not glossary.violations("es", {"x": (english, 'Cada <bookmark mark="key"/>valor es {value}.')})
    assert glossary.violations("es", {"x": (english, 'Cada <bookmark mark="key"/>número es {value}.')})


# -- chapters follow the glossary too (the chapters' translators run `python -m words.glossary`) ---
CHAPTER_FILES = sorted(p.name for p in (glossary.HERE / "catalogs" / "en").glob("ch*.po"))


@pytest.mark.parametrize("lang", TRANSLATIONS)
@pytest.mark.parametrize("name", CHAPTER_FILES)
def test_chapter_catalogs_use_the_glossary(lang, name):
    found = glossary.violations(lang, glossary.catalog_messages(lang, name))
    assert not found, "\n".join(found)


# -- pronunciation: the lexicon reaches the voice, never the captions -------------------------------
import re                                   # noqa: E402
import subprocess                           # noqa: E402

import numpy as np                          # noqa: E402

from voiceover import script, services      # noqa: E402
from words import lexicon                   # noqa: E402
from words import numbers as N              # noqa: E402
from words.catalog import Words             # noqa: E402

LANGS = ("en", "es", "ur")
HAS_ESPEAK = services.espeak_binary() is not None


def phonemes(text: str, lang: str) -> str:
    voice = {"en": "en-us"}.get(lang, lang)
    return subprocess.run([services.espeak_binary(), "-q", "-x", "-v", voice, text], capture_output=True,
                          text=True, check=True, stdin=subprocess.DEVNULL).stdout.strip()


@pytest.mark.parametrize("lang", LANGS)
def test_each_lexicon_is_data_with_how_the_wrong_reading_was_heard(lang):
    found = lexicon.entries(lang)
    assert found, f"no lexicon for {lang}"
    assert len({e.term for e in found}) == len(found), "a term is listed twice"
    for e in found:
        assert e.term and e.say and e.term != e.say and e.heard, e


@pytest.mark.skipif(not HAS_ESPEAK, reason="espeak-ng is not installed")
@pytest.mark.parametrize("lang", LANGS)
def test_every_respelling_changes_what_the_voice_says(lang):
    """An entry earns its place: espeak-ng reads the respelling differently from the term."""
    same = [e.term for e in lexicon.entries(lang) if phonemes(e.term, lang) == phonemes(e.say, lang)]
    assert same == []


class Recorder(services.EspeakService):
    """espeak's service as the film uses it, its synthesis replaced by a tone: what it is given is kept."""

    def __init__(self, lang):
        super().__init__(None, lang)
        self.given = []

    def speak(self, sentence):
        self.given.append(sentence)
        sr = 22050
        return (0.3 * np.sin(np.linspace(0, 2 * np.pi * 220 * 0.4, int(0.4 * sr)))).astype(np.float32), sr


@pytest.fixture
def voice_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(services.CACHE_ENV, str(tmp_path / "voice-cache"))
    return tmp_path / "voice-cache"


@pytest.mark.skipif(not HAS_ESPEAK, reason="espeak-ng is not installed")
@pytest.mark.parametrize("lang, line, term, said", [
    ("en", "The pass costs 927 million FLOPs. Each q·k is one number.", "FLOPs", "flops"),
    ("es", "GELU curva cada número. Los logits salen después.", "GELU", "guelu"),
    ("ur", "سافٹ میکس کے بعد −∞ صفر بن جاتا ہے۔ یہ ان ایمبیڈنگ ہے۔", "−∞", "منفی لامتناہی"),
])
def test_a_lexicon_term_reaches_the_voice_respelled_and_the_captions_unchanged(voice_cache, lang, line, term, said):
    voice = Recorder(lang)
    data = voice.generate_from_text(line, line_id="ch99-x", lang=lang)
    given = " ".join(voice.given)
    assert said in given and term not in given, given
    captions = " ".join(s["text"] for s in data["segments"])
    assert term in captions and said not in captions, captions
    assert data["input_text"] == line


@pytest.mark.skipif(not HAS_ESPEAK, reason="espeak-ng is not installed")
def test_the_clip_is_made_again_when_a_lexicon_entry_it_uses_changes(voice_cache, tmp_path, monkeypatch):
    voice = Recorder("en")
    uses, other = "The pass costs 927 million FLOPs.", "The pass is long."
    before = (voice.cache_key(uses, "ch99-a"), voice.cache_key(other, "ch99-b"))
    assert voice.generate_from_text(uses, line_id="ch99-a")["cached"] is False
    assert voice.generate_from_text(uses, line_id="ch99-a")["cached"] is True
    changed = tmp_path / "lexicon"
    changed.mkdir()
    text = (lexicon.HERE / "en.tsv").read_text(encoding="utf-8").replace("FLOPs\tflops\t", "FLOPs\tfloating point operations\t")
    (changed / "en.tsv").write_text(text, encoding="utf-8")
    monkeypatch.setattr(lexicon, "HERE", changed)
    lexicon.entries.cache_clear()
    lexicon._pattern.cache_clear()
    try:
        after = (voice.cache_key(uses, "ch99-a"), voice.cache_key(other, "ch99-b"))
        assert after[0] != before[0], "the entry a line uses changed, its clip key did not"
        assert after[1] == before[1], "a line that uses no changed entry must keep its clip"
        voice.given.clear()
        assert voice.generate_from_text(uses, line_id="ch99-a")["cached"] is False
        assert "floating point operations" in " ".join(voice.given)
    finally:
        lexicon.entries.cache_clear()
        lexicon._pattern.cache_clear()


def test_a_voice_of_no_one_language_gets_the_text_as_it_is():
    """Recordings and silence are not respelled (their clip keys stay as they were)."""
    line = "927 million FLOPs, q·k and −0.17."
    assert services.SilentService().voice_text(line) == line
    assert services.SilentService().cache_key(line, "ch99-a").get("voiced") is None
