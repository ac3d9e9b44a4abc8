"""Run a model once on a prompt, capture every intermediate tensor, write the bundle.

The model's architecture (data/arch/<name>/) does the three steps: capture() runs the model once
with forward hooks on its real modules; derive() redoes the attention arithmetic in numpy (q, k, v
-> scores -> mask -> probs -> head_out); cross_check() holds that against the model. This module
is the same for every architecture: weights, prompt, cache, logit lens, generation, the bundle's
meta. What a bundle holds is declared once, in bundle.SCHEMA.

torch and transformers are imported only inside the functions that run the model, so
returning a cached bundle stays fast and light.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.metadata as md
import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import numpy as np

from onepass.data.errors import OnepassError
from onepass.data import bundle as bundle_io
from onepass.data import arch, home, hub
from onepass.data.arch.base.identity import weights_sha256
from onepass.data import models
from onepass.data import tokenizer
from onepass.data.arch.spec import CaptureError, Shape, WeightsError
from onepass.data.flops import parameter_counts

WEIGHTS_ENV = "ONEPASS_GPT2_WEIGHTS"   # a local GPT-2 directory tests and users may point at
MAX_TOKENS = 64                       # the scenes stay legible up to here
TOP_K = 10                            # candidates kept per row / per generated step
N_GENERATE = 4                        # tokens generated for chapter 06
SAMPLE_SEED = 1234                    # seed of the sampled pick in chapter 04
RANDOM_SEED = 0                       # seed of --weights random (and tiny, peaked)
# --weights peaked: the random model with its final LayerNorm's gain raised so the unembedding's
# logits spread like a trained model's (std ~11 at any width): top-1 of 20-95%, a top-p 0.9 set of
# a few tokens, a logit lens that settles over the last layers. Still random numbers: synthetic.
PEAKED_LOGIT_STD = 11.0
# the token of interest chapter 04 ranks when --watch is not given: the seeds' example
DEFAULT_WATCH = {"The cat sat on the": " mat"}
COSINE_PAIRS = [("king", "queen"), ("king", "banana"), ("Monday", "Tuesday"), ("Monday", "banana")]
# a tiny GPT-2 for tests and quick previews (real vocabulary so the tokenizer still fits)
TINY_CONFIG = arch.gpt2.TINY_CONFIG


class ExtractError(OnepassError, RuntimeError):
    """Extraction cannot go on; the message says what to do."""


# --weights made here from seeded random numbers
SYNTHETIC = ("random", "peaked", "tiny", "tiny-peaked", "mini", "mini-peaked")


def synthetic_config(name: str, model: str = models.DEFAULT) -> dict:
    """The architecture synthetic weights `name` get for `model` (its transformers config, as a dict):
    'random'/'peaked' the model's own, 'mini'/'mini-peaked' its layers and heads at a small width,
    'tiny'/'tiny-peaked' a 2-layer model of its architecture (GPT-2's: TINY_CONFIG, whatever the
    GPT-2 size: the fast test model)."""
    m = models.get(model)
    if name.startswith("tiny"):
        return m.tiny_config()
    return m.mini_config() if name.startswith("mini") else m.config()


def synthetic_model(name: str, config: dict | None = None, model: str = models.DEFAULT):
    """The model's architecture with seeded random numbers in synthetic_config(name, model)'s shape;
    `config` overrides the shape.

    'peaked' is 'random' with one change: the final norm's gain set so the logits' spread is
    PEAKED_LOGIT_STD (random init spreads them ~0.55 at GPT-2's width: every token ~1/V), making
    predictions as peaked as a trained model's. The logit lens reads through the same norm.
    """
    if name not in SYNTHETIC:
        raise ExtractError(f"unknown synthetic weights {name!r}; choose one of {', '.join(SYNTHETIC)}")
    card = models.get(model)
    config = config if config is not None else synthetic_config(name, model)
    peaked = PEAKED_LOGIT_STD if name.endswith("peaked") else None
    if card.arch == "gpt2":
        return arch.gpt2.synthetic_model(config, peaked, RANDOM_SEED)
    return arch.of(card).synthetic_model(config, card.hf_class, peaked, RANDOM_SEED)


@dataclass(frozen=True)
class WeightsSpec:
    """What --weights named: a hub id ('gpt2', 'gpt2-medium' ...), a directory, or synthetic weights
    ('random', 'peaked', 'mini', 'tiny' ...) in `model`'s architecture (see synthetic_config)."""
    name: str
    model: str = models.DEFAULT

    @property
    def synthetic(self) -> bool:
        return self.name in SYNTHETIC

    def identity(self) -> str:
        """A string that changes whenever the weights could change (part of the cache key)."""
        gpt2 = models.get(self.model).arch == "gpt2"
        if self.synthetic and (not gpt2 or (not self.name.startswith("tiny")
                                            and (self.name.startswith("mini") or self.model != models.DEFAULT))):
            shape = json.dumps(synthetic_config(self.name, self.model), sort_keys=True)
            peaked = f":logit_std={PEAKED_LOGIT_STD}" if self.name.endswith("peaked") else ""
            return f"{self.name}:{self.model}:{shape}:seed={RANDOM_SEED}{peaked}"
        # GPT-2 small's and the tiny model's identities as they always were (their cached bundles stay valid)
        if self.name == "random":
            return f"random:seed={RANDOM_SEED}"
        if self.name == "tiny":
            return f"tiny:seed={RANDOM_SEED}:{json.dumps(TINY_CONFIG, sort_keys=True)}"
        if self.name.endswith("peaked"):
            shape = json.dumps(TINY_CONFIG, sort_keys=True) if self.name.startswith("tiny") else "gpt2-small"
            return f"{self.name}:{shape}:seed={RANDOM_SEED}:logit_std={PEAKED_LOGIT_STD}"
        path = Path(self.name).expanduser()
        if path.is_file():                     # a GGUF file: its bytes are its identity
            return f"gguf:{path.name}:{arch.llama.weights.sha256(path)}"
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix in (".safetensors", ".bin", ".json"))
            stamp = ";".join(f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}" for p in files)
            return f"dir:{path.resolve()}:{stamp}"
        return f"hub:{self.name}"


