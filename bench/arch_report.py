"""Every model's figures for the closing note of the modern-decoder work: parameters (counted from the
shape, by torch on the model built), FLOPs of one pass over the default prompt (the ledger, and torch's
FlopCounterMode, which sees the matrix products only), the KV cache per token with and without
grouped-query attention, and the wall time of one extraction here (a fresh cache: --weights auto for
SmolLM2's real weights, random for the others, whose real weights this machine cannot download).

    .venv/bin/python bench/arch_report.py [--models smollm2-135m-instruct,qwen3-0.6b] [--no-extract]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

PROMPT = "The cat sat on the"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="")
    p.add_argument("--no-extract", action="store_true")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from onepass.data import extract, models
    from onepass.data.flops import forward_ledger, kv_cache_numbers_per_token, kv_cache_numbers_without_gqa, \
        parameter_counts
    names = [n for n in args.models.split(",") if n] or list(models.MODELS)
    print(f"{'model':24} {'T':>2} {'params (shape)':>15} {'params (torch)':>15} {'ledger FLOPs':>15} "
          f"{'matmul (ledger)':>15} {'FlopCounterMode':>15} {'KV/token':>9} {'no GQA':>9} {'extract s':>9}")
    for name in names:
        card = models.get(name)
        shape = card.shape()
        T = len(extract.validate_prompt(PROMPT, extract.model_tokenizer(name)))
        with torch.device("meta"):
            if card.arch == "gpt2":
                from transformers import GPT2Config, GPT2LMHeadModel
                model = GPT2LMHeadModel(GPT2Config(**card.config()))
            else:
                from onepass.data.arch.llama.capture import config_class, model_class
                model = model_class(card.hf_class)(config_class(card.hf_class)(**card.config()))
        model.config._attn_implementation = "eager"
        built = sum(t.numel() for t in model.parameters())
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(torch.zeros((1, T), dtype=torch.long, device="meta"),
                  attention_mask=torch.ones((1, T), dtype=torch.long, device="meta"), use_cache=False, logits_to_keep=1)
        ledger = forward_ledger(shape, T)
        matmul = ledger.total - sum(e.flops for e in ledger.entries if e.key == "positions" or e.key.endswith(".rope"))
        took = ""
        if not args.no_extract:
            weights = "auto" if card.weights_from.startswith("package:") else "random"
            with tempfile.TemporaryDirectory() as root:
                start = time.perf_counter()
                extract.extract(PROMPT, weights, model=name, root=root, log=lambda m: None)
                took = f"{time.perf_counter() - start:.1f} ({weights})"
        print(f"{name:24} {T:>2} {parameter_counts(shape)['total']:>15,} {built:>15,} {ledger.total:>15,} "
              f"{matmul:>15,} {counter.get_total_flops():>15,} {kv_cache_numbers_per_token(shape):>9,} "
              f"{kv_cache_numbers_without_gqa(shape):>9,} {took:>9}", flush=True)


if __name__ == "__main__":
    main()
