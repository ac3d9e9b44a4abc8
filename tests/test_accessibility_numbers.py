"""A blind student gets the numbers too (issue 53 item 1): every number a picture shows is in the
transcript as a real table (caption, column and row headers, rows and columns named by the prompt's
tokens), the same tables stand beside each figure of the handout, and the descriptions of the beats
that turn on numbers say them.
"""
from __future__ import annotations

import html.parser
import json
from types import SimpleNamespace

import numpy as np
import pytest

from tests.helpers import altered_bundle
from onepass.data.facts import ch02 as f02
from onepass.data.facts import ch04 as f04
from onepass.scenes.style import show_token
from onepass.voiceover import script
from onepass.words import numbers as N
from onepass.words.catalog import Words

CHAPTERS = ("00", "01", "02", "03", "04", "05", "06")


def fake_cues(chapter: str, bundle, words) -> list[dict]:
    """Cues as a scene records them, timed at the silent voice's estimated rate (no render)."""
    out, t = [], 0.0
    for beat, line in script.chapter_lines(chapter, bundle, bundle.ledger(), words).items():
        sentences = script.split_sentences(line.text)
        segs, at = [], t
        for s in sentences:
            segs.append({"start": at, "end": at + script.estimated_seconds(s), "text": s})
            at = segs[-1]["end"] + 0.3
        where = script.sentence_marks(line.text, sentences, [k for _, k in line.marks])
        marks = {name: [segs[i]["start"] + 0.1 * k / max(1, len(sentences[i])), segs[i]["end"]]
                 for (name, _), (i, k) in zip(line.marks, where)}
        out.append({"beat": beat, "start": t, "end": segs[-1]["end"], "clip_start": t, "segments": segs,
                    "marks": marks, "text": line.text})
        t = at + 0.5
    return out


def transcript(chapter: str, bundle, words, folder) -> tuple[str, str]:
    """write_tracks for one chapter from cues timed without a render: (HTML, text)."""
    from onepass.film.kit import describe
    cues = fake_cues(chapter, bundle, words)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "s.cues.json").write_text(json.dumps(cues), encoding="utf-8")
    final = folder / f"ch{chapter}-x.mp4"
    result = SimpleNamespace(chapter=chapter, title=words.text(f"chapter-{chapter}"), final=final,
                             scenes=[SimpleNamespace(seconds=cues[-1]["end"] + 1,
                                                     job=SimpleNamespace(cues=folder / "s.cues.json"))],
                             seconds=cues[-1]["end"] + 1)
    describe.write_tracks([result], bundle, words)
    return (final.with_suffix(".transcript.html").read_text(encoding="utf-8"),
            final.with_suffix(".transcript.txt").read_text(encoding="utf-8"))


class Tables(html.parser.HTMLParser):
    """Each <table> of a page: its caption, its header row ([(scope, text)]), its body rows
    ([(scope of the first cell, [cell texts])]) and the section heading it stands under."""

    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.cell, self.where, self.heading = [], None, None, None, ""
        self._h2 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self._h2, self.heading = True, ""
        elif tag == "table":
            self.cur = {"caption": "", "head": [], "rows": [], "section": self.heading}
        elif self.cur is not None and tag in ("thead", "tbody"):
            self.where = tag
        elif self.cur is not None and tag == "tr" and self.where == "tbody":
            self.cur["rows"].append([])
        elif self.cur is not None and tag in ("th", "td", "caption"):
            self.cell = [tag, a.get("scope"), ""]

    def handle_data(self, data):
        if self._h2:
            self.heading += data
        if self.cell is not None:
            self.cell[2] += data

    def handle_endtag(self, tag):
        if tag == "h2":
            self._h2 = False
        elif tag == "table":
            self.tables.append(self.cur)
            self.cur = None
        elif self.cell is not None and tag == self.cell[0]:
            kind, scope, text = self.cell
            if kind == "caption":
                self.cur["caption"] = text
            elif self.where == "thead":
                self.cur["head"].append((kind, scope, text))
            else:
                self.cur["rows"][-1].append((kind, scope, text))
            self.cell = None


def tables_of(page: str) -> list[dict]:
    p = Tables()
    p.feed(page)
    return p.tables


def by_caption(tables, words, mid: str, **values) -> dict:
    caption = words.text(mid, **values)
    [t] = [t for t in tables if t["caption"] == caption]
    return t


