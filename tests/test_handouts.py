"""What a course needs besides the video (issue 23): a PowerPoint that plays by itself, the
publishing kit (descriptions with chapter timestamps, 1280×720 thumbnails), handouts (PDF) and
stills, and notebooks that recompute a chapter's numbers from the model.

Chapter 02 of the tiny model is built through the real build (plan, keys, join) with a stand-in
scene renderer, as tests/test_lecture.py does: pictures whose colours change every frame and the
cues of the lines chapter 02 really speaks, here with beats of 3, 12 and 6 seconds in turn, so
some beats are closer than a video site's 10 s chapters and some are not.
"""
from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import extract  # noqa: E402
from onepass.film.make import build, request  # noqa: E402
from onepass.film.kit import clips, handout, notebook, publish, slides  # noqa: E402
from onepass.film.plan import keys  # noqa: E402
from tests.helpers import packets_account  # noqa: E402
from onepass.voiceover import script  # noqa: E402
from onepass.voiceover.media import probe  # noqa: E402
from onepass.words.catalog import Words  # noqa: E402

FPS = 5
BEAT_SECONDS = (3, 12, 6)
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
POPPLER = shutil.which("pdftotext") and shutil.which("pdfinfo") and shutil.which("pdftoppm")

FAKE_SCENE = '''\
import json, os, subprocess, sys
spec = json.loads(sys.argv[1])
tmp = spec["out"] + ".part.mp4"
subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                f"color=c=black:size=160x90:rate={spec['fps']},format=rgb24,geq=r='mod(N*37+X,256)'"
                f":g='mod(N*91+Y,256)':b='{spec['hue']}'", "-frames:v", str(spec["frames"]), "-c:v", "libx264",
                "-pix_fmt", "yuv420p", "-g", "30", tmp], check=True)
os.replace(tmp, spec["out"])
cues = [{"beat": beat, "start": start, "end": end, "text": text, "clip_start": start, "cached": True, "clip": None,
         "overrun": 0.0, "segments": [{"start": start, "end": end, "text": text}]}
        for beat, text, start, end in spec["beats"]]
json.dump(cues, open(spec["cues"], "w"))
''' + packets_account('spec["out"]', 'spec["out"]')


class Chapter02:
    """Chapter 02 of the tiny model through onepass.film.make.build, each scene a stand-in picture."""

    def __init__(self, tmp: Path, bundle, lang: str = "en"):
        self.tmp, self.bundle = tmp, bundle
        self.fake = tmp / "fake_scene.py"
        self.fake.write_text(FAKE_SCENE)
        self.words = Words.load(lang)
        self.lines = script.chapter_lines("02", bundle, bundle.ledger(), self.words)
        src = keys.chapter_source("onepass.scenes.ch02_attention")
        self.beats = {scene: (["title"] if i == 0 else []) + src.beats[scene] for i, scene in enumerate(src.scenes)}
        self.count = 0
        self.options = build.BuildOptions(quality="low", out=tmp / "out", jobs=2, command=self.command, words=self.words)
        self.result = build.render(["02"], bundle, self.options)[0]

    def command(self, job, cues):
        beats, frame = [], 0
        offset = sum(len(self.beats[s]) for s in list(self.beats)[:job.index])
        for k, beat in enumerate(self.beats[job.scene]):
            seconds = BEAT_SECONDS[(offset + k) % len(BEAT_SECONDS)]
            beats.append([beat, self.lines[beat].text, frame / FPS + 1e-9, frame / FPS + seconds - 0.5])
            frame += seconds * FPS
        spec = {"out": str(job.mp4), "cues": str(cues), "frames": frame, "fps": FPS, "beats": beats,
                "hue": 70 * job.index}
        return [sys.executable, str(self.fake), json.dumps(spec)]


@pytest.fixture(scope="module")
def chapter(tiny_bundle, tmp_path_factory):
    return Chapter02(tmp_path_factory.mktemp("handouts"), tiny_bundle)


