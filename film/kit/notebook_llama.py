"""The Llama-style family's notebook cells (SmolLM2, Llama 3.2, Qwen3): each chapter's numbers computed
again from the model's own weights, step by step, in plain torch.

film/kit/notebook.py builds the notebook (its markdown, the `same` check, the order of cells); this
module holds what differs from GPT-2's: the bundle values each chapter checks (`expected`) and the code
cells. The weights and the tokenizer are loaded through onepass itself (extract.load_model and
extract.model_tokenizer: SmolLM2's GGUF file dequantized to float32, Llama 3's and Qwen3's vocabularies
from their packages, seeded random weights made exactly as the film made them); everything after that
is the arithmetic a student reads: RMSNorm, q/k/v projections, RoPE pair by pair with the model's own
speeds, grouped-query attention, the causal mask and softmax, SwiGLU, the final RMSNorm and the
unembedding (tied or not).
"""
from __future__ import annotations

from onepass.data.facts.ch01 import embed_facts
from onepass.data.facts.ch02 import head_facts
from onepass.data.facts.ch03 import mlp_facts, param_facts
from onepass.data.facts.ch06 import loop_facts
from onepass.film.kit.notebook_shared import LOOP, MASK_OFF, ONE_HEAD, SAMPLING, VOTE


def expected(chapter: str, bundle, common: dict, shown) -> dict:
    """The bundle's values chapter `chapter`'s notebook checks; `common` holds the prompt, ids, config,
    weights, ledger and what every architecture checks alike (notebook._any_architecture); shown(a, n)
    lists a vector's first numbers."""
    out = dict(common, bos=bundle.tokenizer.bos_id,
               weights=dict(common["weights"], model=bundle.meta["model_card"]["name"]))
    shape, T, last = bundle.shape, bundle.T, bundle.T - 1
    if chapter == "01":
        f = embed_facts(bundle)
        i = f["row_index"]
        out.update(row_index=i, wte_row=shown(bundle["wte_rows"][i]), x0_last=shown(bundle["resid_pre"][0, last]),
                   wte_params=f["wte_params"])
    if chapter in ("02", "05"):
        h = head_facts(bundle)["head_index"]
        kv = shape.kv_head_of(h)
        out.update(kv_head=shown(bundle["kv_head"], None), rms1_last=float(bundle["rms1"][0, last]),
                   inv_freq=shown(bundle["rope_inv_freq"], None), q_prerot_last=shown(bundle["q_prerot"][0, h, last]),
                   k_prerot_last=shown(bundle["k_prerot"][0, kv, last]))
    if chapter == "03":
        m, p = mlp_facts(bundle), param_facts(bundle)
        out.update(mlp_gate_last=shown(bundle["mlp_gate"][0, last]), mlp_up_last=shown(m["pre"]),
                   mlp_hidden_last=shown(m["hidden"]), mlp_out_last=shown(m["out"]), n_pos=m["n_pos"],
                   n_neg=m["n_neg"], attention_params=p["attention"], mlp_params=p["mlp"],
                   rms_f_last=float(bundle["rms_f"][last]), ln_f_last=shown(bundle["ln_f"][last]))
    if chapter == "06":
        out.update(per_token_full=loop_facts(bundle)["per_token_full"])     # the cache without GQA
    return out


# ---------------------------------------------------------------------------------------
# The code cells (after notebook.SETUP: BUNDLE, same, weights_sha256)

TOKENIZER = '''\
# the model's own tokenizer, as the film built it (SmolLM2: its GGUF file's; Llama 3, Qwen3: their packages')
from onepass.data import extract

W = BUNDLE["weights"]
source = W["spec"]
if not W["synthetic"] and not Path(source).expanduser().exists():     # another machine: its own copy
    source = extract.find_real_weights(W["model"]) or W["hub_id"]
tok = extract.model_tokenizer(W["model"], source)
decode = tok.decode                                             # ids -> text
plain = tok.encode_plain(BUNDLE["prompt"])                      # the prompt's own tokens
ids = ([tok.bos_id] if tok.bos_id is not None else []) + plain  # Llama 3 puts <|begin_of_text|> in front
T = len(ids)
print(T, "tokens:", ids)
assert ids == BUNDLE["ids"], "the prompt's ids differ from the film's"
'''

