"""The bundle: everything one forward pass produced, on disk, safe to cite.

Layout of a bundle directory:
    tensors.safetensors   every captured tensor (float32 / int64), no pickle
    meta.json             schema version, prompt, ids, model id, sha256 of the
                          weights and of tensors.safetensors, library versions,
                          the command that made it, config, small facts

A bundle is written to a temporary sibling directory and renamed into place,
so a crash never leaves a half-written bundle where a good one was.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

SCHEMA_VERSION = 1
DEFAULT_ROOT = Path(__file__).resolve().parent / "bundles"
TENSORS = "tensors.safetensors"
META = "meta.json"


class BundleError(RuntimeError):
    """A bundle that cannot be used; the message says what to do."""


def cache_key(prompt: str, weights_identity: str, options: dict | None = None) -> str:
    """Same prompt + same weights + same schema (+ extraction options) -> same bundle."""
    payload = json.dumps({"prompt": prompt, "weights": weights_identity,
                          "schema": SCHEMA_VERSION, "options": options or {}}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def slug(text: str, limit: int = 40) -> str:
    """'The cat sat on the' -> 'the-cat-sat-on-the' (ASCII, safe as a folder name)."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-")
    return s or "prompt"


def bundle_dir(prompt: str, key: str, root: Path = DEFAULT_ROOT) -> Path:
    return Path(root) / f"{slug(prompt)}-{key[:12]}"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def expected_shapes(cfg: dict, T: int, meta: dict) -> dict[str, tuple[int, ...]]:
    """Shape of every tensor a bundle must hold, from config and token count."""
    L, H, d, V = cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["vocab_size"]
    dh, dff, P = d // H, cfg.get("n_inner") or 4 * d, cfg["n_positions"]
    k, n_gen = meta["top_k"], len(meta["generated"])
    per_layer_d = ("resid_pre", "ln1", "attn_out", "resid_mid", "ln2", "mlp_out", "resid_post")
    shapes = {name: (L, T, d) for name in per_layer_d}
    shapes.update({name: (L, H, T, dh) for name in ("q", "k", "v", "head_out")})
    shapes.update({name: (L, H, T, T) for name in ("scores_raw", "scores_scaled", "scores_masked", "probs")})
    shapes.update({
        "token_ids": (T,), "wte_rows": (T, d), "wpe_rows": (T, d), "wpe_table": (P, d),
        "mlp_pre": (L, T, dff), "mlp_hidden": (L, T, dff), "ln_f": (T, d), "logits": (T, V),
        "lens_ids": (L, k), "lens_probs": (L, k),
        "gen_topk_ids": (n_gen, k), "gen_topk_probs": (n_gen, k),
    })
    return shapes


def save(directory: Path, tensors: dict[str, np.ndarray], meta: dict) -> Path:
    """Write atomically: build in a temp dir beside the target, then rename over it."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(tmp / TENSORS))
        meta = dict(meta, schema_version=SCHEMA_VERSION, tensors_sha256=sha256_file(tmp / TENSORS))
        (tmp / META).write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
        if directory.exists():  # a stale or corrupt bundle: move it aside, then drop it
            old = directory.with_name(directory.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(directory, old)
            os.replace(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


@dataclass
class Bundle:
    """A loaded, validated bundle. Tensors are numpy arrays; meta is plain JSON."""
    path: Path
    meta: dict
    tensors: dict[str, np.ndarray] = field(repr=False)

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.tensors[name]
        except KeyError:
            raise BundleError(f"bundle {self.path} has no tensor {name!r}") from None

    @property
    def config(self) -> dict:
        return self.meta["config"]

    @property
    def T(self) -> int:
        return len(self.meta["token_ids"])

    @property
    def prompt(self) -> str:
        return self.meta["prompt"]

    @property
    def tokens(self) -> list[str]:
        return self.meta["token_texts"]

    @property
    def ids(self) -> list[int]:
        return self.meta["token_ids"]

    @property
    def synthetic(self) -> bool:
        """True when the weights are random: probabilities are noise."""
        return bool(self.meta["weights"]["synthetic"])

    @cached_property
    def last_probs(self) -> np.ndarray:
        """Softmax of the last row's logits, float64 for exact sums. Shape [V]."""
        z = self["logits"][-1].astype(np.float64)
        p = np.exp(z - z.max())
        return p / p.sum()

    def featured_head(self, layer: int = 0) -> int:
        """The head whose last-row attention is least uniform (lowest entropy)."""
        p = self["probs"][layer, :, -1, :].astype(np.float64)  # [H, T]
        entropy = -(p * np.log(np.clip(p, 1e-30, None))).sum(-1)
        return int(np.argmin(entropy))

    def ledger(self):
        from data.flops import Shape, forward_ledger
        return forward_ledger(Shape.from_config(self.config), self.T)


def load(directory: Path) -> Bundle:
    """Load and validate; any problem raises BundleError saying how to fix it."""
    directory = Path(directory)
    fix = f"delete {directory} and run again to re-extract it"
    meta_path, tensor_path = directory / META, directory / TENSORS
    if not meta_path.is_file() or not tensor_path.is_file():
        raise BundleError(f"{directory} is not a complete bundle (needs {META} and {TENSORS}); {fix}")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{meta_path} is corrupt ({exc}); {fix}") from None
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        raise BundleError(f"{directory} has schema version {version}, this onepass reads {SCHEMA_VERSION}; {fix}")
    if sha256_file(tensor_path) != meta.get("tensors_sha256"):
        raise BundleError(f"{tensor_path} does not match the checksum in {META} (corrupt or edited); {fix}")
    try:
        tensors = load_file(str(tensor_path))
    except Exception as exc:  # safetensors raises its own error types
        raise BundleError(f"{tensor_path} cannot be read ({exc}); {fix}") from None
    T = len(meta["token_ids"])
    for name, shape in expected_shapes(meta["config"], T, meta).items():
        if name not in tensors:
            raise BundleError(f"{directory} lacks tensor {name!r}; {fix}")
        if tuple(tensors[name].shape) != shape:
            raise BundleError(f"{directory}: tensor {name!r} has shape {tuple(tensors[name].shape)}, "
                              f"expected {shape}; {fix}")
    if list(tensors["token_ids"]) != meta["token_ids"]:
        raise BundleError(f"{directory}: token ids in {META} and {TENSORS} disagree; {fix}")
    return Bundle(directory, meta, tensors)
