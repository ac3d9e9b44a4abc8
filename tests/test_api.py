"""onepass from Python and Jupyter (film/make/api.py, issue 44 item 4): a request is checked by the
command line's own code (same error class, same message), and in a notebook the result plays the
chapter inline with its captions track (examples/python_api.ipynb, run with nbclient)."""
from __future__ import annotations

import copy
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from onepass.film.make import api, request
from tests.helpers import one_clear_line, run_main

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "python_api.ipynb"


@pytest.mark.parametrize("argv, kwargs", [
    (["--chapter", "99"], dict(chapters="99")),                                  # no such chapter
    (["--chapter", "00", "--prompt", ""], dict(chapters="00", prompt="")),        # an empty prompt
    (["--chapter", "7,00", "--prompt", "", "--quality", "best"],                  # every problem at once
     dict(chapters=["7", "00"], prompt="", quality="best")),
], ids=["unknown-chapter", "empty-prompt", "three-problems"])
def test_a_bad_request_raises_what_the_command_line_says(monkeypatch, argv, kwargs):
    raised = []
    real = request.from_args

    def spy(*a, **k):        # what the command line raised, before render.py turns it into its line
        try:
            return real(*a, **k)
        except Exception as exc:
            raised.append(exc)
            raise
    monkeypatch.setattr(request, "from_args", spy)
    rc, _, err = run_main(*argv, "--voice", "none")
    assert rc == 2 and len(raised) == 1
    with pytest.raises(type(raised[0])) as caught:
        api.render(**kwargs, voice="none")
    assert type(caught.value) is type(raised[0]) and isinstance(caught.value, api.OnepassError)
    assert one_clear_line(err) == f"error: {caught.value}"
    assert str(caught.value) == str(raised[0])


def test_a_keyword_render_py_has_no_flag_for_is_refused():
    with pytest.raises(TypeError, match="'qualty'.*did you mean 'quality'"):
        api.render(chapters="00", qualty="low")


def test_a_video_outside_the_notebooks_folder_is_embedded(tmp_path, monkeypatch):
    video = tmp_path / "films" / "ch00-tokens.mp4"
    video.parent.mkdir()
    video.write_bytes(b"not really a video")
    video.with_suffix(".vtt").write_text("WEBVTT\n", encoding="utf-8")
    shown = api.Rendered([video, video.with_suffix(".vtt")], videos=[video], lang="ur", titles=["tokens"])
    monkeypatch.chdir(tmp_path)
    page = shown._repr_html_()
    assert 'src="films/ch00-tokens.mp4"' in page and 'kind="captions" src="films/ch00-tokens.vtt" srclang="ur"' in page
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    page = shown._repr_html_()
    assert 'src="data:video/mp4;base64,bm90IHJlYWxseSBhIHZpZGVv"' in page
    assert 'src="data:text/vtt;base64,V0VCVlRUCg=="' in page
    assert str(video) in repr(shown) and str(video.with_suffix(".vtt")) in repr(shown)


def seed_bundle(bundle) -> Path:
    """`bundle` (extracted in this process) where a render in another process with the same prompt and
    weights looks for it, the run's shared cache: there it finds it as a second run on a machine does,
    and imports neither torch nor transformers (about 6 s of a kernel's CPU). Renamed into place, so a
    process looking meanwhile never sees half a bundle."""
    from onepass.data import home
    target = home.bundles_dir() / bundle.path.name
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        part = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        for f in bundle.path.iterdir():
            shutil.copy2(f, part / f.name)
        try:
            os.rename(part, target)
        except OSError:                  # another process put it there first
            shutil.rmtree(part, ignore_errors=True)
    return target


@pytest.mark.render
def test_the_example_notebook_plays_the_chapter_with_its_captions(tmp_path, monkeypatch, tiny_bundle):
    """The notebook as written, in a kernel. Its extraction (the API's own, tested in this process by
    tests/test_reliability_round5.py) is the tiny bundle the suite extracted already."""
    import nbformat
    seed_bundle(tiny_bundle)
    # the kernel imports this checkout (an install of another, or an older editable one, would not do)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    from nbclient import NotebookClient
    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)          # run beside a copy: out/ is the copy's
    nb = nbformat.read(tmp_path / NOTEBOOK.name, as_version=4)
    ran = copy.deepcopy(nb)
    NotebookClient(ran, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = next(o for c in ran.cells if c.cell_type == "code" for o in c.outputs
                 if o.get("output_type") == "execute_result" and "text/html" in o.get("data", {}))
    page = shown["data"]["text/html"]
    video = re.search(r'<video controls[^>]* src="([^"]+)">', page)
    track = re.search(r'<track kind="captions" src="([^"]+)" srclang="en"[^>]*default>', page)
    assert video and track, page[:2000]
    mp4, vtt = tmp_path / video.group(1), tmp_path / track.group(1)     # relative to the notebook's folder
    assert video.group(1).startswith("out/") and mp4.name.startswith("ch00-") and mp4.suffix == ".mp4"
    assert mp4.stat().st_size > 10_000 and vtt == mp4.with_suffix(".vtt")
    assert vtt.read_text(encoding="utf-8").startswith("WEBVTT")
    listing = shown["data"]["text/plain"]                    # the plain repr lists every file written
    for path in (mp4, vtt, mp4.with_suffix(".srt"), mp4.with_suffix(".descriptions.vtt")):
        assert str(path.resolve()) in listing or str(path) in listing, listing