MODEL = '''\
# the weights as the film loaded them (a GGUF file is dequantized to float32), checked against its sha256
model = extract.load_model(extract.WeightsSpec(source, W["model"]))
sha = weights_sha256(model)        # every tensor hashed once (about a second for SmolLM2's 540 MB)
print("weights sha256", sha)
assert sha == W["sha256"], "these are not the weights the film ran"
cfg = BUNDLE["config"]
d, H, KV, L, V = cfg["n_embd"], cfg["n_head"], cfg["n_kv_head"], cfg["n_layer"], cfg["vocab_size"]
dh, dff, eps = cfg["head_dim"], cfg["n_inner"], cfg["norm_eps"]
group = H // KV                     # query heads that share one key/value head
tf = model.model
embed, unembed = tf.embed_tokens.weight, model.lm_head.weight      # [V, d] each: one table when tied
'''

FORWARD = '''\
def lin(x, m):                      # a projection: x [n, in] @ Wᵀ [in, out], plus a bias where the model has one
    return x @ m.weight.T if m.bias is None else x @ m.weight.T + m.bias


def rms_norm(x, norm):              # RMSNorm: divide by the root mean square (no mean taken off, no bias), times the gain
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * norm.weight


# RoPE's speeds: pair i (dimensions i and i + dh/2) turns inv_freq[i] radians per position
R = cfg["rope"]
assert R.get("rope_type", "default") in ("default", "llama3"), f"rope type {R['rope_type']} is not written here"
inv_freq = 1.0 / R["rope_theta"] ** (torch.arange(0, dh, 2).float() / dh)         # [dh/2], fastest first
if R.get("rope_type") == "llama3":  # Llama 3's stretch: its slow pairs turn `factor` times slower
    from onepass.data.facts.ch01 import stretch_rule
    inv_freq = torch.tensor(stretch_rule(inv_freq.numpy(), R), dtype=torch.float32)
assert torch.allclose(inv_freq, tf.rotary_emb.inv_freq), "these are not the model's own speeds"


def rope(x, positions):             # x [..., n, dh]: every pair turned by its position times its speed
    angle = positions[:, None].float() * inv_freq[None, :]                         # [n, dh/2]
    cos, sin = torch.cos(angle), torch.sin(angle)
    a, b = x[..., : dh // 2], x[..., dh // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


def attention(x, a):
    """One layer's attention over n normed rows x [n, d]: its output [n, d], the scaled scores and the
    weights [H, n, n]. Query head h reads key/value head h // group."""
    n = x.shape[0]
    q = lin(x, a.q_proj).view(n, H, dh).transpose(0, 1)            # [H, n, dh]
    k = lin(x, a.k_proj).view(n, KV, dh).transpose(0, 1)           # [KV, n, dh]: fewer heads
    v = lin(x, a.v_proj).view(n, KV, dh).transpose(0, 1)
    if hasattr(a, "q_norm"):        # Qwen3: an RMSNorm on each head's q and k, before the turn
        q, k = rms_norm(q, a.q_norm), rms_norm(k, a.k_norm)
    q, k = rope(q, torch.arange(n)), rope(k, torch.arange(n))
    k, v = k[torch.arange(H) // group], v[torch.arange(H) // group]   # [H, n, dh]: each group's shared head
    s = q @ k.transpose(-1, -2) / math.sqrt(dh)
    w = torch.softmax(s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf")), -1)
    return lin((w @ v).transpose(0, 1).reshape(n, H * dh), a.o_proj), s, w


def swiglu(x, mlp):                 # down(SiLU(gate x) · up x): x [n, d] -> [n, d], and the hidden [n, dff]
    gate, up = lin(x, mlp.gate_proj), lin(x, mlp.up_proj)
    hidden = gate * torch.sigmoid(gate) * up
    return lin(hidden, mlp.down_proj), hidden


def forward(token_ids):
    """Every layer's output (the residual stream after each block) and MLP hidden for these ids."""
    x = embed[token_ids]            # no position table: positions enter as RoPE's turn
    outs, hiddens = [], []
    for layer in tf.layers:
        x = x + attention(rms_norm(x, layer.input_layernorm), layer.self_attn)[0]
        out, hidden = swiglu(rms_norm(x, layer.post_attention_layernorm), layer.mlp)
        x = x + out
        outs.append(x)
        hiddens.append(hidden)
    return outs, hiddens


def next_token_logits(x_last):      # the final RMSNorm, then one score per vocabulary row
    return rms_norm(x_last, tf.norm) @ unembed.T
'''