def dir_config(path: str | Path) -> dict | None:
    """The config.json of a weights directory (its architecture), or None when it has none readable."""
    try:
        return json.loads((Path(path).expanduser() / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_gguf(weights: str) -> bool:
    return str(weights).endswith(".gguf")


def weights_card(weights: str):
    """The model real weights are: a model's name or hub id, a .gguf file whose metadata has a known
    model's shape, or a folder whose config.json has one; None for synthetic weights, 'auto', or any
    other shape."""
    if weights in SYNTHETIC or weights == "auto":
        return None
    if weights in models.MODELS:
        return models.MODELS[weights]
    by_hub = {m.hub: m for m in models.MODELS.values()}
    if weights in by_hub:
        return by_hub[weights]
    path = Path(weights).expanduser()
    if is_gguf(weights) and path.is_file():
        config = arch.llama.weights.gguf_config(path)
        return models.family_of(config) if config else None
    config = dir_config(weights) if path.is_dir() else None
    return models.family_of(config) if config else None


def weights_model(weights: str) -> str | None:
    """The --model name of the model real weights are (weights_card), or None."""
    card = weights_card(weights)
    return card.name if card else None


def model_conflict(weights: str, model: str | None, weights_flag: str = "--weights",
                   model_flag: str = "--model") -> str | None:
    """Why `weights` and `model` cannot both hold (one line, naming the options as the caller's user
    wrote them), or None: real weights are one model, and a model that names another is refused
    rather than silently ignored."""
    if model is None or weights in SYNTHETIC or weights == "auto":
        return None
    if weights in models.MODELS or weights in {m.hub for m in models.MODELS.values()}:
        card = weights_card(weights)
        if card.name != model:
            return (f"{weights} loads {card.name}'s weights, but {model_flag} says {model}; pass "
                    f"{weights_flag} {model} (or auto, or random), or leave out {model_flag}")
        return None
    path = Path(weights).expanduser()
    if path.is_dir() or (is_gguf(weights) and path.is_file()):
        config = dir_config(weights) if path.is_dir() else arch.llama.weights.gguf_config(path)
        if config is None:
            return None          # extraction says what is wrong with the folder or file
        found = models.family_of(config)
        card = models.get(model)
        if found is None and card.arch != "gpt2" and same_kind(config, card):
            return None          # the model's own kind at another size: the film says it is outside the list
        if found is None or found.name != model:
            layers = config.get("n_layer", config.get("num_hidden_layers"))
            width = config.get("n_embd", config.get("hidden_size"))
            kind = config.get("model_type", "gpt2")
            what = found.name if found else f"a {kind} model onepass does not list ({layers} layers, {width} wide)"
            return f"the weights in {weights} are {what}, but {model_flag} says {model}; leave out {model_flag}"
    return None


def same_kind(config: dict, card) -> bool:
    """A Llama/Qwen3 config.json of `card`'s own class and vocabulary (its tokenizer fits), at any size."""
    kinds = {"LlamaForCausalLM": "llama", "Qwen3ForCausalLM": "qwen3"}
    return config.get("model_type") == kinds.get(card.hf_class) and config.get("vocab_size") == card.vocab_size


def effective_model(weights: str, model: str | None) -> str:
    """The model a render explains: `model` when given, else the weights' own (weights_model),
    else GPT-2 small."""
    return model or weights_model(weights) or models.DEFAULT


def find_real_weights(model: str = models.DEFAULT) -> str | None:
    """Real weights of `model` already on this machine: the file a package ships (SmolLM2), else
    $ONEPASS_GPT2_WEIGHTS (when its config.json is that model, or unreadable and the model is GPT-2
    small), else the hub's cache. No request."""
    card = models.get(model)
    packaged = arch.llama.weights.packaged_file(card) if card.arch != "gpt2" else None
    if packaged is not None:
        return str(packaged)
    env = os.environ.get(WEIGHTS_ENV)
    if env and Path(env).expanduser().is_dir() and card.arch == "gpt2":
        config = dir_config(env)
        if (models.member_name(config) == model if config is not None
                else model == models.DEFAULT):
            return env
    if hub.cached(card.hub) is not None:         # model.safetensors only: never a pickle (.bin)
        return card.hub
    return None


def resolve_weights(name: str, log=print, model: str = models.DEFAULT) -> str:
    """'auto' (or a non-GPT-2 model's name) -> `model`'s real weights: on this machine
    (find_real_weights), else downloaded once from the hub (data/hub.py), else, for 'auto', 'random'
    (that model's architecture) with a warning saying why. extract() logs which real weights it uses
    (weights_source)."""
    card = models.get(model)
    named = name in models.MODELS and card.arch != "gpt2"
    if name != "auto" and not named:
        return name
    found = find_real_weights(model)
    if found:
        return found
    if card.weights_from.startswith("package:"):
        why = (f"its package is not installed ({arch.llama.weights.INSTALL_HINT})")
    elif card.gated and not (os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")):
        why = (f"{card.hub} is gated: accept its licence on https://huggingface.co/{card.hub} and set HF_TOKEN "
               "to a token of that account")
    else:
        why = hub.fetch(card.hub, log)
        if why is None and hub.cached(card.hub) is not None:
            return card.hub
    if named:
        raise ExtractError(f"no real {model} weights on this machine: {why or 'the download left no model.safetensors'}")
    log(f"no real {model} weights on this machine and {why or 'the download left no model.safetensors'}: "
        f"rendering with RANDOM weights ({model}'s exact shapes, probabilities are noise; every frame says so). "
        f"For real predictions run again with internet (or HF_ENDPOINT set to a mirror), pass "
        f"--weights {model} where the hub answers, or --weights DIR / {WEIGHTS_ENV}=DIR with a copied "
        f"{'GPT-2 folder' if card.arch == 'gpt2' else 'folder (config.json + model.safetensors) or a .gguf file'}.")
    return "random"


def weights_source(weights: str, resolved: str) -> str | None:
    """One line for the log: which real weights a run uses and why (None for synthetic weights)."""
    if resolved in SYNTHETIC:
        return None
    why = ("downloaded now" if resolved in hub.downloaded else "found on this machine") if weights == "auto" \
        else "as --weights says"
    if Path(resolved).expanduser().exists():
        return f"weights: {resolved} ({why})"
    path = hub.cached(resolved)
    if path is None:
        return f"weights: {resolved} from the hub {hub.endpoint()} ({why})"
    return f"weights: {resolved} from the Hugging Face cache, revision {path.parent.name} ({why})"


def model_tokenizer(model: str = models.DEFAULT, source: str | None = None):
    """`model`'s own tokenizer (GPT-2's BPE for the GPT-2 family; a GGUF file's own for SmolLM2, from
    `source` when that is another .gguf file)."""
    card = models.get(model)
    if card.arch == "gpt2":
        return tokenizer
    try:
        return arch.of(card).tokenizer(card, source if source and is_gguf(source) else None,
                                       cache=home.tokenizers_dir())
    except WeightsError as exc:
        raise ExtractError(str(exc)) from None


def validate_prompt(prompt: str, tok=tokenizer, limit: int | None = None) -> list[int]:
    """Token ids of the prompt under `tok` (GPT-2's unless told), or a clear error for prompts the film
    cannot show; `limit`: the model's context, when shorter than the film's MAX_TOKENS."""
    if not prompt or not prompt.strip():
        raise ExtractError("the prompt is empty: pass some text, e.g. --prompt \"The cat sat on the\"")
    # bytes that were not UTF-8 reach Python's argv as U+DC80..U+DCFF (surrogateescape)
    undecodable = [i for i, c in enumerate(prompt) if 0xDC80 <= ord(c) <= 0xDCFF]
    if undecodable:
        i = undecodable[0]
        raise ExtractError(f"the prompt is not valid UTF-8: byte 0x{ord(prompt[i]) - 0xDC00:02X} (character {i + 1}) "
                           "is not UTF-8; set your terminal or file to UTF-8 and type the prompt again")
    surrogates = [c for c in prompt if 0xD800 <= ord(c) <= 0xDFFF]
    if surrogates:
        raise ExtractError(f"the prompt contains a lone surrogate (U+{ord(surrogates[0]):04X}), which is not text; "
                           "pass the prompt as UTF-8 text")
    # C0 controls (but tab and newline), DEL and the C1 controls: nothing a screen or a caption can show
    bad = bundle_io.control_characters(prompt)
    if bad:
        listed = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise ExtractError(f"the prompt contains control characters ({listed}); remove them and try again")
    ids = tok.encode(prompt)
    if len(ids) > MAX_TOKENS:
        raise ExtractError(f"the prompt is {len(ids)} tokens long; onepass shows at most {MAX_TOKENS} "
                           "(shorten it: every token becomes a row and a column on screen)")
    if limit is not None and len(ids) + N_GENERATE > limit:
        raise ExtractError(f"the prompt is {len(ids)} tokens; this model reads at most {limit} "
                           f"(and chapter 06 adds {N_GENERATE}): shorten it")
    return ids


def watch_token(prompt: str, text: str | None = None, tok=tokenizer, model_title: str = "GPT-2") -> dict | None:
    """Chapter 04's token of interest: `text` (--watch; 'none' = off), else
    DEFAULT_WATCH[prompt] where it is one token of this model's vocabulary, else None.

    It must be exactly one token of the model's vocabulary; mind the leading space (" mat", not "mat").
    Recorded in the bundle's meta["watch"] (and its cache key), so a video can cite it.
    """
    default = text is None
    if default:
        text = DEFAULT_WATCH.get(prompt)
    if not text or text.strip().lower() == "none":
        return None
    ids = tok.encode_plain(text)
    if len(ids) != 1:
        if default:
            return None
        raise ExtractError(f"the token to watch, {text!r}, is {len(ids)} {model_title} tokens {ids}; name a single "
                           "token (usually a word with its leading space, e.g. \" mat\"), or 'none'")
    return {"text": text, "id": ids[0]}


def load_model(spec: WeightsSpec):
    """The model (its architecture's transformers class) with eager attention (needed for attention
    outputs): synthetic, from a .gguf file, a folder or the hub."""
    if spec.synthetic:
        return synthetic_model(spec.name, model=spec.model)
    card = models.get(spec.model)
    architecture = arch.of(card)
    source = os.path.expanduser(spec.name)
    if is_gguf(spec.name) or os.path.isfile(source):
        try:
            return architecture.load(source, True, card, cache=home.dequantized_dir())
        except WeightsError as exc:
            raise ExtractError(str(exc)) from None
        except Exception as exc:           # the GGUF loader's own errors on a file it cannot map
            raise ExtractError(f"the weights in {source} cannot be loaded as {card.name} "
                               f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}); "
                               "pass a .gguf file of that model, or use --weights random") from None
    load = (lambda local_only: architecture.load(source, local_only)) if card.arch == "gpt2" \
        else (lambda local_only: architecture.load(source, local_only, card))
    hub_id = card.hub
    how_to = (f"Real {card.name} weights were not found for {spec.name!r}. Either download them once on a "
              f"machine with internet (python -c \"from transformers import AutoModelForCausalLM; "
              f"AutoModelForCausalLM.from_pretrained('{hub_id}')\"), or pass a local directory with "
              f"--weights PATH" + (f" (or set {WEIGHTS_ENV})" if card.arch == "gpt2" else "")
              + f", or render with --weights random ({card.name}'s exact shapes with random numbers; "
              "probabilities are then noise).")
    if os.path.isdir(source):
        found = sorted(p.name for p in Path(source).iterdir())
        if not any(n.endswith(".safetensors") for n in found):
            pickles = [n for n in found if n.endswith((".bin", ".pt", ".pth", ".ckpt", ".pkl"))]
            if pickles:
                raise ExtractError(f"the weights in {source} are {pickles[0]}, a pickle (loading one can run any code "
                                   "it holds): onepass reads weights only from model.safetensors; save them as "
                                   "safetensors with a tool you trust, or use --weights random")
    from safetensors import SafetensorError
    for local_only in (True, False):
        if not local_only and (os.environ.get("HF_HUB_OFFLINE") == "1" or os.path.isdir(source)):
            break
        try:
            # use_safetensors: never a pickle (pytorch_model.bin), whatever the folder or cache holds
            return load(local_only)
        except SafetensorError as exc:      # a truncated or damaged file
            raise ExtractError(f"the weights in {source} cannot be read ({str(exc).splitlines()[0][:200]}): the "
                               "file is truncated or damaged; copy it again, or use --weights random") from None
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            if os.path.isdir(source) and any(Path(source).glob("*.safetensors")):
                raise ExtractError(f"the weights in {source} cannot be read ({str(exc).splitlines()[0][:200]}): "
                                   "copy them again, or use --weights random") from None
            last = exc
    raise ExtractError(f"{how_to}\n(detail: {str(last).splitlines()[0]})")


def weights_meta(spec: WeightsSpec, model, steps=None) -> dict:
    """meta["weights"]: the spec, its identity, the sha256 of every parameter, the seed of synthetic
    weights and, for weights from the hub's cache, the hub id, revision and model.safetensors' sha256."""
    if steps is not None:
        steps.step("hashing the weights")
    meta = {"spec": spec.name, "identity": spec.identity(), "synthetic": spec.synthetic,
            "sha256": weights_sha256(model), "seed": RANDOM_SEED if spec.synthetic else None}
    path = Path(spec.name).expanduser()
    if not spec.synthetic and path.is_file():
        # a GGUF file: its own sha256, and each kind of tensor's storage (quantized, dequantized to float32 here)
        meta.update(file=path.name, file_sha256=arch.llama.weights.sha256(path),
                    quantization=arch.llama.weights.quantization(str(path)), dequantized_to="float32")
        card = models.get(spec.model)
        if card.weights_from.startswith("package:"):
            meta["package"] = card.weights_from.split(":")[1]
    elif not spec.synthetic and not path.is_dir():
        meta["hub"] = hub.citation(spec.name)
    return meta


def run_forward(model, ids: list[int], shape: Shape) -> tuple[dict[str, np.ndarray], dict]:
    """One forward pass through the architecture's capture (hooks), derive (numpy) and cross-check;
    returns (tensors, checks)."""
    architecture = arch.of(shape)
    captured = architecture.capture(model, ids)
    tensors = architecture.derive(captured, ids, shape)
    try:
        return tensors, architecture.cross_check(tensors, captured)
    except CaptureError as exc:
        raise ExtractError(str(exc)) from None


def logit_lens(model, resid_post: np.ndarray, top_k: int = TOP_K, shape: Shape | None = None):
    """Top next-token guesses for the last position read off after every layer.

    Each layer's residual (last row) goes through the final norm and the unembedding, exactly
    like the real output. Returns ids and probs, [L, top_k].
    """
    import torch  # heavy: only when a bundle is extracted
    architecture = arch.of(shape) if shape is not None else arch.gpt2
    with torch.no_grad():
        h = torch.from_numpy(resid_post[:, -1, :])                     # [L, d]
        logits = architecture.lens_logits(model, h).double()            # [L, V]
        probs = torch.softmax(logits, dim=-1)
        top = torch.topk(probs, top_k, dim=-1)
    return top.indices.numpy().astype(np.int64), top.values.float().numpy()


def generate(model, ids: list[int], steps: int, top_k: int = TOP_K, on_token=lambda i: None, tok=tokenizer,
             n_positions: int | None = None):
    """Greedy continuation, one full forward pass per step (as chapter 06 tells it); on_token(i)
    after each."""
    n_positions = n_positions or model.config.n_positions
    import torch  # heavy: only when a bundle is extracted
    context = list(ids)
    topk_ids, topk_probs, records = [], [], []
    with torch.no_grad():
        for _ in range(steps):
            logits = model(torch.tensor([context]), use_cache=False).logits[0, -1].double()
            probs = torch.softmax(logits, -1)
            top = torch.topk(probs, top_k)
            topk_ids.append(top.indices.numpy())
            topk_probs.append(top.values.float().numpy())
            pick = int(top.indices[0])
            records.append({"context_tokens": len(context), "id": pick,
                            "text": tok.decode([pick]), "prob": float(top.values[0])})
            context.append(pick)
            on_token(len(records) - 1)
            if len(context) >= n_positions:
                break
    return records, np.array(topk_ids, dtype=np.int64), np.array(topk_probs, dtype=np.float32)


def cosine_pairs(model, tok=tokenizer) -> list[dict]:
    """Cosine similarity of token-embedding rows for word pairs (first token of ' word')."""
    wte = model.get_input_embeddings().weight.detach().double().numpy()
    rows = []
    for a, b in COSINE_PAIRS:
        ia, ib = tok.encode_plain(" " + a)[0], tok.encode_plain(" " + b)[0]
        va, vb = wte[ia], wte[ib]
        cos = float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))
        rows.append({"a": a, "b": b, "id_a": ia, "id_b": ib, "cosine": cos})
    return rows


