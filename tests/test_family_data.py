"""The GPT-2 family on the data side: the ledger, parameter counts and KV-cache figures of every size,
checked against torch; --model from the command line and a manifest to the bundle; models kept
apart in bundles, output folders, scene cache keys and a batch; the model's name in every language.

The torch checks build each size on the `meta` device: shapes without numbers, so GPT-2 XL costs
no memory and its forward pass no arithmetic, while torch's FlopCounterMode still sees every
operation with its shapes. No size is extracted here (bench/family.py measures that); the
command-line tests use `mini` weights (a size's layers and heads at a width of 4 per head).
"""
from __future__ import annotations

import functools
import json
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from onepass.data import extract, flops, models, tokenizer  # noqa: E402
from onepass.data.flops import Shape  # noqa: E402
from onepass.film.make import batch, request  # noqa: E402
from onepass.film.plan import jobs as film_jobs, keys  # noqa: E402
from tests.helpers import one_clear_line, run_main  # noqa: E402
from onepass.words import catalog  # noqa: E402
from onepass.words.catalog import Words  # noqa: E402

PROMPT = "The cat sat on the"
FAMILY = list(models.FAMILY)
# the issue's table (transformers' configs), written here by hand: layers, heads, width, parameters
TABLE = {"distilgpt2": (6, 12, 768, "82M"), "gpt2": (12, 12, 768, "124M"), "gpt2-medium": (24, 16, 1024, "355M"),
         "gpt2-large": (36, 20, 1280, "774M"), "gpt2-xl": (48, 25, 1600, "1.56B")}


def shape(name: str) -> Shape:
    return Shape.from_config(models.get(name).config())


@functools.lru_cache(maxsize=None)
def meta_model(name: str):
    """transformers' GPT2LMHeadModel of this size on the meta device (no memory, no arithmetic)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(**models.get(name).config())
    cfg._attn_implementation = "eager"          # the attention extraction runs (its q·kᵀ and weights × v as bmm)
    with torch.device("meta"):
        return GPT2LMHeadModel(cfg).eval()


def counted(model, ids: list[int], cache=None):
    """(torch's FLOPs by op, the model's output) of one call: `ids` after `cache` (None: a full pass)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = model(torch.tensor([ids], device="meta"), cache=cache, use_cache=True,
                    logits_to_keep=1)           # the unembedding of the last row only, as the ledger pays it
    return {str(op).split(".")[-1]: n for op, n in counter.get_flop_counts()["Global"].items()}, out


def kv_cache(out):
    return out["cache"] if "cache" in out else out.past_key_values


# -- the ledger of every size ------------------------------------------------------------------------
@pytest.mark.parametrize("name", FAMILY)
def test_the_architecture_is_the_issues_table(name):
    m = models.get(name)
    assert (m.n_layer, m.n_head, m.n_embd) == TABLE[name][:3]
    assert m.n_embd // m.n_head == 64            # d_head is 64 at every size
    assert models.family_of(m.config()) is m


@pytest.mark.parametrize("name", FAMILY)
def test_the_ledger_is_the_sum_of_its_entries_and_torch_counts_the_same(name):
    """torch's own count of the same forward pass, reconciled with the ledger's conventions:
    * the unembedding: the ledger pays the last row only (2·d·V); the model is asked for the last
      row's logits only (logits_to_keep=1), so torch's `mm` is that one product;
    * the positional addition: the ledger counts it (T·d adds); torch counts no elementwise op
      (nor softmax, LayerNorm, GELU, the 1/sqrt(d_head) scale or the residual adds, which the
      ledger does not count either), so torch's total is the ledger's less T·d;
    * the projections (c_attn, c_proj, c_fc, the MLP's c_proj) are Conv1D: `addmm`, whose bias add
      torch does not count: 2·T·d_in·d_out each, the ledger's qkv, out, mlp_up, mlp_down;
    * eager attention: q·kᵀ and weights × v are `bmm` over n_head heads of d_head = 2·T·T·d each,
      the ledger's scores and mix."""
    ids = tokenizer.encode(PROMPT)
    T, s = len(ids), shape(name)
    ledger = flops.forward_ledger(s, T)
    assert ledger.total == sum(e.flops for e in ledger.entries)
    assert [e.total for e in ledger.entries] == [sum(x.flops for x in ledger.entries[:i + 1])
                                                 for i in range(len(ledger.entries))]
    assert len(ledger.entries) == 3 + 6 * s.n_layer + 1
    layers = range(s.n_layer)
    by_op, _ = counted(meta_model(name), ids)
    assert by_op == {
        "addmm": sum(ledger[f"L{l}.{k}"].flops for l in layers for k in ("qkv", "out", "mlp_up", "mlp_down")),
        "bmm": sum(ledger[f"L{l}.{k}"].flops for l in layers for k in ("scores", "mix")),
        "mm": ledger["unembed"].flops,
    }
    assert sum(by_op.values()) == ledger.total - ledger["positions"].flops == ledger.total - T * s.n_embd


