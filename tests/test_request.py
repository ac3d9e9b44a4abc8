"""One request (film/make/request.py): the command line, a manifest job and the docs say the same thing,
every problem is reported at once, and --watch reaches the bundle."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass import cli as render  # noqa: E402
from onepass.data import extract, tokenizer  # noqa: E402
from onepass.film.make import batch, request  # noqa: E402

from tests.helpers import run_main  # noqa: E402


def fields_of(req) -> dict:
    return {f.name: getattr(req, f.name) for f in dataclasses.fields(request.Request) if f.compare}


def test_the_command_line_and_a_manifest_job_make_the_same_request(tmp_path):
    out = tmp_path / "films"
    cli = request.from_args(render.parse_args([
        "--chapter", "2,ch00", "--prompt", "The capital of Pakistan is", "--weights", "random",
        "--watch", " Islamabad", "--quality", "medium", "--voice", "none", "--burn-captions", "--clips",
        "--clip-format", "webm", "--out", str(out)]))
    manifest = tmp_path / "course.toml"
    manifest.write_text('[[job]]\nprompt = "The capital of Pakistan is"\nchapters = ["ch00", 2]\nweights = "random"\n'
                        'watch = " Islamabad"\nquality = "medium"\nvoice = "none"\nburn_captions = true\n'
                        'clips = true\nclip_format = "webm"\nout = "films"\n')
    [job] = batch.load_manifest(manifest)
    assert fields_of(job) == fields_of(cli)
    assert cli.chapters == ["00", "02"] and cli.out == out and cli.service.silent
    # and the one function that makes build options gives both the same
    a, b = request.build_options(cli), request.build_options(job)
    assert (a.quality, a.out, a.voice_spec, a.is_voiced, a.burn_captions) == \
        (b.quality, b.out, b.voice_spec, b.is_voiced, b.burn_captions) == ("medium", out, "none", False, True)


def test_every_problem_of_a_command_line_is_reported_at_once(monkeypatch):
    monkeypatch.setattr(extract, "extract", lambda *a, **k: pytest.fail("extracted before validating"))
    rc, _, err = run_main("--chapter", "99", "--quality", "ultra", "--weights", "nope", "--watch", " two words",
                          "--clip-format", "gif", "--voice", "no-such-voice", "--jobs", "0")
    assert rc == 2 and "Traceback" not in err
    line = " ".join(err.split())
    assert "7 problems, nothing rendered" in line, line
    for part in ("there is no chapter '99'", "--quality: must be one of draft, low, medium, high, 4k (got 'ultra')",
                 "--weights: must be auto, gpt2", "--watch: ", "single token", "--clip-format: needs --clips or --slides",
                 "--voice: no-such-voice", "--jobs: must be at least 1"):
        assert part in line, (part, line)


def test_one_problem_is_one_line():
    rc, _, err = run_main("--inspect", "--weights", "tiny", "--quality", "ultra")
    assert rc == 2 and err.strip().splitlines()[-1] == \
        "error: --quality: must be one of draft, low, medium, high, 4k (got 'ultra')"


def test_readme_option_table_is_made_from_the_options():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert request.markdown_table() in readme, "README's option table is stale: paste `python -m onepass.film.make.request --markdown`"
    help_text = " ".join(_help().split())
    for o in request.OPTIONS:                       # and every option the table names is a flag render.py takes
        if o.cli:
            assert o.flag in help_text, o.flag


def _help() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        render.parse_args(["--help"])
    return out.getvalue()


def test_watch_reaches_the_bundle_and_its_default_is_read_at_the_edge(bundle_root, monkeypatch):
    monkeypatch.setattr(extract, "extract", functools.partial(extract.extract, root=bundle_root))
    prompt = "The capital of Pakistan is"
    req = request.from_args(render.parse_args(["--inspect", "--weights", "tiny", "--prompt", prompt,
                                               "--watch", " Islamabad"]), needs_chapters=False)
    b = request.get_bundle(req, log=lambda m: None)
    assert b.meta["watch"] == {"text": " Islamabad", "id": tokenizer.encode(" Islamabad")[0]}
    monkeypatch.setenv(request.WATCH_ENV, "none")        # the documented user default
    assert render.parse_args(["--inspect"]).watch == "none"
    assert render.parse_args(["--inspect", "--watch", " cat"]).watch == " cat"    # the flag wins
    other = request.get_bundle(request.from_args(render.parse_args(["--inspect", "--weights", "tiny", "--prompt",
                                                                    prompt]), needs_chapters=False), lambda m: None)
    assert other.meta["watch"] is None and other.path != b.path      # another token: another bundle


def test_a_manifest_watch_token_is_checked_with_the_rest(tmp_path):
    manifest = tmp_path / "course.toml"
    manifest.write_text('[[job]]\nprompt = "x"\nchapters = ["04"]\nvoice = "none"\nwatch = " two words"\n')
    with pytest.raises(batch.ManifestError) as err:
        batch.load_manifest(manifest)
    assert [p for p in err.value.problems if p.startswith("job 1, watch: ")], err.value.problems


def test_inspect_json_is_unchanged_by_the_request(bundle_root, monkeypatch):
    monkeypatch.setattr(extract, "extract", functools.partial(extract.extract, root=bundle_root))
    rc, out, err = run_main("--inspect", "--json", "--weights", "tiny", "--prompt", "Hello")
    assert rc == 0, err
    assert json.loads(out)["tokens"][0]["token"] == "Hello"


def test_a_prompt_that_starts_with_a_dash_is_text():
    assert render.parse_args(["--inspect", "--prompt", "-:"]).prompt == "-:"
    assert render.parse_args(["--inspect", "--prompt", "- a list item", "--watch", "-"]).watch == "-"
    with pytest.raises(SystemExit):              # a forgotten value is still an error, not the prompt "--json"
        render.parse_args(["--inspect", "--prompt", "--json"])


def test_list_and_batch_refuse_typed_render_options_but_not_the_users_defaults(monkeypatch):
    monkeypatch.setenv(request.WATCH_ENV, " cat")             # a default from the environment is not typed
    rc, out, err = run_main("--list")
    assert rc == 0 and out.startswith("00"), err
    rc, _, err = run_main("--list", "--watch", " cat")
    assert rc == 2 and "--list takes no --watch" in err