def library_versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in ("torch", "transformers", "tokenizers", "safetensors", "numpy", "manim", "gguf"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


# The modules whose output a bundle holds (tensors, token texts, counts, the format): a change to
# one of them as a syntax tree (comments and formatting do not count) makes new cache keys, so a
# bundle older code made is extracted again rather than shown with what that code got wrong.
PRODUCERS = ("extract", "tokenizer", "flops", "bundle", "models")


def producer_files() -> list[Path]:
    """PRODUCERS' files and every architecture's (data/arch/**.py)."""
    here = Path(__file__).resolve().parent
    return [here / f"{name}.py" for name in PRODUCERS] + sorted((here / "arch").rglob("*.py"))


@lru_cache(maxsize=1)
def producer_fingerprint() -> str:
    trees = [ast.dump(ast.parse(path.read_text(encoding="utf-8"))) for path in producer_files()]
    return hashlib.sha256("\n".join(trees).encode("utf-8")).hexdigest()[:16]


def extract(prompt: str, weights: str = "gpt2", root: Path | None = None,
            force: bool = False, log=print, watch: str | None = None,
            model: str | None = None) -> bundle_io.Bundle:
    """Bundle for (prompt, weights, model, watch token): reused from the cache when present, else extracted.

    model: the family member (onepass.data.models) explained: the architecture synthetic weights take and
    the one `auto` looks for; None: the weights' own (a hub id, a directory's config.json), GPT-2
    small for synthetic weights. Real weights of another model than a given `model` are refused.

    watch: chapter 04's token of interest (see watch_token; None: the prompt's default).

    The cache is looked up first and a hit imports neither torch nor transformers.
    """
    if model is not None:
        models.get(model)      # an unknown model is refused before anything loads
    conflict = model_conflict(weights, model)
    if conflict:
        raise ExtractError(conflict)
    model = effective_model(weights, model)
    card = models.get(model)
    tok = model_tokenizer(model, weights)
    ids = validate_prompt(prompt, tok, None if card.arch == "gpt2" else card.shape().n_positions)
    spec = WeightsSpec(resolve_weights(weights, log, model), model)
    source = weights_source(weights, spec.name)
    if source:
        log(source)
    watch = watch_token(prompt, watch, tok, arch.of(card).TITLE)
    options = {"top_k": TOP_K, "n_generate": N_GENERATE, "sample_seed": SAMPLE_SEED,
               "watch": watch and watch["text"], "code": producer_fingerprint()}
    key = bundle_io.cache_key(prompt, spec.identity(), options)
    directory = bundle_io.bundle_dir(prompt, key, root)
    if directory.exists() and not force:
        try:
            b = bundle_io.load(directory, advice="")   # the cache mends itself: no advice to give
            log(f"reusing bundle {directory} (same prompt, weights and extraction code)")
            return b
        except bundle_io.BundleError as exc:
            log(f"bundle {directory} is unusable ({exc}); extracting it again")

    return _extract_fresh(prompt, ids, spec, watch, key, directory, log, tok)


class _Steps:
    """Extraction's progress in a terminal, as the render shows its own: a rich Progress on stderr naming
    the step under way (quiet when stderr is not a terminal). `step(what)` finishes the step before and
    names the next; `say(line)` logs through the caller's `log` with the bar lifted, so lines never
    run into it; `paused()` lifts it while transformers shows its own bar (loading the weights)."""

    def __init__(self, total: int, title: str, log):
        from rich.console import Console
        from rich.progress import Progress
        console = Console(stderr=True)
        self.shown = console.is_terminal and not console.is_dumb_terminal
        self.progress = Progress(console=console, transient=True, disable=not self.shown)
        self.title, self.total, self.log, self.task = title, total, log, None

    def __enter__(self):
        self.progress.__enter__()
        self.task = self.progress.add_task(self.title, total=self.total)
        return self

    def step(self, what: str, done: int = 1):
        self.progress.update(self.task, advance=done, description=f"{self.title}: {what}")

    def say(self, line: str):
        with self.paused():
            self.log(line)

    @contextlib.contextmanager
    def paused(self):
        if self.shown:
            self.progress.stop()
        try:
            yield
        finally:
            if self.shown:
                self.progress.start()

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)