def test_the_torch_count_can_tell_sizes_apart():
    """The reconciliation above is not vacuous: another size's ledger does not match."""
    ids = tokenizer.encode(PROMPT)
    by_op, _ = counted(meta_model("distilgpt2"), ids)
    assert sum(by_op.values()) != flops.forward_ledger(shape("gpt2"), len(ids)).total - len(ids) * 768


@pytest.mark.parametrize("name", FAMILY)
def test_parameter_counts_are_torchs_and_the_issues(name):
    m = models.get(name)
    counts = flops.parameter_counts(shape(name), m.n_positions)
    assert counts["total"] == sum(p.numel() for p in meta_model(name).parameters())   # wte once: tied
    n = counts["total"]
    said = f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"
    assert said == TABLE[name][3]


@pytest.mark.parametrize("name", FAMILY)
def test_kv_cache_and_decode_step_follow_their_formulas_and_torch(name):
    """Per token the KV cache holds one key and one value vector of width d per layer:
    2·n_layer·n_embd numbers (distilgpt2 9,216 ... XL 153,600), 2 bytes each in fp16.
    One decode step at context c (c - 1 tokens cached, the new one projected and attending to c):
        d                                  the new row's positional add
      + n_layer·( 2·d·3d                   q, k, v of one row
                + 2·c·d + 2·c·d            its scores against c keys, its mix of c values
                + 2·d·d                    the output projection
                + 2·d·4d + 2·4d·d )        the MLP
      + 2·d·V                              the unembedding
    checked against torch's count of a real cached step (less the positional add), and against
    the 2·N rule: one token costs about 2 FLOPs per parameter it uses, N less the position table
    (wte is used once, as the unembedding), within 1% at c = 1 (what differs: biases and LayerNorm
    gains are parameters the ledger does not count as FLOPs, and the attention term)."""
    m, s = models.get(name), shape(name)
    d, L, V = s.n_embd, s.n_layer, s.vocab
    per_token = flops.kv_cache_numbers_per_token(s)
    assert per_token == 2 * L * d == {"distilgpt2": 9_216, "gpt2": 18_432, "gpt2-medium": 49_152,
                                      "gpt2-large": 92_160, "gpt2-xl": 153_600}[name]
    assert flops.kv_cache_bytes(s, 1000) == 1000 * per_token * 2

    ids = tokenizer.encode(PROMPT)
    T = len(ids)
    _, prefill = counted(meta_model(name), ids)
    cache = kv_cache(prefill)
    assert sum(layer.keys.numel() + layer.values.numel() for layer in cache.layers) == T * per_token
    step, _ = counted(meta_model(name), [ids[-1]], cache=cache)         # the token after the prompt: c = T + 1
    c = T + 1
    formula = d + L * (2 * d * 3 * d + 2 * c * d + 2 * c * d + 2 * d * d + 2 * d * 4 * d + 2 * 4 * d * d) + 2 * d * V
    assert flops.decode_step_flops(s, c) == formula == sum(step.values()) + d

    n_used = flops.parameter_counts(s, m.n_positions)["total"] - m.n_positions * d
    assert abs(flops.decode_step_flops(s, 1) / (2 * n_used) - 1) < 0.01
    assert flops.decode_step_flops(s, 1001) - flops.decode_step_flops(s, 1) == L * 4 * 1000 * d   # 4·L·d per cached token
    assert flops.generation_flops(s, T, 3) == flops.forward_ledger(s, T).total + sum(
        flops.decode_step_flops(s, c) for c in (T + 1, T + 2))


# -- --model from the command line and a manifest -----------------------------------------------------
KNOWN = ("GPT-2: distilgpt2, gpt2, gpt2-medium, gpt2-large, gpt2-xl; Llama-style decoder: smollm2-135m-instruct, "
         "llama-3.2-1b, qwen3-0.6b (--list-models)")


def test_an_unknown_model_is_one_line_that_lists_the_family(monkeypatch):
    monkeypatch.setattr(extract, "extract", lambda *a, **k: pytest.fail("extracted before validating"))
    rc, _, err = run_main("--inspect", "--model", "gpt3")
    assert rc == 2
    assert one_clear_line(err) == f"error: --model: unknown model 'gpt3'; onepass knows {KNOWN}"


