"""Words as data: catalogs, markers, the pseudo-language, a lecturer's own words and voice.

Every word on screen or spoken comes from words/catalogs (gettext PO); a picture moves on a named
marker. These tests prove what a lecturer relies on: a broken catalog is refused before anything
renders, naming the language, the line and the names; every chapter renders in the pseudo-language
(so nothing is hard-coded English and every layout takes longer text); a script of one's own
changes what is said and shown and re-renders only the scenes it touches; a recording is aligned.
"""
from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import polib
import pytest

from onepass.data.chapters import CHAPTERS as CHAPTER_MODULES
from onepass.film.plan.keys import chapter_source
from tests.helpers import WORDS, assert_picture_follows_words, build_scene, frame_checks, outside_the_catalog, run_main
from onepass.voiceover import script
from onepass.words import catalog, markup, pseudo
from onepass.words.catalog import CatalogError, Words

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ["00", "01", "02", "03", "04", "05", "06"]
SCENES = [(c, name) for c in CHAPTERS for name in chapter_source(CHAPTER_MODULES[c].module).scenes]   # read, not imported


def write_po(path: Path, entries: dict[str, str]) -> Path:
    """A lecturer's PO file: id -> their words (msgid: the English, as a translator's tool keeps it)."""
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "en"}
    english = catalog.english()
    for mid, text in entries.items():
        po.append(polib.POEntry(msgctxt=mid, msgid=english[mid].forms[0] if mid in english else mid, msgstr=text))
    po.save(str(path))
    return path


# -- markup ---------------------------------------------------------------------------------
def test_a_marker_marks_the_word_after_it_and_values_cannot_make_markers():
    filled = markup.fill('It reads {T} rows. <bookmark mark="rows"/>Each is {d} wide.',
                         {"T": "5", "d": '<bookmark mark="evil"/>768'})
    assert filled.text == 'It reads 5 rows. Each is <bookmark mark="evil"/>768 wide.'
    assert filled.marks == (("rows", filled.text.index("Each")),)


def test_placeholders_are_bare_names():
    assert markup.placeholders("{T} by {T} grid of {d}") == {"T", "d"}
    for bad in ("{}", "{0}", "{d:,}", "{d!r}"):
        with pytest.raises(markup.MarkupError, match="bare name"):
            markup.placeholders(bad)


def test_the_english_catalog_parses_and_every_line_of_every_chapter_fills(tiny_bundle):
    assert catalog.check_source() == []
    words = Words.load("en")
    for c in CHAPTERS:
        lines = script.chapter_lines(c, tiny_bundle, tiny_bundle.ledger(), words)
        assert lines["title"].text.startswith("Chapter ")
        for beat, line in lines.items():
            assert "{" not in line.text and "<bookmark" not in line.text, (c, beat, line.text)


# -- catalog checks: refused before anything renders, naming language, id and names ------------------
@pytest.mark.parametrize("change, expected", [
    (lambda t: t.replace('<bookmark mark="', '<bookmark mark="x', 1), r"ch02-inputs: lacks marker\(s\) "),
    (lambda t: t.replace("{T}", "five"), r"ch02-inputs: lacks placeholder\(s\) T"),
    (lambda t: t + " {wobble}", r"ch02-inputs: unknown placeholder\(s\) wobble \(English has: T, d\)"),
])
def test_a_script_that_breaks_a_marker_or_a_placeholder_is_refused_naming_them(tmp_path, change, expected):
    english = catalog.english()["ch02-inputs"].forms[0]
    assert "<bookmark" in english, "ch02-inputs must mark where its picture moves"
    path = write_po(tmp_path / "mine.po", {"ch02-inputs": change(english)})
    with pytest.raises(CatalogError, match=expected) as err:
        Words.load("en", path)
    assert str(path) in str(err.value)