def cells(table) -> dict[tuple[str, str], str]:
    """(row name, column name) -> the cell's text."""
    cols = [text for _, _, text in table["head"][1:]]
    return {(row[0][2], c): cell[2] for row in table["rows"] for c, cell in zip(cols, row[1:])}


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_every_picture_that_shows_numbers_is_a_table_with_headers_in_the_transcript(tiny_bundle, tmp_path, lang):
    """Chapters 00-06 in every language: each chapter's transcript has its tables, each with a
    caption, a header row of column headers and every row named by a row header, as many cells as
    columns; the captions and headers are the language's own catalog words; the text transcript
    carries the same tables."""
    words = Words.load(lang)
    english = Words.load("en")
    for chapter in CHAPTERS:
        page, text = transcript(chapter, tiny_bundle, words, tmp_path / chapter)
        tables = tables_of(page)
        assert tables, chapter
        for t in tables:
            assert t["caption"].strip(), (chapter, t)
            assert t["caption"] in text, (chapter, t["caption"])
            assert len(t["head"]) >= 2 and all(k == "th" and s == "col" and x.strip() for k, s, x in t["head"]), t
            assert t["rows"], t
            for row in t["rows"]:
                assert row[0][:2] == ("th", "row") and row[0][2].strip(), (chapter, t["caption"], row)
                assert len(row) == len(t["head"]) and all(k == "td" for k, _, _ in row[1:]), (chapter, row)
        if lang != "en":     # the language's own words, not English's
            assert not {t["caption"] for t in tables} & {t["caption"] for t in tables_of(
                transcript(chapter, tiny_bundle, english, tmp_path / "en" / chapter)[0])}, chapter
    # chapter 02's pictures, each one a table: the input rows, the keys, the scores before and after the division, the
    # mask, the softmax's row and the weights, the budget bar, the two softmaxes of the root beat, the
    # blend's weights, the receipt and the meter
    page, _ = transcript("02", tiny_bundle, words, tmp_path / "02b")
    tables = tables_of(page)
    sections = [t["section"] for t in tables]
    assert len(tables) == 12 and len(set(sections)) == 9, sections       # the meter after the last beat


def test_the_transcript_tables_hold_the_facts_numbers_and_follow_the_bundle(tiny_bundle, tmp_path):
    """Chapter 02's tables read the facts the scene draws, formatted as the film writes them, rows and
    columns named by the prompt's tokens as shown (·sat); change the bundle's weights and the budget
    table changes with them."""
    words = Words.load("en")
    tokens = [show_token(t) for t in tiny_bundle.tokens]
    last = tiny_bundle.T - 1
    page, _ = transcript("02", tiny_bundle, words, tmp_path / "a")
    tables = tables_of(page)
    agree = f02.agreement_facts(tiny_bundle)
    keys = cells(by_caption(tables, words, "kit:table-keys", token=tokens[last]))
    for j, name in enumerate(tokens):
        assert keys[(name, words.text("kit:table-score"))] == N.fmt_signed(agree["dots"][j], 2)
        assert keys[(name, words.text("kit:table-angle"))] == N.fmt_int(int(round(agree["angle"][j])))
    r = f02.root_facts(tiny_bundle)
    scaled = cells(by_caption(tables, words, "kit:table-scaled", dh=str(r["dh"]), root=N.fmt_general(r["root"])))
    grid = tiny_bundle["scores_scaled"][0, r["head_index"]]
    assert {k: v for k, v in scaled.items()} == {(tokens[q], tokens[k]): N.fmt_signed(float(grid[q, k]), 2)
                                                 for q in range(tiny_bundle.T) for k in range(tiny_bundle.T)}
    masked = cells(by_caption(tables, words, "kit:table-masked"))
    assert masked[(tokens[0], tokens[1])] == "−∞"
    budget = cells(by_caption(tables, words, "kit:table-budget", token=tokens[last]))
    row = f02.budget_facts(tiny_bundle)["weights"]
    assert [budget[(t, words.text("kit:table-share"))] for t in tokens] == [N.fmt_pct(w) for w in row]

    h = r["head_index"]

    def swap(arrays):               # the last row's weights of the featured head, first and last swapped
        p = arrays["probs"]
        p[0, h, -1, [0, last]] = p[0, h, -1, [last, 0]]
    changed = altered_bundle(tiny_bundle, tmp_path / "changed", tensors=swap)
    after = cells(by_caption(tables_of(transcript("02", changed, words, tmp_path / "b")[0]), words,
                             "kit:table-budget", token=tokens[last]))
    share = words.text("kit:table-share")
    assert after[(tokens[0], share)] == budget[(tokens[last], share)] != budget[(tokens[0], share)]
    assert after[(tokens[last], share)] == budget[(tokens[0], share)]


