"""Every model onepass can explain, by --model name, across the architectures of data/arch.

FAMILY is GPT-2's family (chapter 06 draws it beside GPT-3); MODELS is every architecture's models,
GPT-2's first. The shapes themselves live in each architecture's folder (data/arch/<name>/models.py).
"""
from __future__ import annotations

from onepass.data import arch as _arch
from onepass.data.arch import all_models, family_of as _family_of, model as _model
from onepass.data.errors import OnepassError
from onepass.data.arch.gpt2.models import DEFAULT, FAMILY, MINI_HEAD_WIDTH, N_POSITIONS, VOCAB, Model

MODELS = all_models()

__all__ = ["DEFAULT", "FAMILY", "MINI_HEAD_WIDTH", "MODELS", "Model", "N_POSITIONS", "VOCAB", "UnknownModel",
           "get", "family_of", "member_name"]


class UnknownModel(OnepassError, ValueError):
    """A --model onepass does not know; the message lists those it does."""


def get(name: str):
    """The model card `name` (any architecture); UnknownModel lists every model onepass knows."""
    try:
        return _model(name)
    except _arch.UnknownModel as exc:
        raise UnknownModel(str(exc)) from None


def family_of(config: dict):
    """The model (any architecture) with this config's architecture (a weights directory's config.json), or None."""
    return _family_of(config)


def member_name(config: dict | None) -> str | None:
    """The --model name of the model with this architecture (family_of), or None."""
    found = family_of(config or {})
    return found.name if found else None


def markdown_table(tokens: int = 5) -> str:
    """README's table of every model: its architecture, shape, parameters (counted from the shape, equal
    to the model built: tests/test_arch.py), one pass's FLOPs over `tokens` tokens and its KV cache
    per token. `python -m onepass.data.models` prints it."""
    from onepass.data import arch
    from onepass.data.flops import FP16_BYTES, forward_ledger, kv_cache_numbers_per_token, parameter_counts

    def short(n: int) -> str:
        return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{round(n / 1e6)}M"
    rows = ["| `--model` | architecture | layers | query / key-value heads | d_head | width | parameters | "
            f"FLOPs, one pass over {tokens} tokens | KV cache per token | real weights |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, card in MODELS.items():
        s = card.shape()
        params, kv = parameter_counts(s)["total"], kv_cache_numbers_per_token(s)
        source = (f"package `{card.weights_from.split(':')[1]}` (GGUF, installed by `make`)"
                  if card.weights_from.startswith("package:") else f"hub `{card.hub}`"
                  + (" (gated)" if card.gated else ""))
        rows.append(f"| `{name}` | {arch.of(card).TITLE} | {s.n_layer} | {s.n_head} / {s.kv_heads} | {s.d_head} | "
                    f"{s.n_embd} | {params:,} ({short(params)}) | {forward_ledger(s, tokens).total:,} | "
                    f"{kv:,} ({kv * FP16_BYTES // 1024} KB in fp16) | {source} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