def test_a_message_english_does_not_have_is_refused(tmp_path):
    path = write_po(tmp_path / "mine.po", {"ch02-intro-typo": "Hello."})
    with pytest.raises(CatalogError, match="ch02-intro-typo: no such message in English"):
        Words.load("en", path)


def test_a_scene_that_shows_a_message_no_catalog_has_is_refused_before_rendering(tiny_bundle, monkeypatch):
    from onepass.film.plan import jobs, keys
    from onepass.film.plan.errors import PipelineError
    english = dict(catalog.english())
    gone = next(m for m in english if m.startswith("ch02:"))
    monkeypatch.setattr(catalog, "english", lambda: {k: v for k, v in english.items() if k != gone})
    words = Words.load("en")
    with pytest.raises(PipelineError, match=f"shows message\\(s\\) {re.escape(gone)}, which the en catalog"):
        jobs.plan(["02"], tiny_bundle, jobs.BuildOptions(words=words))
    assert keys  # the plan reads the scenes' sources, it renders nothing


def test_an_unknown_language_is_a_clear_error_listing_those_there_are():
    rc, out, err = run_main("--chapter", "02", "--lang", "xx", "--weights", "tiny", "--voice", "none")
    assert rc == 2
    assert "no catalog for 'xx'" in err and "en, es, ur, qps" in err


# -- the pseudo-language ------------------------------------------------------------------------
def test_the_pseudo_language_keeps_names_and_is_longer():
    t = 'It reads {T} rows. <bookmark mark="rows"/>Each is {d} numbers wide.'
    p = pseudo.pseudo(t)
    assert p.startswith(pseudo.OPEN) and p.endswith(pseudo.CLOSE)
    assert markup.placeholders(p) == {"T", "d"} and markup.marks(p) == ["rows"]
    words_en = re.sub(r"\{\w+\}|<[^>]+>", "", t)
    words_qps = re.sub(r"\{\w+\}|<[^>]+>", "", p)
    assert len(words_qps) >= 1.3 * len(words_en)
    assert catalog.check({k: pseudo.pseudo_message(m) for k, m in catalog.english().items()}, "qps") == []


@pytest.mark.parametrize("chapter, name", SCENES)
def test_every_scene_renders_in_the_pseudo_language_with_no_word_outside_the_catalog(
        tiny_bundle, chapter, name, monkeypatch):
    built = []
    problems = frame_checks(tiny_bundle, chapter, name, monkeypatch, lang="qps", built=built)
    assert problems == [], "\n".join(problems)
    scene = built[0]
    assert outside_the_catalog(scene, tiny_bundle) == []
    assert_picture_follows_words(scene, f"qps {chapter} {name}")