def _extract_fresh(prompt: str, ids: list[int], spec: WeightsSpec, watch: dict | None,
                   key: str, directory: Path, log, tok=tokenizer) -> bundle_io.Bundle:
    """Load the model, run it once, check everything, write the bundle (extract() found no cache)."""
    # steps: load, forward pass, logit lens, N_GENERATE tokens, hash, write (the last one ends with the block)
    title = f"extracting {spec.model}" + (f" ({spec.name} weights)" if spec.synthetic else "")
    with _Steps(5 + N_GENERATE, title, log) as steps:
        steps.step("loading the weights", 0)
        return _extract_steps(prompt, ids, spec, watch, key, directory, steps.say, steps, tok)


def model_shape(model, card) -> tuple[Shape, dict]:
    """The loaded model's uniform shape and the bundle's config (GPT-2's: GPT2Config's own keys)."""
    architecture = arch.of(card)
    if card.arch == "gpt2":
        config = architecture.shape_config(model)
        return Shape.from_config(config), config
    shape = architecture.shape_of(model.config.to_dict(), qk_norm=card.hf_class == "Qwen3ForCausalLM")
    return shape, architecture.shape_config(model, shape)


def _extract_steps(prompt: str, ids: list[int], spec: WeightsSpec, watch: dict | None,
                   key: str, directory: Path, log, steps: _Steps, tok=tokenizer) -> bundle_io.Bundle:
    import torch  # heavy (~1 s): a cached bundle never gets here
    torch.set_grad_enabled(False)
    card = models.get(spec.model)
    architecture = arch.of(card)
    # real weights: transformers' own bar while it reads them; synthetic ones: ours while they are drawn
    with steps.paused() if not spec.synthetic else contextlib.nullcontext():
        model = load_model(spec)
    shape, config = model_shape(model, card)
    if len(ids) + N_GENERATE > shape.n_positions:
        raise ExtractError(f"the prompt is {len(ids)} tokens; this model reads at most {shape.n_positions}")
    title = "GPT-2" if card.arch == "gpt2" else card.name
    log(f"running {spec.name + '-weight ' if spec.synthetic else ''}{title} ({shape.n_layer} layers, "
        f"{shape.n_embd} wide) on {len(ids)} tokens")
    steps.step(f"one forward pass ({shape.n_layer} layers)")
    tensors, checks = run_forward(model, ids, shape)
    steps.step("the logit lens")
    tensors["lens_ids"], tensors["lens_probs"] = logit_lens(model, tensors["resid_post"], shape=shape)
    steps.step(f"generating {N_GENERATE} tokens")
    generated, tensors["gen_topk_ids"], tensors["gen_topk_probs"] = generate(
        model, ids, N_GENERATE, on_token=lambda i: steps.step(f"generating ({i + 1} of {N_GENERATE} tokens done)"),
        tok=tok, n_positions=shape.n_positions)

    # one sampled pick from the last row at temperature 1, reproducible from the stored seed
    last = torch.softmax(torch.from_numpy(tensors["logits"][-1]).double(), -1)
    sampled = int(torch.multinomial(last, 1, generator=torch.Generator().manual_seed(SAMPLE_SEED)))

    actual_params = sum(p.numel() for p in model.parameters())
    tiny = spec.name.startswith("tiny")
    if card.arch == "gpt2":
        # the hub id that was loaded; a directory's family member (else "gpt2", the architecture)
        model_id = (f"{'gpt2' if tiny else spec.model}-architecture ({spec.name} weights)" if spec.synthetic
                    else spec.name if spec.name in models.FAMILY else (models.member_name(config) or "gpt2"))
        member = (None if tiny else spec.model) if spec.synthetic else models.member_name(config)
    else:
        model_id = (f"{spec.model}-architecture ({spec.name} weights)" if spec.synthetic
                    else card.hub + (" (GGUF, dequantized to float32)" if is_gguf(spec.name) else ""))
        # a folder of the model's kind at another size is explained as such, not as the listed model
        member = None if tiny or (not spec.synthetic and shape != card.shape()) else spec.model
    meta = {
        "prompt": prompt,
        "token_ids": ids,
        "token_texts": tok.token_texts(ids),
        "model_id": model_id,
        # the model explained (onepass.data.models): the one synthetic weights imitate (a 'mini' keeps
        # its layers and heads), else the one with this architecture; None for any other shape (tiny)
        "model": member,
        # the architecture (data/arch) and, for citation, the model's own name and kind
        "arch": card.arch,
        "model_card": {"name": card.name, "hub": card.hub, "instruct": bool(getattr(card, "instruct", False)),
                       "source": getattr(card, "source", f"{card.hub} config.json")},
        "weights": weights_meta(spec, model, steps),
        "config": config,
        "parameters": dict(parameter_counts(shape, shape.n_positions), counted_by_torch=actual_params),
        "libraries": library_versions(),
        "created_by": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cache_key": key,
        "top_k": TOP_K,
        "top_ids": [int(i) for i in np.argsort(-tensors["logits"][-1])[:TOP_K]],
        "generated": generated,
        "sample": {"seed": SAMPLE_SEED, "temperature": 1.0, "id": sampled, "text": tok.decode([sampled])},
        "cosine": cosine_pairs(model, tok),
        "watch": watch,
        "checks": checks,
    }
    if meta["parameters"]["total"] != actual_params:
        raise ExtractError(f"parameter count mismatch: ledger {meta['parameters']['total']:,} "
                           f"vs model {actual_params:,}")
    problems = bundle_io.schema_problems(tensors, meta)
    if problems:
        raise ExtractError(f"the extracted tensors do not match data/bundle.py's SCHEMA: {'; '.join(problems)} "
                           "(a tensor added in one place and not the other?)")
    steps.step("writing the bundle")
    bundle_io.save(directory, tensors, meta)
    log(f"wrote bundle {directory}")
    return bundle_io.load(directory)