def pdf_pages(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def pdf_text(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def flat(text: str) -> str:
    return " ".join(text.split())


# -- PowerPoint -----------------------------------------------------------------------------------
def test_every_video_slide_plays_on_entry_and_the_title_slide_shows_the_thumbnail(chapter):
    from pptx import Presentation
    deck = slides.write_deck([chapter.result], "mp4", chapter.words)
    prs = Presentation(str(deck.pptx))
    assert len(prs.slides) == deck.slides == len(script.beats("02"))
    for slide in prs.slides:
        movies = [s for s in slide.shapes if s._element.xpath(".//a:videoFile")]
        assert len(movies) == 1
        # the timing PowerPoint writes for "Start: Automatically", aimed at this slide's video
        assert slides.autoplay_shapes(slide) == [movies[0].shape_id]
        nodes = slide._element.xpath("./p:timing//p:cTn[@nodeType='mainSeq']")
        assert nodes, "no main sequence: the video would wait for a click"
        heading = slide.shapes[0].text_frame.text
        assert heading.startswith("02 · ") and not heading.endswith(("— title", "— qkv", "— intro")), heading
    lines = script.chapter_lines("02", chapter.bundle, chapter.bundle.ledger(), chapter.words)
    assert [s.shapes[0].text_frame.text.split(" — ", 1)[1] for s in prs.slides] == \
        [publish.short_title(line.text) for line in lines.values()], "a slide is headed by its beat's id"
    first = prs.slides[0]
    poster = next(s for s in first.shapes if s._element.xpath(".//a:videoFile"))
    blob = poster.part.related_part(poster._element.xpath(".//a:blip/@r:embed")[0]).blob
    assert blob == chapter.result.final.with_suffix(".png").read_bytes(), "the title slide's poster is not the thumbnail"


@pytest.mark.skipif(not SOFFICE or not POPPLER, reason="LibreOffice (soffice) or poppler-utils is not installed")
def test_libreoffice_opens_the_deck_every_slide_a_page_and_none_blank(chapter, tmp_path):
    deck = slides.write_deck([chapter.result], "mp4", chapter.words)
    proc = subprocess.run([SOFFICE, f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}", "--headless",
                           "--convert-to", "pdf", "--outdir", str(tmp_path), str(deck.pptx)],
                          capture_output=True, text=True, timeout=240)
    pdf = tmp_path / deck.pptx.with_suffix(".pdf").name
    assert pdf.is_file(), proc.stderr[-500:]
    assert pdf_pages(pdf) == deck.slides
    subprocess.run(["pdftoppm", "-r", "20", "-png", str(pdf), str(tmp_path / "page")], check=True)
    from PIL import Image
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == deck.slides
    for p in pages:
        pixels = np.asarray(Image.open(p).convert("L"), dtype=float)
        assert pixels.std() > 5, f"{p.name} is blank"


# -- publishing kit -----------------------------------------------------------------------------
def test_the_description_has_chapter_timestamps_at_clip_starts_and_cites_the_bundle(chapter, tiny_bundle):
    cs = clips.write_clips(chapter.result, "mp4")
    made = publish.write_publish([chapter.result], tiny_bundle, chapter.words)
    text = (chapter.result.final.parent / "ch02.description.txt").read_text(encoding="utf-8")
    assert chapter.words.text("kit:summary-02") in text
    assert tiny_bundle.meta["weights"]["sha256"] in text and f"“{tiny_bundle.prompt}”" in text
    stamps = [(publish.parse_stamp(m.group(1)), m.group(2))
              for m in re.finditer(r"^(\d+:\d{2}(?::\d{2})?) (.+)$", text, re.M)]
    starts = [e["start"] for e in cs.entries]
    length = cs.entries[-1]["end"]
    assert stamps[0][0] == 0 and len(stamps) >= 3
    assert all(b[0] - a[0] >= publish.MIN_GAP for a, b in zip(stamps, stamps[1:])), stamps
    assert length - stamps[-1][0] >= publish.MIN_GAP
    assert all(any(s == int(start) for start in starts) for s, _ in stamps), (stamps, starts)
    assert len(stamps) < len(starts), "beats closer than 10 s were not merged"
    # each title is its beat's line (the title beat: the chapter's heading)
    by_start = {int(e["start"]): e for e in cs.entries}
    for s, title in stamps[1:]:
        assert by_start[s]["text"].startswith(title.rstrip("…")), (title, by_start[s]["text"])
    thumb = next(p for p in made if p.suffix == ".png")
    facts = probe(thumb, "v:0", "stream=width,height")
    assert (int(facts["width"]), int(facts["height"])) == publish.THUMB_SIZE
    before = thumb.stat().st_mtime_ns
    publish.write_publish([chapter.result], tiny_bundle, chapter.words)
    assert thumb.stat().st_mtime_ns == before, "an unchanged thumbnail was made again"


def test_marks_closer_than_ten_seconds_merge_into_the_one_before():
    M = publish.Mark
    marks = [M(0, "a", ("a",)), M(4, "b", ("b",)), M(10.2, "c", ("c",)), M(19.9, "d", ("d",)), M(31, "e", ("e",))]
    # 4 s after 0: merged; 19.9 is 19 as written, 9 s after 10: merged; 31 leaves 4 s to the end: merged
    assert [(m.seconds, m.beats) for m in publish.merge_marks(marks, length=35)] == \
        [(0, ("a", "b")), (10.2, ("c", "d", "e"))]
    assert [m.beats for m in publish.merge_marks(marks, length=41)] == [("a", "b"), ("c", "d"), ("e",)]
    assert publish.stamp(3725.9) == "1:02:05" and publish.parse_stamp("1:02:05") == 3725


# -- handouts and stills ----------------------------------------------------------------------------
@pytest.mark.skipif(not handout.chromium() or not POPPLER, reason="Chromium or poppler-utils is not installed")
@pytest.mark.parametrize("paper, size", [("letter", "612 x 792"), ("a4", "(A4)")])   # A4 last: the next tests read it
def test_the_handout_has_a_page_per_beat_with_its_words_and_numbers_as_text(chapter, tiny_bundle, paper, size, tmp_path):
    result = chapter.result
    pdf, = handout.write_handouts([result], tiny_bundle, chapter.words, paper=paper, force=True)
    spans = clips.beat_spans(result)
    assert pdf_pages(pdf) == len(spans) + handout.FRONT_PAGES
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    assert size in info
    text = flat(pdf_text(pdf))
    for span in spans:
        assert flat(span.text) in text, span.beat
    # each beat is named in words (the first sentence of its line, as the description's timestamps
    # name it), on the cover with where the video shows it and atop its page, never by its id
    heading = chapter.words.text("film:heading", chapter="02", title=result.title)
    for i, span in enumerate(spans, 1):
        title = publish.beat_title(span.beat, span.text, heading)
        when = publish.stamp(span.start / span.fps)
        assert flat(f"{when} {title}") in text, span.beat
        assert flat(f"{heading} · {i}/{len(spans)} · {when} {title}") in text, span.beat
        assert f"· {span.beat} " not in text
    numbers = handout.beat_numbers("02", tiny_bundle, chapter.words)
    assert sum(map(len, numbers.values())) >= 10
    for beat, values in numbers.items():
        for value, context in values:
            # every value the line says, with the words around it (not a placeholder's name)
            assert value in context and flat(context) in text, (beat, value, context)
    assert "qkv_flops" not in text and "n_head" not in text
    assert tiny_bundle.meta["weights"]["sha256"] in "".join(text.split())
    for step, _, flops, _ in handout.ledger_rows("02", tiny_bundle, chapter.words)[1]:
        assert step in text and f"{flops:,}" in text


def structure(pdf: Path) -> tuple[object, list[tuple[str, object]]]:
    """The PDF (pikepdf) and its structure tree's elements in reading order: [(type, element)]."""
    import pikepdf
    doc = pikepdf.open(pdf)
    out = []

    def walk(node):
        if isinstance(node, pikepdf.Dictionary) and "/S" in node:
            out.append((str(node.S)[1:], node))
        kids = node.get("/K") if isinstance(node, pikepdf.Dictionary) else None
        for kid in (kids if isinstance(kids, pikepdf.Array) else [kids] if kids is not None else []):
            if isinstance(kid, pikepdf.Dictionary):
                walk(kid)
    walk(doc.Root.StructTreeRoot)
    return doc, out


@pytest.mark.skipif(not handout.chromium(), reason="Chromium is not installed")
@pytest.mark.parametrize("lang", ["en", "ur"])
def test_the_handout_is_a_tagged_pdf_whose_frames_say_what_they_show(chapter, tiny_bundle, tmp_path_factory, lang):
    """Issue 43 item 7, read back from the structure tree (pikepdf): the document's language and
    title, headings, the contents as a list, the tables with header cells, and each frame a Figure
    whose alternative text is its beat's audio description (not its first sentence)."""
    pytest.importorskip("pikepdf", reason="pikepdf is not installed (pip install -e .[test])")
    ch = chapter if lang == "en" else Chapter02(tmp_path_factory.mktemp(f"handout-{lang}"), tiny_bundle, lang)
    pdf, = handout.write_handouts([ch.result], tiny_bundle, ch.words)
    doc, tags = structure(pdf)
    heading = ch.words.text("film:heading", chapter="02", title=ch.result.title)
    assert str(doc.Root.Lang) == lang and bool(doc.Root.MarkInfo.Marked)
    assert str(doc.docinfo.Title) == heading and bool(doc.Root.ViewerPreferences.DisplayDocTitle)
    kinds = [k for k, _ in tags]
    spans = clips.beat_spans(ch.result)
    assert kinds.count("H1") == 1 and kinds.count("H2") == len(spans) + 1 and "H3" in kinds
    assert kinds.count("LI") >= len(spans) and "L" in kinds                  # the contents
    assert kinds.count("Table") >= 2 and kinds.count("TH") >= 6               # the ledger, the numbers
    # a frame is a still: its alternative text is its description's still wording (no motion words)
    described = script.chapter_descriptions("02", tiny_bundle, tiny_bundle.ledger(), ch.words, still=True)
    assert len([s for s in spans if s.beat in described]) >= len(spans) - 1
    alts = [str(e.get("/Alt")) for k, e in tags if k == "Figure"]
    titles = [publish.beat_title(s.beat, s.text, heading) for s in spans]
    assert alts == [" ".join(described[s.beat].text.split()) if s.beat in described else t
                    for s, t in zip(spans, titles)]
    firsts = {script.split_sentences(s.text)[0] for s in spans}
    assert not firsts & {a for s, a in zip(spans, alts) if s.beat in described}


def test_a_beats_numbers_are_its_values_with_the_words_around_them(tiny_bundle):
    said = handout.beat_lines("02", tiny_bundle, Words.load("en"))["inputs"]
    shown = [said.text[a:b] for a, b in said.values]
    assert shown == [str(tiny_bundle.T), str(tiny_bundle.config["n_embd"])]
    assert said.numbers(words_around=2) == [
        (str(tiny_bundle.T), f"That is {tiny_bundle.T} rows, one …"),
        (str(tiny_bundle.config["n_embd"]), f"… token, each {tiny_bundle.config['n_embd']} numbers wide.")]
    # in Urdu, right to left, the values are found in its own words
    ur = handout.beat_lines("02", tiny_bundle, Words.load("ur"))["inputs"]
    assert [ur.text[a:b] for a, b in ur.values] == shown and ur.text != said.text


def test_frames_print_dark_on_white_keeping_their_colours(tmp_path):
    """The film's frames are light on near-black; printed they would be a sheet of toner with
    grey words. The handout prints them light: ground white, words dark, a red still red."""
    from PIL import Image
    frame = np.zeros((90, 160, 3), np.uint8)
    frame[:] = (15, 17, 23)                       # the film's ground
    frame[20:30, 20:60] = (235, 235, 235)         # words
    frame[40:60, 20:60] = (230, 80, 60)           # a positive cell
    frame[40:60, 80:120] = (60, 110, 230)         # a negative cell
    png = tmp_path / "f.png"
    Image.fromarray(frame).save(png)
    out = np.asarray(Image.open(handout.for_print(png)).convert("RGB"), dtype=int)
    grey = np.asarray(Image.open(png).convert("L"), dtype=int)
    assert grey[0:10, 100:150].min() >= 250, "the ground is not white"
    assert grey[22:28, 25:55].max() <= 40, "the words are not dark"
    red, blue = out[50, 40], out[50, 100]
    assert red[0] > red[2] + 40 and blue[2] > blue[0] + 40, "colours lost their hue"


def test_a_chapter_ledger_is_what_its_scenes_pay_for(tiny_bundle):
    ledger = tiny_bundle.ledger()
    assert handout.paid_keys("02", ledger) == ["L0.qkv", "L0.scores", "L0.mix", "L0.out"]
    three = handout.paid_keys("03", ledger)
    assert three[:2] == ["L0.mlp_up", "L0.mlp_down"] and "L1.qkv" in three and "L1.mlp_down" in three
    assert handout.paid_keys("04", ledger) == ["unembed"]


def test_stills_are_each_beats_settled_frame(chapter):
    from PIL import Image
    made = handout.write_stills([chapter.result], "png")
    spans = clips.beat_spans(chapter.result)
    assert [p.name for p in made] == [f"{s.name}.png" for s in spans]
    cs = clips.write_clips(chapter.result, "mp4")
    for span, still, entry in zip(spans, made, cs.entries):
        if span.beat != "title":          # the clip's poster is its last frame too
            a = np.asarray(Image.open(still).convert("RGB"), dtype=float)
            b = np.asarray(Image.open(cs.folder / entry["files"]["poster"]).convert("RGB"), dtype=float)
            assert np.abs(a - b).mean() < 3, span.beat


# -- notebooks --------------------------------------------------------------------------------------
# A notebook starts from a clean namespace: %reset -f. What it leaves alive (modules: torch, transformers,
# onepass) is frozen out of the garbage collector's sweeps, or each later reset's gc.collect walks it again
# (0.4 s of CPU each); it binds no name.
RESET = "get_ipython().run_line_magic('reset', '-f')\n__import__('gc').freeze()"


class Kernel:
    """One Jupyter kernel for this module's notebook tests, each run starting with RESET: a kernel start
    and torch's and transformers' imports once, not once a test. One torch thread: a notebook's matrices
    are a few rows, and two threads on two busy cores cost several times the CPU (SmolLM2's generated
    steps: 2 s of CPU, 0.4 s with one)."""

    def __init__(self):
        self.client = None

    def execute(self, cells, metadata, timeout: int):
        """`cells` run as one notebook; returns the executed notebook, or raises CellExecutionError with it
        as `.merged`."""
        import os
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
        assert cells[0].source == RESET, "a run starts from a clean namespace"
        for n, cell in enumerate(cells):
            cell["id"] = f"cell-{n}"
        merged = nbformat.v4.new_notebook(cells=cells, metadata=metadata)
        if self.client is None:
            self.client = NotebookClient(merged, timeout=timeout, kernel_name="python3")
        self.client.nb, self.client.timeout = merged, timeout
        try:
            self.client.execute(cleanup_kc=False, env=dict(os.environ, OMP_NUM_THREADS="1"))
        except CellExecutionError as exc:
            exc.merged = merged
            raise
        except BaseException:           # a dead or stuck kernel: the next test starts a new one
            self.close()
            raise
        return merged

    def close(self):
        client, self.client = self.client, None
        if client is not None and client.km is not None:
            from jupyter_core.utils import run_sync
            if client.kc is not None:
                client.kc.stop_channels()
            run_sync(client.km.shutdown_kernel)(now=True)


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    yield k
    k.close()


def run_notebooks(kernel, nbs):
    """Execute notebooks one after another in one kernel, each from a clean namespace (RESET)."""
    import nbformat
    cells = []
    for nb in nbs:
        cells += [nbformat.v4.new_code_cell(RESET)] + copy.deepcopy(nb.cells)
    return kernel.execute(cells, nbs[0].metadata, timeout=300)


def test_every_chapter_notebook_recomputes_its_numbers_from_the_model_and_a_wrong_value_fails(tiny_bundle, kernel):
    """Each chapter's notebook says its lines and recomputes its numbers from the model, agreeing with the
    bundle; chapter 02's fails when one bundle value is off beyond the printed digits (one cell of every
    head's last row). One kernel: the right notebooks run through, then the wrong one breaks."""
    from nbclient.exceptions import CellExecutionError
    words = Words.load("en")
    nbs = [notebook.chapter_notebook(c, tiny_bundle, words) for c in ["00", "01", "02", "03", "04", "05", "06"]]
    for c, nb in zip(["00", "01", "02", "03", "04", "05", "06"], nbs):
        said = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
        for line in script.chapter_lines(c, tiny_bundle, tiny_bundle.ledger(), words).values():
            assert notebook.md_text(line.text) in said        # as text, escaped for Markdown (issue 41)
        assert sum("same(" in cell.source or "assert" in cell.source for cell in nb.cells if cell.cell_type == "code") >= 3
    wrong = copy.copy(tiny_bundle)
    wrong.tensors = dict(tiny_bundle.tensors)
    probs = tiny_bundle["probs"].copy()
    probs[0, :, -1, 0] += 0.002                  # one cell of every head's last row, beyond the printed digits
    wrong.tensors["probs"] = probs
    nbs.append(notebook.chapter_notebook("02", wrong, words))
    with pytest.raises(CellExecutionError, match="weights differs from the bundle") as failed:
        run_notebooks(kernel, nbs)
    cells = failed.value.merged.cells
    broke = [n for n, cell in enumerate(cells) if any(o.get("output_type") == "error" for o in cell.get("outputs", []))]
    resets = [n for n, cell in enumerate(cells) if "run_line_magic('reset'" in cell.source]
    assert len(resets) == 8 and len(broke) == 1 and broke[0] > resets[-1]   # every right notebook ran through


def run_sharing_the_model(kernel, nbs):
    """Execute a Llama-style model's notebooks in one kernel, loading its weights once (tens of seconds
    for SmolLM2's GGUF file): the first notebook whole, then each other's bundle cell and chapter cells.
    Their tokenizer, model and helper cells are the first's, text for text (asserted), so what runs is
    what each notebook runs (Kernel.execute)."""
    import nbformat
    code = lambda nb: [c for c in nb.cells if c.cell_type == "code"]
    preamble = [c.source for c in code(nbs[0])[1:4]]          # tokenizer, model, helpers
    cells = [nbformat.v4.new_code_cell(RESET)] + list(nbs[0].cells)
    for nb in nbs[1:]:
        assert [c.source for c in code(nb)[1:4]] == preamble
        cells += [code(nb)[0]] + nb.cells[nb.cells.index(code(nb)[3]) + 1:]
    return kernel.execute(copy.deepcopy(cells), nbs[0].metadata, timeout=600)


def wrong_copy(bundle, name, change):
    """The bundle with one tensor changed (a copy: the session's bundle is left as it is)."""
    wrong = copy.copy(bundle)
    wrong.tensors = dict(bundle.tensors)
    wrong.tensors[name] = bundle[name].copy()
    change(wrong.tensors[name])
    return wrong


def test_smollm2_notebooks_recompute_every_chapter_and_a_wrong_value_fails(smollm2_bundle, kernel):
    """SmolLM2's notebooks do its own arithmetic from its real weights (RMSNorm, RoPE, grouped-query
    attention, SwiGLU, the tied unembedding, the generated steps, the ledger) and agree with its bundle;
    the same cells fail when one bundle value is off: the last row's turned query (RoPE) in the
    featured head, beyond the printed digits. One kernel, one load of the weights."""
    from nbclient.exceptions import CellExecutionError
    from onepass.data.facts.ch00 import model_title
    from onepass.data.facts.ch02 import head_facts
    words, chapters = Words.load("en"), ["00", "01", "02", "03", "04", "05", "06"]
    nbs = [notebook.chapter_notebook(c, smollm2_bundle, words) for c in chapters]
    for c, nb in zip(chapters, nbs):
        said = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
        assert notebook.md_text(words.text("kit:notebook-llama", model=model_title(smollm2_bundle))) in said
        for line in script.chapter_lines(c, smollm2_bundle, smollm2_bundle.ledger(), words).values():
            assert notebook.md_text(line.text) in said
        assert sum("same(" in cell.source or "assert" in cell.source
                   for cell in nb.cells[5:] if cell.cell_type == "code") >= 2
    h = head_facts(smollm2_bundle)["head_index"]
    wrong = wrong_copy(smollm2_bundle, "q", lambda q: q.__setitem__((0, h, -1, 0), q[0, h, -1, 0] + 0.01))
    nbs.append(notebook.chapter_notebook("02", wrong, words))
    with pytest.raises(CellExecutionError, match="q, turned differs from the bundle") as failed:
        run_sharing_the_model(kernel, nbs)
    cells = failed.value.merged.cells
    broke = [n for n, cell in enumerate(cells) if any(o.get("output_type") == "error" for o in cell.get("outputs", []))]
    last_good = max(n for n, cell in enumerate(cells) if cell.source.startswith("BUNDLE_JSON"))
    assert len(broke) == 1 and broke[0] > last_good          # every right notebook ran through; the wrong one broke


def test_llama32_notebook_puts_begin_of_text_first_and_stretches_rope(tmp_path, kernel):
    """Llama 3.2's notebook (its 2-layer seeded stand-in): the prompt's ids start with
    <|begin_of_text|>, and RoPE's speeds are Llama 3's stretched ones, equal to the model's and the bundle's."""
    b = extract.extract("The cat sat on the", "tiny", model="llama-3.2-1b", root=tmp_path, log=lambda m: None)
    assert b.ids[0] == b.tokenizer.bos_id and b.config["rope"]["rope_type"] == "llama3"
    words = Words.load("en")
    run_sharing_the_model(kernel, [notebook.chapter_notebook(c, b, words) for c in ("00", "02")])


# -- options ----------------------------------------------------------------------------------------
def test_the_options_are_checked_before_anything_renders():
    _, problems = request.validate({"chapters": ["02"], "paper": "letter"}, ROOT)
    assert ("paper", "needs handout = true") in problems
    _, problems = request.validate({"chapters": ["02"], "stills": "svg"}, ROOT)
    assert any(k == "stills" and "png" in m for k, m in problems)
    req, problems = request.validate({"chapters": ["02"], "handout": True, "paper": "letter", "notebook": True,
                                      "publish": True, "stills": "png", "voice": "none"}, ROOT)
    assert problems == [] and (req.handout, req.paper, req.notebook, req.publish, req.stills) == \
        (True, "letter", True, True, "png")


@pytest.mark.skipif(not handout.chromium(), reason="Chromium is not installed")
def test_the_handout_tables_each_figures_numbers_beside_it(chapter, tiny_bundle):
    """Issue 53 item 1: beside each figure, the numbers it shows as a tagged table (a Caption, header
    cells, rows named by the prompt's tokens as the film shows them), the transcript's tables."""
    pytest.importorskip("pikepdf", reason="pikepdf is not installed (pip install -e .[test])")
    from onepass.film.kit.tables import chapter_tables
    from onepass.scenes.style import show_token
    pdf, = handout.write_handouts([chapter.result], tiny_bundle, chapter.words)
    doc, tags = structure(pdf)
    spans = {s.beat for s in clips.beat_spans(chapter.result)}
    shown = [t for beat, ts in chapter_tables("02", tiny_bundle, chapter.words).items() if beat in spans for t in ts]
    assert len(shown) >= 8
    kinds = [k for k, _ in tags]
    assert kinds.count("Caption") >= len(shown) and kinds.count("Table") >= len(shown) + 2     # + ledger, numbers
    text = flat(pdf_text(pdf))
    for t in shown:
        assert flat(t.caption) in text
        for name, cells in t.rows:
            assert all(c in text for c in cells), (t.caption, name)
    assert all(show_token(tok) in text for tok in tiny_bundle.tokens)


@pytest.mark.skipif(not handout.chromium(), reason="Chromium is not installed")
def test_a_handout_is_made_again_when_its_own_words_change_and_not_otherwise(chapter, tiny_bundle, tmp_path):
    """The handout's labels are kit words (kit.po): rewording one makes the PDF again. Last of the
    handout tests: the English A4 handout the ones before it read is made once (its own test), not again
    after this one's rewording; here it is kept, unchanged."""
    from tests.test_words import write_po
    result = chapter.result
    pdf, = handout.write_handouts([result], tiny_bundle, chapter.words)
    made = pdf.stat().st_mtime_ns
    assert handout.write_handouts([result], tiny_bundle, chapter.words) == [pdf] and pdf.stat().st_mtime_ns == made
    mine = Words.load("en", write_po(tmp_path / "kit.po", {"kit:handout-contents": "What is in it"}))
    handout.write_handouts([result], tiny_bundle, mine)
    assert pdf.stat().st_mtime_ns != made and "What is in it" in pdf_text(pdf)