def test_real_weights_of_another_model_are_refused_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(extract, "extract", lambda *a, **k: pytest.fail("extracted before validating"))
    rc, _, err = run_main("--inspect", "--weights", "gpt2", "--model", "gpt2-xl")
    assert rc == 2 and one_clear_line(err) == (
        "error: --weights: gpt2 loads gpt2's weights, but --model says gpt2-xl; pass --weights gpt2-xl "
        "(or auto, or random), or leave out --model")
    folder = tmp_path / "medium"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(dict(models.get("gpt2-medium").config(), model_type="gpt2")))
    assert extract.weights_model(str(folder)) == "gpt2-medium"        # --weights DIR: the model from its config
    rc, _, err = run_main("--inspect", "--weights", str(folder), "--model", "gpt2-large")
    assert rc == 2 and f"are gpt2-medium, but --model says gpt2-large" in one_clear_line(err)
    # every hub id is a --weights value, and agreeing with --model is fine
    for name in FAMILY:
        req, problems = request.validate({"weights": name, "model": name}, tmp_path, needs_chapters=False)
        assert problems == [] and (req.weights, req.model) == (name, name)


def test_a_manifest_takes_model_and_checks_it(tmp_path):
    manifest = tmp_path / "course.toml"
    manifest.write_text('[[job]]\nchapters = ["03"]\nvoice = "none"\nweights = "random"\nmodel = "gpt2-xl"\n'
                        '[[job]]\nchapters = ["03"]\nvoice = "none"\nmodel = "gpt-5"\n')
    with pytest.raises(batch.ManifestError) as err:
        batch.load_manifest(manifest)
    assert err.value.problems == [f"job 2, model: unknown model 'gpt-5'; onepass knows {KNOWN}"]
    assert "`model`" in request.markdown_table() and "--model" in request.markdown_table()


def test_jobs_that_differ_only_by_model_are_two_jobs_and_the_same_model_twice_is_refused(tmp_path):
    job = '[[job]]\nchapters = ["03"]\nvoice = "none"\nweights = "random"\n'
    manifest = tmp_path / "course.toml"
    manifest.write_text(job + 'model = "gpt2-medium"\n' + job + 'model = "gpt2-xl"\n' + job)
    a, b, c = batch.load_manifest(manifest)
    assert (a.model, b.model, c.model) == ("gpt2-medium", "gpt2-xl", None)
    assert len({batch._bundle_key(j) for j in (a, b, c)}) == 3          # a bundle each
    manifest.write_text(job + 'model = "gpt2"\n' + job)                 # gpt2 is the default: the same job
    with pytest.raises(batch.ManifestError, match="job 2: repeats job 1"):
        batch.load_manifest(manifest)


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """mini(model) -> the bundle of --inspect --model MODEL --weights mini (extracted once)."""
    root = tmp_path_factory.mktemp("family-bundles")
    made = {}

    def get(name: str):
        if name not in made:
            made[name] = extract.extract(PROMPT, "mini", root=root, log=lambda m: None, model=name)
        return made[name]
    return get


def test_model_reaches_the_bundle_and_inspect_names_it(mini, monkeypatch):
    b = mini("distilgpt2")
    monkeypatch.setattr(extract, "extract", functools.partial(extract.extract, root=b.path.parent))
    rc, out, err = run_main("--inspect", "--json", "--model", "distilgpt2", "--weights", "mini")
    assert rc == 0, err
    report = json.loads(out)
    assert report["bundle"] == str(b.path)                               # the same bundle: found in the cache
    assert report["model"] == b.model == b.meta["model"] == "distilgpt2"
    assert (report["config"]["n_layer"], report["config"]["n_head"]) == (6, 12)
    assert report["model_id"] == "distilgpt2-architecture (mini weights)"
    rc, out, _ = run_main("--inspect", "--model", "distilgpt2", "--weights", "mini")
    assert rc == 0 and "model: distilgpt2 (distilgpt2-architecture (mini weights)): 6 layers, 12 heads" in out


def test_bundles_folders_and_scene_keys_keep_models_apart(mini, tmp_path):
    a, b = mini("distilgpt2"), mini("gpt2")
    assert a.path != b.path and a.meta["cache_key"] != b.meta["cache_key"]
    assert (a.config["n_layer"], b.config["n_layer"]) == (6, 12)
    assert film_jobs.output_name(a).startswith("the-cat-sat-on-the-distilgpt2-")   # the folder says the model
    assert film_jobs.output_name(b).startswith("the-cat-sat-on-the-") and "gpt2" not in film_jobs.output_name(b)
    assert film_jobs.destination(tmp_path, a, "low") != film_jobs.destination(tmp_path, b, "low")
    assert keys.bundle_identity(a) != keys.bundle_identity(b)
    o = film_jobs.BuildOptions(out=tmp_path)
    pa, pb = film_jobs.plan(["05"], a, o)["05"], film_jobs.plan(["05"], b, o)["05"]
    assert [s.scene for s in pa] == [s.scene for s in pb]
    assert all(x.key != y.key and x.stem != y.stem for x, y in zip(pa, pb))