CHAPTER_CODE = {
    "00": ['''\
texts = [tok.decode([i]) for i in ids]
print(texts)
assert texts == BUNDLE["token_texts"]
assert tok.decode(plain) == BUNDLE["prompt"], "the tokens do not spell the prompt back"
if tok.bos_id is not None:          # a begin-of-text token: read by the model, counted in T
    print("begin-of-text:", tok.bos_id, repr(tok.decode([tok.bos_id])))
    assert ids[0] == BUNDLE["bos"]
print("vocabulary:", V, "rows,", tok.vocab_size(), "of them with a token")
assert model.config.vocab_size == V and tok.vocab_size() <= V
''', '''\
# the ledger: tokenizing is a lookup, no arithmetic
assert BUNDLE["ledger"]["tokens"] == 0 and BUNDLE["ledger"]["embed"] == 0
'''],
    "01": ['''\
i = BUNDLE["row_index"]
x0 = embed[ids]                     # one row of the table per token, and nothing added: no position table
same(x0[i, :8], BUNDLE["wte_row"], label=f"embedding row of id {ids[i]}")
same(x0[-1, :8], BUNDLE["x0_last"], label="x0, last token")
''', '''\
assert embed.numel() == V * d == BUNDLE["wte_params"]
assert "positions" not in BUNDLE["ledger"], "no position table, nothing added to the rows"
# positions enter inside attention: q and k turned (RoPE), 3 FLOPs per number of q and k
assert BUNDLE["ledger"]["L0.rope"] == 3 * T * (H + KV) * dh
print("turning q and k, layer 1:", BUNDLE["ledger"]["L0.rope"], "FLOPs")
'''],
    "02": ['''\
h = BUNDLE["head"]                  # the featured head: its last row is the least uniform
kv = h // group                     # the key/value head its group shares
assert BUNDLE["kv_head"] == (torch.arange(H) // group).tolist()
layer, a = tf.layers[0], tf.layers[0].self_attn
x0 = embed[ids]
r = torch.sqrt((x0 * x0).mean(-1) + eps)                       # [T]: each row's root mean square
same(r[-1], BUNDLE["rms1_last"], label="rms, last token")
x = rms_norm(x0, layer.input_layernorm)
same(x[-1, :8], BUNDLE["ln1_last"], label="RMSNorm, last token")
q = lin(x, a.q_proj)[:, h * dh:(h + 1) * dh]                  # [T, dh]: query head h
k = lin(x, a.k_proj)[:, kv * dh:(kv + 1) * dh]                # [T, dh]: key/value head kv
v = lin(x, a.v_proj)[:, kv * dh:(kv + 1) * dh]
if hasattr(a, "q_norm"):
    q, k = rms_norm(q, a.q_norm), rms_norm(k, a.k_norm)
same(q[-1, :8], BUNDLE["q_prerot_last"], label="q"); same(k[-1, :8], BUNDLE["k_prerot_last"], label="k")
same(v[-1, :8], BUNDLE["v_last"], label="v")
''', '''\
# RoPE: pair i turns by position × inv_freq[i] radians; the last token sits at position T - 1
same(inv_freq, BUNDLE["inv_freq"], label="radians per position")
print("degrees per position, fastest and slowest pair:", math.degrees(inv_freq[0]), math.degrees(inv_freq[-1]))
positions = torch.arange(T)
q, k = rope(q, positions), rope(k, positions)
same(q[-1, :8], BUNDLE["q_last"], label="q, turned"); same(k[-1, :8], BUNDLE["k_last"], label="k, turned")
''', ONE_HEAD + '''\
# every query head of this group reads the same k and v: all heads at once give the same weights
assert torch.allclose(attention(x, a)[2][h], weights, atol=1e-6)
''', '''\
# the ledger's arithmetic for layer 1's attention: k and v are KV heads wide, not H
led = BUNDLE["ledger"]
assert led["L0.qkv"] == 2 * T * d * (H + 2 * KV) * dh
assert led["L0.rope"] == 3 * T * (H + KV) * dh
assert led["L0.scores"] == 2 * T * T * H * dh and led["L0.mix"] == 2 * T * T * H * dh
assert led["L0.out"] == 2 * T * H * dh * d
print("q, k, v:", led["L0.qkv"], "FLOPs; with a key/value head per query head:", 2 * T * d * 3 * H * dh)
'''],
    "03": ['''\
outs, hiddens = forward(ids)
for l, out in enumerate(outs):
    same(out[-1, :8], BUNDLE["resid_post_last"][l], digits=4, atol=1e-4, label=f"after layer {l + 1}")
''', '''\
# SwiGLU in layer 1, last token: a gate (SiLU) times an "up" projection, then "down"
layer = tf.layers[0]
x = embed[ids] + attention(rms_norm(embed[ids], layer.input_layernorm), layer.self_attn)[0]
u = rms_norm(x, layer.post_attention_layernorm)[-1]            # [d]
gate, up = lin(u, layer.mlp.gate_proj), lin(u, layer.mlp.up_proj)   # [dff] each
same(gate[:8], BUNDLE["mlp_gate_last"], atol=1e-5, label="gate"); same(up[:8], BUNDLE["mlp_up_last"], atol=1e-5, label="up")
hidden = gate * torch.sigmoid(gate) * up                       # SiLU(gate) · up
same(hidden[:8], BUNDLE["mlp_hidden_last"], atol=1e-5, label="hidden")
same(lin(hidden, layer.mlp.down_proj)[:8], BUNDLE["mlp_out_last"], atol=1e-5, label="down")
print("positive", int((hidden > 0).sum()), "negative", int((hidden < 0).sum()))
assert int((hidden > 0).sum()) == BUNDLE["n_pos"] and int((hidden < 0).sum()) == BUNDLE["n_neg"]
attn = sum(p.numel() for p in layer.self_attn.parameters())
mlp = sum(p.numel() for p in layer.mlp.parameters())           # three matrices: gate, up, down
assert (attn, mlp) == (BUNDLE["attention_params"], BUNDLE["mlp_params"]) and mlp == 3 * d * dff
''', '''\
# the final RMSNorm, then the logit lens: each layer's last row read through it and the unembedding
x_last = outs[-1][-1]
same(torch.sqrt((x_last * x_last).mean() + eps), BUNDLE["rms_f_last"], label="final rms")
same(rms_norm(x_last, tf.norm)[:8], BUNDLE["ln_f_last"], atol=1e-4, label="final RMSNorm")
for l, out in enumerate(outs):
    p = torch.softmax(next_token_logits(out[-1]).double(), -1)
    print(l + 1, int(p.argmax()), repr(tok.decode([int(p.argmax())])))
    assert int(p.argmax()) == BUNDLE["lens_ids"][l]
    same(p.max(), BUNDLE["lens_probs"][l], atol=0, label="  top-1")
led = BUNDLE["ledger"]
assert led["L0.mlp_gate"] == led["L0.mlp_up"] == 2 * T * d * dff and led["L0.mlp_down"] == 2 * T * dff * d
'''],
    "04": ['''\
tied = unembed.data_ptr() == embed.data_ptr()
print("unembedding:", "the embedding table itself (tied)" if tied else "a table of its own")
assert tied == cfg["tied"]
''' + VOTE, SAMPLING],
    "05": ['''\
h = BUNDLE["head"]
layer = tf.layers[0]
_, scores, causal = attention(rms_norm(embed[ids], layer.input_layernorm), layer.self_attn)
scores, causal = scores[h], causal[h]       # [T, T]: the featured head, its mask applied
''' + MASK_OFF, '''\
# the same scores either way: the mask changes no arithmetic
assert BUNDLE["ledger"]["L0.scores"] == 2 * T * T * H * dh
'''],
    "06": [LOOP, '''\
def layer_flops(n, rows):                   # one layer, `rows` new rows reading n keys (GQA: k, v are KV heads wide)
    return (2 * rows * d * (H + 2 * KV) * dh + 3 * rows * (H + KV) * dh + 2 * rows * n * H * dh * 2
            + 2 * rows * H * dh * d + 2 * rows * d * dff * 3)


pass_flops = lambda n: L * layer_flops(n, n) + 2 * d * V           # every row again
cached_step_flops = lambda n: L * layer_flops(n, 1) + 2 * d * V    # one new row, the cache holds the rest
assert pass_flops(T) == BUNDLE["ledger_total"]
contexts = [T + i for i in range(len(BUNDLE["generated"]))]
assert [pass_flops(n) for n in contexts] == BUNDLE["steps_full"]
assert [cached_step_flops(n) for n in contexts] == BUNDLE["steps_cached"]
# the cache per token: a key and a value per layer and key/value head
assert 2 * L * KV * dh == BUNDLE["per_token"] and 2 * L * H * dh == BUNDLE["per_token_full"]
print("cached numbers per token:", BUNDLE["per_token"], "; one key/value head per query head:", BUNDLE["per_token_full"])
print("full passes:", BUNDLE["steps_full"], "cached steps:", BUNDLE["steps_cached"])
'''],
}