# -- scenes name markers; they never match words or count sentences -------------------------------------
def test_no_scene_times_a_step_by_wording_or_sentence_number_or_writes_a_word():
    forbidden = {"find", "says", "said", "wait_for", "wait_until", "sentences"}
    found = []
    for path in sorted((ROOT / "scenes").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in forbidden and path.name != "base.py":
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "label" and node.args:
                arg = node.args[0]
                parts = [arg] if isinstance(arg, ast.Constant) else \
                    [v for v in getattr(arg, "values", []) if isinstance(v, ast.Constant)]
                for p in parts:
                    if isinstance(p.value, str) and WORDS.search(p.value):
                        found.append(f"{path.name}:{node.lineno}: label({p.value!r})")
    assert found == []


# -- a lecturer's own words -------------------------------------------------------------------------
def test_your_own_words_change_the_line_and_its_captions_and_rerender_only_that_scene(tiny_bundle, tmp_path):
    from onepass.film.plan import jobs
    english = catalog.english()["ch02-mask"].forms[0]
    mine = english.replace("Next comes a mask", "A decoder writes one way only")
    path = write_po(tmp_path / "lecture.po", {"ch02-mask": mine})
    words = Words.load("en", path)
    assert words.overridden == {"ch02-mask"}
    before = jobs.plan(["02"], tiny_bundle, jobs.BuildOptions(out=tmp_path))["02"]
    after = jobs.plan(["02"], tiny_bundle, jobs.BuildOptions(out=tmp_path, words=words))["02"]
    changed = [a.scene for a, b in zip(before, after) if a.key != b.key]
    assert changed == ["Scores"]                       # the scene that speaks the mask line, alone
    scene = build_scene(tiny_bundle, "02", "Scores", draw=False, script=path)
    cue = next(c for c in scene.cues if c["beat"] == "mask")
    assert cue["text"].startswith("A decoder writes one way only")
    assert cue["segments"][0]["text"].startswith("A decoder writes one way only")   # the captions' text


def test_the_course_kits_words_re_render_no_scene_and_the_films_own_re_render_every_scene(tiny_bundle, tmp_path):
    """kit.po's words (decks, handouts, descriptions, notebooks) are never in a frame, so rewording
    one keeps every scene's key; a film-wide word (the furniture) is in every frame."""
    from onepass.film.plan import jobs
    english = catalog.english()
    assert english["kit:handout-contents"].forms[0] and all(not m.startswith("film:handout") for m in english)
    plan = lambda words=None: [j.key for j in jobs.plan(["02"], tiny_bundle, jobs.BuildOptions(out=tmp_path, words=words))["02"]]
    before = plan()
    kit = Words.load("en", write_po(tmp_path / "kit.po", {"kit:handout-contents": "What is in it"}))
    assert kit.text("kit:handout-contents") == "What is in it"
    assert plan(kit) == before
    film = Words.load("en", write_po(tmp_path / "film.po", {"film:meter-title": "FLOPs so far"}))
    assert all(a != b for a, b in zip(plan(film), before))


def test_your_own_words_reach_the_decks_notes_and_only_their_scene_renders_again(tiny_bundle, tmp_path):
    """The build with a stand-in renderer (tests/test_lecture.py): the first build renders every
    scene, the same build with a script that rewords one line renders only the scene that says it,
    and the deck's notes and the PowerPoint's say the new words."""
    import json as json_
    from onepass.film.kit import slides
    from tests.test_lecture import Chapter02
    first = Chapter02(tmp_path, tiny_bundle, voiced=False)
    assert not any(s.cached for s in first.result.scenes)
    english = catalog.english()["ch02-mask"].forms[0]
    path = write_po(tmp_path / "lecture.po",
                    {"ch02-mask": english.replace("Next comes a mask", "A decoder writes one way only")})
    words = Words.load("en", path)
    again = Chapter02(tmp_path, tiny_bundle, voiced=False, words=words)
    assert [s.job.scene for s in again.result.scenes if not s.cached] == ["Scores"]
    deck = slides.write_deck([again.result], "mp4", words)
    page = deck.html.read_text(encoding="utf-8")
    data = json_.loads(page.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    notes = {s["beat"]: s["notes"] for s in data["slides"]}
    assert notes["mask"].startswith("A decoder writes one way only")
    from pptx import Presentation
    said = [sl.notes_slide.notes_text_frame.text for sl in Presentation(str(deck.pptx)).slides]
    assert any(t.startswith("A decoder writes one way only") for t in said)


def test_the_scene_processes_get_the_language_and_the_script(tmp_path):
    """What a scene process is told, through the local pool as through a cluster's runner."""
    from onepass.film.run.executors import LocalExecutor
    from onepass.film.plan.jobs import SceneJob
    from onepass.film.run.runner import Runner
    script_file = write_po(tmp_path / "mine.po", {"chapter-02": "Attention"})
    runner = Runner(tmp_path / "bundle", "low", "none", None, lang="qps", script=script_file)
    job = SceneJob("02", "Scores", 1, "k" * 64, tmp_path / ".scenes" / "ch02-x-Scores.kkkk")
    with LocalExecutor(1) as pool:
        config_runner = pool.runner_for(runner)        # the copy the pool runs scenes with
    argv = config_runner.argv(job, tmp_path / "cues.json")
    assert argv[argv.index("--lang") + 1] == "qps" and argv[argv.index("--script") + 1] == str(script_file)


def test_check_script_names_what_it_changes_or_what_is_wrong(tmp_path):
    good = write_po(tmp_path / "good.po", {"ch02:mask-title" if "ch02:mask-title" in catalog.english()
                                           else "chapter-02": "Looking back only"})
    rc, out, err = run_main("--check-script", str(good))
    assert rc == 0 and "no problems" in out
    bad = write_po(tmp_path / "bad.po", {"ch02-inputs": "No values at all."})
    rc, out, err = run_main("--check-script", str(bad))
    assert rc == 2 and "ch02-inputs: lacks placeholder(s) T, d" in err


def test_the_script_sheet_lists_every_line_with_its_id_in_order(tmp_path):
    sheet = tmp_path / "sheet.txt"
    rc, out, err = run_main("--chapter", "02", "--weights", "tiny", "--voice", "none", "--script-sheet", str(sheet))
    assert rc == 0, err
    text = sheet.read_text(encoding="utf-8")
    ids = re.findall(r"^(ch02-[\w.]+)$", text, re.M)
    assert ids == [f"ch02-{b}" for b in script.beats("02")]
    assert "<bookmark" not in text and "{" not in text


def test_a_script_sheet_that_cannot_be_written_is_refused_before_the_bundle_is_made(tmp_path, monkeypatch):
    from onepass.film.make import request
    monkeypatch.setattr(request, "get_bundle", lambda *a, **k: pytest.fail("the bundle was made first"))
    (tmp_path / "a-file").write_text("x")
    for sheet, said in [(tmp_path / "a-file" / "lines.txt", "--script-sheet's folder"),
                        (tmp_path, "is a folder; pass a file name")]:
        rc, out, err = run_main("--chapter", "02", "--weights", "tiny", "--voice", "none", "--script-sheet", str(sheet))
        assert rc == 2 and said in err and "Traceback" not in err, err


# -- a lecturer's own voice, aligned -------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
def test_a_recording_is_aligned_to_within_a_third_of_a_second(tiny_bundle, tmp_path, monkeypatch):
    from onepass.voiceover import services
    monkeypatch.setenv(services.CACHE_ENV, str(tmp_path / "cache"))
    words = Words.load("en")
    line = script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger(), words)["intro"]
    assert len(script.split_sentences(line.text)) >= 3 and line.marks
    spoken = services.make_service("espeak")
    made = spoken.generate_from_text(line.text, line_id="ch02-intro")
    folder = tmp_path / "recordings"
    folder.mkdir()
    shutil.copy(Path(spoken.cache_dir) / made["final_audio"], folder / "ch02-intro.wav")
    recorded = services.make_service(f"recorded:{folder}")
    aligned = recorded.generate_from_text(line.text, line_id="ch02-intro", marks=list(line.marks))
    assert len(aligned["segments"]) == len(made["segments"])
    for a, b in zip(aligned["segments"], made["segments"]):
        assert abs(a["start"] - b["start"]) < 0.3 and abs(a["end"] - b["end"]) < 0.3, (a, b)
    assert set(aligned["marks"]) == {name for name, _ in line.marks}
    # a recording of some other line is refused, by line id, before anything renders
    other = script.chapter_lines("02", tiny_bundle, tiny_bundle.ledger(), words)["mask"]
    problems = recorded.check([("ch02-intro", " ".join([other.text] * 6), [])])
    assert problems and problems[0].startswith("ch02-intro: ")


# -- one term per idea in what is said and described, as filled for each architecture (issue 52) ----------
@pytest.fixture(scope="module")
def tiny_smollm2_bundle(bundle_root):
    """'The cat sat on the' through a 2-layer random Llama-style decoder with SmolLM2's tokenizer."""
    from onepass.data import extract
    return extract.extract("The cat sat on the", "tiny", model="smollm2-135m-instruct", root=bundle_root,
                           log=lambda m: None)


@pytest.mark.parametrize("model", ["gpt2", "smollm2"])
def test_the_spoken_lines_and_descriptions_spell_no_term_the_glossary_replaced(model, tiny_bundle, tiny_smollm2_bundle):
    """The glossary's check on the catalogs (tests/test_spoken_forms.py) reads messages as written; this reads
    them as the film says and describes them: filled with the chapter's values (words that come from
    other messages, variants picked by the bundle's components: RoPE, RMSNorm, SwiGLU, GQA) and as
    handed to the voice (after the lexicon's respellings)."""
    from onepass.words import glossary, lexicon
    bundle = tiny_bundle if model == "gpt2" else tiny_smollm2_bundle
    ledger = bundle.ledger()
    english = Words.load("en")
    found = []
    for c in CHAPTERS:
        said = {**script.chapter_lines(c, bundle, ledger, english),
                **{b + ".describe": d for b, d in script.chapter_descriptions(c, bundle, ledger, english).items()}}
        for lang in ("es", "ur"):
            words = Words.load(lang)
            theirs = {**script.chapter_lines(c, bundle, ledger, words),
                      **{b + ".describe": d for b, d in script.chapter_descriptions(c, bundle, ledger, words).items()}}
            messages = {f"ch{c}-{b}": (said[b].text, line.text) for b, line in theirs.items()}
            voiced = {f"ch{c}-{b} (voiced)": (said[b].text, lexicon.for_voice(line.text, lang))
                      for b, line in theirs.items() if not b.endswith(".describe")}
            found += [f"{lang} {v}" for v in glossary.violations(lang, {**messages, **voiced}, strict=False)]
    assert not found, "\n".join(found)


def test_the_spoken_glossary_check_can_fail_on_a_filled_line(tiny_smollm2_bundle):
    """The check above reads the filled variant line (ch03-norm.rmsnorm in Spanish) and would see a
    replaced spelling in it."""
    from onepass.words import glossary
    words = Words.load("es")
    line = script.chapter_lines("03", tiny_smollm2_bundle, tiny_smollm2_bundle.ledger(), words)["norm"]
    assert not glossary.violations("es", {"x": ("RMSNorm", line.text)}, strict=False)
    assert glossary.violations("es", {"x": ("RMSNorm", line.text + " el RMSNorm")}, strict=False)


# -- the modern decoder's names as the voices say them (words/lexicon) -------------------------------------
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng")
@pytest.mark.parametrize("lang, term, said", [
    ("en", "RoPE", "r'oUp"),                    # one syllable, 'rope' (not 'ro pee')
    ("en", "SwiGLU", "sw'Ig l'u:"),             # 'swig-loo' (not 'swy glue')
    ("es", "RoPE", "R2'owp"),                   # one syllable (not 'ro-pe')
    ("es", "SwiGLU", "sw'iQ l'u"),
    ("es", "GQA", "x'e k'u 'a"),                # three letters (not 'jecuá')
    ("es", "cos θ", "kos'eno De t'eta"),        # issue 52: 'coseno de theta' (not 'kos' and an English 'theta')
    ("ur", "RoPE", "R'o:p"),                    # in the Urdu voice, 'rope' (روپ alone is 'roop')
    ("ur", "SwiGLU", "sv'Ig l'u:"),             # in the Urdu voice, 'swig-loo'
])
def test_the_modern_decoders_names_are_said_as_respelled(lang, term, said):
    import subprocess
    from onepass.words import lexicon
    voiced = lexicon.for_voice(f"{term}", lang)
    assert voiced != term, f"{term}: no {lang} lexicon row"
    heard = subprocess.run(["espeak-ng", "-q", "-x", "-v", {"en": "en-us"}.get(lang, lang), voiced], capture_output=True,
                           text=True, check=True, stdin=subprocess.DEVNULL).stdout.strip()
    assert heard == said, (voiced, heard)