def test_chapter_04s_top_candidates_are_tabled_by_rank(tiny_peaked_bundle, tmp_path):
    words = Words.load("es")
    tables = tables_of(transcript("04", tiny_peaked_bundle, words, tmp_path)[0])
    f = f04.vote_facts(tiny_peaked_bundle)
    top = by_caption(tables, words, "kit:table-top", n=str(len(f["top"])))
    assert [r[0][2] for r in top["rows"]] == [show_token(c["text"]) for c in f["top"]]
    with N.language("es"):
        assert [r[2][2] for r in top["rows"]] == [N.fmt_prob(c["prob"], N.prob_decimals([c["prob"] for c in f["top"]]))
                                                  for c in f["top"]]


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_chapter_02s_descriptions_say_the_numbers_its_beats_turn_on(tiny_bundle, tmp_path, lang):
    """The descriptions name the prompt's tokens and say the numbers a beat turns on, from the facts:
    the best key's angle and the highest scores, √d_head, the softmax row's and the last row's three
    largest shares, the layer's FLOPs; change the bundle's last row and the description follows."""
    words = Words.load(lang)

    def said(bundle) -> dict[str, str]:
        return {b: d.text for b, d in script.chapter_descriptions("02", bundle, bundle.ledger(), words).items()}
    d = said(tiny_bundle)
    for t in tiny_bundle.tokens:
        assert N.spoken_token(t, words) in d["intro"]
    agree = f02.agreement_facts(tiny_bundle)
    assert N.spoken_count(int(round(agree["angle"][agree["top_index"]])), words) in d["agree"]
    for j in np.argsort(-agree["dots"], kind="stable")[:3]:
        assert N.spoken_signed(float(agree["dots"][j]), 2, words) in d["agree"]
    with N.language(lang):
        assert N.fmt_general(np.sqrt(tiny_bundle.shape.d_head)) in d["scores"]
    assert N.spoken_count(tiny_bundle.ledger().attention_flops(0), words) in d["receipt"]

    def shares(weights) -> list[str]:
        return [words.text("kit:describe-share", share=N.spoken_pct(float(weights[j]), words),
                           token=N.spoken_token(tiny_bundle.tokens[j], words))
                for j in np.argsort(-np.asarray(weights), kind="stable")[:3]]
    row = f02.budget_facts(tiny_bundle)["weights"]
    assert all(s in d["last_row"] for s in shares(row))
    sm = f02.softmax_row(tiny_bundle, f02.softmax_row_index(range(tiny_bundle.T)))
    assert all(s in d["softmax"] for s in shares(sm["weights"]))

    h, last = f02.head_facts(tiny_bundle)["head_index"], tiny_bundle.T - 1

    def lift(arrays):              # the last row's weights: one unit wholly on the first token
        arrays["probs"][0, h, -1] = 0.0
        arrays["probs"][0, h, -1, 0] = 1.0
    changed = said(altered_bundle(tiny_bundle, tmp_path / "lift", tensors=lift))
    top = words.text("kit:describe-share", share=N.spoken_pct(1.0, words), token=N.spoken_token(tiny_bundle.tokens[0], words))
    assert top in changed["last_row"] and top not in d["last_row"]


def test_accessibility_md_points_only_at_tests_that_exist():
    """docs/ACCESSIBILITY.md's proofs name tests (`test_x.py::test_y`, `::test_z` for the file named
    last on its line, `::test_y...` for a name's start): each one is a test in tests/ (issue 53 item 7)."""
    import ast
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    names = {p.name: {n.name for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
                      if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
             for p in (root / "tests").glob("test_*.py")}
    missing, named = [], 0
    for line in (root / "docs" / "ACCESSIBILITY.md").read_text(encoding="utf-8").splitlines():
        current = None
        for m in re.finditer(r"`(test_\w+\.py)?(?:::)?(test_\w+)?(\.\.\.)?`", line):
            file, name, partial = m.groups()
            current = file or current
            if file and file not in names:
                missing.append(file)
            elif name and current:
                named += 1
                found = names.get(current, set())
                if not (any(n.startswith(name) for n in found) if partial else name in found):
                    missing.append(f"{current}::{name}")
    assert named > 30 and missing == []
