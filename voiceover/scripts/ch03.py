"""Chapter 03 narration: many heads, the MLP, twelve layers, the logit lens.

Every figure is read from the ledger or from data/facts (ch03, and ch02 for the featured
head), which scenes/ch03_stack.py reads too, so the screen and the narration can never disagree.
"""
from __future__ import annotations

from data.facts.ch02 import head_facts
from data.facts.ch03 import lens_facts, mlp_facts, param_facts, settle_layer
from voiceover.script import Line
from voiceover.spoken import spoken_count, spoken_prob, spoken_token

LINES = [
    Line("heads", "Chapter two followed one head. Layer one runs {n_head} of them side by side, each with its "
                  "own queries, keys and values, each free to look for something different. Here are all "
                  "{n_head} attention patterns over our {T} tokens, as a grid and as lines to the tokens each "
                  "one reads. The title above each names what it mostly reads. Head {head} is the one we "
                  "followed.",
         synthetic="Chapter two followed one head. Layer one runs {n_head} of them side by side, each with its "
                   "own queries, keys and values. Here are all {n_head} attention patterns over our {T} tokens, "
                   "as a grid and as lines to the tokens each one reads. The title above each names what it "
                   "mostly reads. Head {head} is the one we followed. "
                   "With random weights these patterns are chance; a trained model's heads learn distinct "
                   "habits."),
    Line("split", "The heads share the width rather than copy it. The {d} numbers are cut into {n_head} slices "
                  "of {dh}, one for each head. Their outputs are laid side by side again, so chapter two's bill "
                  "already paid for every head."),
    Line("mlp_in", "Then each token visits the second half of the layer, the MLP. It never looks at other tokens. "
                   "Take {last_token}: {d} numbers, after another LayerNorm."),
    Line("mlp_up", "A matrix widens them to {dff}, and GELU bends each one. Of these {dff} activations, "
                   "{n_pos} came out positive and {n_neg} negative. GELU lets negatives through only small: "
                   "none is below {min_hidden}."),
    Line("mlp_down", "A second matrix folds the {dff} back to {d}. The result is added to the residual stream. "
                     "For all {T} tokens the two products cost {mlp_flops} FLOPs."),
    Line("params", "The MLP holds {mlp_params} parameters per layer. Attention holds {attn_params}. "
                   "The MLP is {param_ratio} times the size of the famous part."),
    Line("climb", "Attention plus MLP is one layer. GPT-2 small stacks {n_layer} of them: one blueprint, "
                  "{n_layer} sets of weights. Each layer adds its edits to the residual stream. Every layer "
                  "costs the same {layer_flops} FLOPs for our {T} tokens."),
    Line("climb_total", "After layer {n_layer} the meter reads {stack_flops} FLOPs. That is {n_layer} layers at "
                        "{layer_flops} each, plus {pos_flops} for adding the positions in chapter one."),
    Line("lens", "The logit lens decodes the last token's residual stream after every layer, as if the model "
                 "had to answer early. After layer 1 its guess is {lens_first} at {lens_first_p}. After layer "
                 "{n_layer} it is {lens_last} at {lens_last_p}, the model's real answer.",
         synthetic="The logit lens decodes the last token's residual stream after every layer, as if the model "
                   "had to answer early. With random weights these guesses are noise. After layer 1 it reads "
                   "{lens_first} at {lens_first_p}. After layer {n_layer} it reads {lens_last} at {lens_last_p}. "
                   "Trained weights would show one guess being refined floor by floor."),
    Line("lens_settle", "The final answer {lens_last} is on top from layer {settle_layer} upward: "
                        "{settle_count} of the {n_layer} floors agree with the last. The lens is a look inside, "
                        "not part of the pass, so it costs nothing on the meter.",
         synthetic="The last floor's pick, {lens_last}, is on top from layer {settle_layer} upward, but with "
                   "random weights that says nothing about language. The lens itself costs nothing on the "
                   "meter: it is a look inside, not part of the pass."),
]


def values(bundle, ledger) -> dict:
    shape = bundle.shape
    L, H, d, dff = shape.n_layer, shape.n_head, shape.n_embd, shape.d_ff
    mlp = mlp_facts(bundle)
    params = param_facts(bundle)
    lens = lens_facts(bundle)
    settle = settle_layer(lens)
    return {
        "n_head": H,
        "n_layer": L,
        "T": bundle.T,
        "d": d,
        "dh": d // H,
        "dff": f"{dff:,}",
        "head": head_facts(bundle)["head_index"] + 1,
        "last_token": spoken_token(bundle.tokens[-1]),
        "n_pos": f"{mlp['n_pos']:,}",
        "n_neg": f"{mlp['n_neg']:,}",
        "min_hidden": f"minus {abs(mlp['min']):.2f}" if mlp["min"] < 0 else f"{mlp['min']:.2f}",
        "mlp_flops": spoken_count(ledger.mlp_flops(0)),
        "mlp_params": spoken_count(params["mlp"]),
        "attn_params": spoken_count(params["attention"]),
        "param_ratio": f"{params['ratio']:.1f}",
        "layer_flops": spoken_count(ledger.layer_flops(0)),
        "stack_flops": spoken_count(ledger.after(f"L{L - 1}.mlp_down")),
        "pos_flops": spoken_count(ledger["positions"].flops),
        "lens_first": spoken_token(lens[0]["text"]),
        "lens_first_p": spoken_prob(lens[0]["prob"]),
        "lens_last": spoken_token(lens[-1]["text"]),
        "lens_last_p": spoken_prob(lens[-1]["prob"]),
        "settle_layer": settle + 1,
        "settle_count": L - settle,
    }
