"""Chapter 07 narration: what changed since GPT-2, two models on one prompt.

Every figure comes from data/facts/ch07.py `pair_facts`, which the scene reads too, so screen and
voice agree: both models' shapes, tokens, parameters, ledgers and caches; the predictions only where
both models have real weights (the `predictions` sentence says why not otherwise).
"""
from __future__ import annotations

from onepass.data.facts.ch07 import pair_facts
from onepass.words.numbers import spoken_count, spoken_pct, spoken_signed, spoken_token


def predictions(f: dict, words) -> str:
    old, new = f["old"], f["new"]
    if f["predictions"]:
        return words.text("ch07:said-compared", old=words.model_name(old.name), new=words.model_name(new.name),
                          old_top=spoken_token(old.top[0], words), old_p=spoken_pct(old.top[1], words),
                          new_top=spoken_token(new.top[0], words), new_p=spoken_pct(new.top[1], words))
    if old.weights != "real" and new.weights != "real":
        return words.text("ch07:said-both")
    missing = old if old.weights != "real" else new
    return words.text(f"ch07:said-{missing.weights}", model=words.model_name(missing.name))


def values(bundle, ledger, words) -> dict:
    f = pair_facts(bundle)
    old, new = f["old"], f["new"]
    oc, nc = f["old_changes"], f["new_changes"]
    n = lambda x: spoken_count(x, words)          # noqa: E731
    return {
        "old": words.model_name(old.name), "new": words.model_name(new.name),
        "old_layers": old.shape.n_layer, "old_d": old.shape.n_embd,
        "new_layers": new.shape.n_layer, "new_d": new.shape.n_embd,
        "old_T": old.T, "new_T": new.T,
        "old_norm_params": n(oc["norm"]["params"]), "new_norm_params": n(nc["norm"]["params"]),
        "rows": n(oc["positions"]["rows"]), "table_params": n(oc["positions"]["table_params"]),
        "new_pos_flops": n(nc["positions"]["flops_per_token"]), "old_pos_flops": n(oc["positions"]["flops_per_token"]),
        "old_dff": n(oc["mlp"]["d_ff"]), "new_dff": n(nc["mlp"]["d_ff"]),
        "ratio": spoken_signed(nc["mlp"]["ratio"], 2, words),
        "new_mlp_flops": n(nc["mlp"]["flops_layer_token"]), "old_mlp_flops": n(oc["mlp"]["flops_layer_token"]),
        "old_heads": oc["attention"]["heads"], "new_heads": nc["attention"]["heads"],
        "new_kv_heads": nc["attention"]["kv_heads"], "group": nc["attention"]["group"],
        "new_kv_full": n(2 * new.shape.n_layer * new.shape.n_head * new.shape.d_head),
        "old_params": n(old.params), "new_params": n(new.params),
        "old_flops": n(old.flops_per_token), "new_flops": n(new.flops_per_token),
        "old_kv": n(old.kv_per_token), "new_kv": n(new.kv_per_token),
        "predictions": predictions(f, words),
    }
