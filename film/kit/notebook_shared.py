"""Notebook cells whose arithmetic is the same for every architecture: GPT-2's notebooks
(film/kit/notebook.py) and the Llama-style family's (film/kit/notebook_llama.py) both run them, after
their own code has made the names each one reads."""
from __future__ import annotations

# chapter 02, after one head's `q`, `k`, `v` [T, dh] (turned, where the model turns them): its scores, the mask,
# the softmax and the head's output
ONE_HEAD = '''\
scores = q @ k.T / math.sqrt(dh)
same(scores[-1], BUNDLE["scores_last"], label="scores, last row")
masked = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
weights = torch.softmax(masked, -1)
same(weights, BUNDLE["probs"], digits=4, atol=1e-6, label="weights")
assert torch.allclose(weights.sum(-1), torch.ones(T)), "each row sums to one"
assert int(weights[-1].argmax()) == BUNDLE["top_index"]
same((weights[-1] @ v)[:8], BUNDLE["head_out_last"], label="the head's output, last token")
'''

# chapter 04, after `forward`, `next_token_logits` and `decode`: the last row's scores, the top tokens
VOTE = '''\
outs, _ = forward(ids)
logits = next_token_logits(outs[-1][-1]).double()
top = BUNDLE["top_ids"]
same(logits[top], BUNDLE["top_logits"], atol=1e-4, label="top logits")
probs = torch.softmax(logits, -1)
mine = torch.argsort(-probs, stable=True)[: len(top)].tolist()
print([decode([i]) for i in mine])
assert mine == top, "the top next tokens differ"
same(probs[top], BUNDLE["top_probs"], atol=0, label="their probabilities")
'''

# chapter 04, after `logits` and `probs` of the last row, `d` and `V`: temperatures, top-p, the bill
SAMPLING = '''\
for t, want in zip(BUNDLE["temperatures"], BUNDLE["temp_top"]):
    same(torch.softmax(logits / t, -1).max(), want, atol=0, label=f"top-1 at temperature {t}")
cum = torch.cumsum(torch.sort(probs, descending=True).values, 0)
n_p = int(torch.searchsorted(cum, torch.tensor(BUNDLE["top_p"] - 1e-12, dtype=cum.dtype))) + 1
print("top-p set:", n_p, "tokens")
assert n_p == BUNDLE["n_p"]
assert BUNDLE["ledger"]["unembed"] == 2 * d * V, "the unembedding of the last row costs 2·d·V"
'''

# chapter 05, after one head's `scores` and its masked softmax `causal` [T, T]: the encoder's view beside it
MASK_OFF = '''\
full = torch.softmax(scores, -1)            # the encoder's view: nothing masked
same(causal, BUNDLE["probs"], label="decoder (masked)")
same(full, BUNDLE["full"], label="encoder (unmasked)")
changed = [r for r in range(T) if float((full[r] - causal[r]).abs().max()) >= 0.0005]
print("rows that change:", changed)
assert changed == BUNDLE["changed"]
'''

# chapter 06, after `forward`, `next_token_logits` and `decode`: each generated token by a full pass
LOOP = '''\
context = list(ids)
for step, (want, want_p) in enumerate(zip(BUNDLE["generated"], BUNDLE["generated_probs"])):
    outs, _ = forward(context)              # one full pass over the whole context
    p = torch.softmax(next_token_logits(outs[-1][-1]).double(), -1)
    pick = int(p.argmax())
    print(step + 1, len(context), pick, repr(decode([pick])))
    assert pick == want
    same(p[pick], want_p, atol=0, label="  its probability")
    context.append(pick)
'''