def test_auto_looks_for_the_models_own_weights(tmp_path, monkeypatch):
    """--weights auto: $ONEPASS_GPT2_WEIGHTS when its config is the model, else the transformers
    cache under the model's hub id, else random weights of that size with a warning naming it."""
    import huggingface_hub.constants as hub
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = tmp_path / "hub" / "models--gpt2-medium" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "model.safetensors").write_bytes(b"")
    (tmp_path / "hub" / "models--gpt2-medium" / "refs").mkdir()
    (tmp_path / "hub" / "models--gpt2-medium" / "refs" / "main").write_text("abc")
    small = tmp_path / "small"
    small.mkdir()
    (small / "config.json").write_text(json.dumps(models.get("gpt2").config()))
    monkeypatch.setenv(extract.WEIGHTS_ENV, str(small))
    said = []
    assert extract.resolve_weights("auto", said.append, "gpt2") == str(small)
    assert extract.resolve_weights("auto", said.append, "gpt2-medium") == "gpt2-medium"
    assert extract.resolve_weights("auto", said.append, "gpt2-xl") == "random" and said == [said[0]]
    assert said[0].startswith("no real gpt2-xl weights on this machine") and "--weights gpt2-xl" in said[0]


def test_a_folder_of_another_shape_is_a_gpt2_shaped_model(saved_weights, bundle_root):
    b = extract.extract(PROMPT, str(saved_weights("tiny")), root=bundle_root, log=lambda m: None)
    assert b.model is None and not b.synthetic
    assert Words.load("en").model_name(b.model) == "a GPT-2-shaped model"


# -- the model's name, in words --------------------------------------------------------------------
NAMES = {"distilgpt2": "DistilGPT2", "gpt2": "GPT-2 small", "gpt2-medium": "GPT-2 medium",
         "gpt2-large": "GPT-2 large", "gpt2-xl": "GPT-2 XL"}


@pytest.mark.parametrize("lang", ["en", "es", "ur"])
def test_every_model_has_its_name_in_every_language_and_the_titles_take_it(lang):
    words = Words.load(lang)
    for name, said in NAMES.items():
        assert catalog.model_message(name) == f"film:model-{name}"      # the ids the scenes look up
        assert words.model_name(name) == said                            # proper names, kept in Latin letters
    assert catalog.model_message(None) == catalog.model_message("gpt3") == "film:model-other"
    other = words.model_name(None)
    assert "GPT-2" in other and (other == "a GPT-2-shaped model") == (lang == "en")
    for mid, values in (("film:film-title", {}), ("film:title-card-sub", {"chapter": "03"})):
        assert NAMES["gpt2-xl"] in words.text(mid, model=words.model_name("gpt2-xl"), **values)
        with pytest.raises(catalog.CatalogError, match="model"):
            words.text(mid, **values)                                   # a title without the model is refused


def test_the_films_title_names_the_bundles_model(mini, monkeypatch, tmp_path):
    from onepass.film.make import build
    seen = {}
    results = [SimpleNamespace(chapter=c, title=t, final=tmp_path / f"{c}.mp4") for c, t in (("00", "A"), ("01", "B"))]
    monkeypatch.setattr(build, "render", lambda chapters, bundle, options: results)
    monkeypatch.setattr(build, "join_film", lambda results, dest, title, markers: seen.setdefault("title", title))
    from onepass.film.kit import describe
    monkeypatch.setattr(describe, "write_tracks", lambda results, bundle, words: [])   # the stand-ins have no scenes
    req = request.Request(chapters=["00", "01"], all=True, out=tmp_path)
    request.produce(req, mini("distilgpt2"), request.build_options(req))
    assert seen["title"] == "One forward pass of DistilGPT2"


def test_the_title_card_names_the_model(tiny_bundle):
    """The title card's line under the chapter's title (scenes/base.py) says which model runs: the
    tiny test model is outside the family, so it is 'a GPT-2-shaped model', never 'GPT-2 small'."""
    from tests.helpers import build_scene
    scene = build_scene(tiny_bundle, "05", "MaskOff", draw=False)
    assert "Chapter 05  ·  one forward pass of a GPT-2-shaped model" in scene.built_texts


def test_a_bundle_of_another_model_is_refused_in_one_line(mini):
    b = mini("distilgpt2")
    rc, _, err = run_main("--inspect", "--bundle", str(b.path), "--model", "gpt2-xl")
    assert rc == 2 and one_clear_line(err) == (f"error: --bundle {b.path} explains distilgpt2, but --model says "
                                               "gpt2-xl; leave out --model")
    rc, out, err = run_main("--inspect", "--json", "--bundle", str(b.path), "--model", "distilgpt2")
    assert rc == 0 and json.loads(out)["model"] == "distilgpt2", err
