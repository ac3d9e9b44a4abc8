"""Chapter 03 narration: many heads, the MLP, the stack of layers, the logit lens.

Every figure is read from the ledger or from data/facts (ch03, and ch02 for the featured
head), which scenes/ch03_stack.py reads too, so the screen and the narration can never disagree.
"""
from __future__ import annotations

from onepass.data.facts.ch02 import head_facts
from onepass.data.facts.ch03 import (
    head_panels, lens_facts, mlp_facts, norm_facts, param_facts, rms_facts, settle_layer, swiglu_facts,
)
from onepass.words.numbers import (
    fmt_int, fmt_ratio, spoken_count, spoken_prob, spoken_share, spoken_signed, spoken_token,
)


def values(bundle, ledger, words) -> dict:
    shape = bundle.shape
    L, H, d, dff = shape.n_layer, shape.n_head, shape.n_embd, shape.d_ff
    mlp = mlp_facts(bundle)
    params = param_facts(bundle)
    lens = lens_facts(bundle)
    settle = settle_layer(lens)
    featured = head_facts(bundle)["head_index"]
    shown = head_panels(bundle, featured)
    rmsnorm = shape.norm == "rmsnorm"
    norm = rms_facts(bundle) if rmsnorm else norm_facts(bundle)
    growth = norm["growth"]
    values = {
        "model": words.model_name(bundle.model),
        # "Here are all 12 attention patterns" / "Here are 12 of its 25": the heads on screen
        "shown_heads": (words.text("ch03:heads-all", n=H) if len(shown) == H
                        else words.text("ch03:heads-some", shown=len(shown), n=H)),
        "n_head": H,
        "n_layer": L,
        "T": bundle.T,
        "d": d,
        "dh": d // H,
        "dff": fmt_int(dff),
        "head": featured + 1,
        "last_token": spoken_token(bundle.tokens[-1], words),
        "n_pos": fmt_int(mlp["n_pos"]),
        "n_neg": fmt_int(mlp["n_neg"]),
        "min_hidden": spoken_signed(mlp["min"], 2, words),
        "mlp_flops": spoken_count(ledger.mlp_flops(0), words),
        "down_flops": spoken_count(ledger["L0.mlp_down"].flops, words),     # what the meter adds at the down beat
        "mlp_params": spoken_count(params["mlp"], words),
        "attn_params": spoken_count(params["attention"], words),
        "param_ratio": fmt_ratio(params["ratio"]),
        "layer_flops": spoken_count(ledger.layer_flops(0), words),
        "stack_flops": spoken_count(ledger.after(f"L{L - 1}.mlp_down"), words),
        "lens_first": spoken_token(lens[0]["text"], words),
        "lens_first_p": spoken_prob(lens[0]["prob"], words),
        "lens_last": spoken_token(lens[-1]["text"], words),
        "lens_last_p": spoken_prob(lens[-1]["prob"], words),
        # LayerNorm: the last row's spread entering layer 1, and how much the stream's spread grows by the
        # last layer (a whole number from 10 up, one decimal below)
        "std": spoken_signed(norm["rms" if rmsnorm else "std"], 2, words),
        "growth": spoken_signed(growth, 1 if growth < 10 else 0, words),
        "settle_layer": settle + 1,
        "settle_count": L - settle,
    }
    if shape.has_position_table:       # GPT-2's position add, once before the stack
        values["pos_flops"] = spoken_count(ledger["positions"].flops, words)
    if rmsnorm:                        # RMSNorm: the row's root mean square (the bundle's rms1)
        values["rms"] = spoken_signed(norm["rms"], 2, words)
    if shape.kv_heads < H:             # grouped-query attention: query heads over key/value heads
        values.update(kv_heads=shape.kv_heads, group=shape.group)
    if shape.mlp == "swiglu":          # three matrices; their width against GPT-2's 4·d
        sw = swiglu_facts(bundle, ledger)
        values.update(
            dff_ratio=fmt_ratio(sw["width_ratio"]),
            max_hidden=spoken_signed(mlp["max"], 2, words),
            mlp_share=spoken_share(sw["mlp_share"], words),
            two_params=spoken_count(sw["two_at_4d"], words),
            # "just as many as" at 8/3 of d, else "N times as many as"
            vs_two=(words.text("ch03:say-same-as") if abs(sw["vs_two"] - 1) < 0.005
                    else words.text("ch03:say-times-as", ratio=fmt_ratio(sw["vs_two"]))))
    return values
