"""The numbers each picture shows, as tables (issue 53 item 1): a blind student reads in the
transcript, and a handout's reader beside the figure, every number the film draws.

    from onepass.film.kit.tables import chapter_tables, table_html, table_text
    chapter_tables("02", bundle, words)     # beat -> [Table], in the film's language

A table is built from the same facts the scene draws (onepass.data.facts.chNN: the same rows, the
same window of a long prompt, the same values), its caption and headers are catalog words
(`kit:table-*`), its numbers are formatted as the language writes them (onepass.words.numbers), and
its rows and columns are named by the prompt's tokens as the film shows them (`·sat`:
onepass.data.visible.show_token). `ledger_table` is a chapter's Σ FLOPs meter: each step it pays and
the running total (the handout's ledger rows).
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from onepass.data.facts import ch00, ch01, ch02, ch03, ch04, ch05, ch06
from onepass.data.visible import show_token, token_window, window
from onepass.words import numbers as N


@dataclass(frozen=True)
class Table:
    """caption; `corner`: the header over the row names; `columns`: the column headers; `rows`:
    (row name, its cells); `token_rows`/`token_cols`: the names are the model's tokens (kept left to
    right in a right-to-left page)."""
    caption: str
    corner: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    token_rows: bool = False
    token_cols: bool = False


def _grid(caption: str, corner: str, values, tokens, rows, fmt) -> Table:
    """A T x T grid's window (the rows and columns the scene draws), each cell `fmt(value)`."""
    names = [show_token(tokens[i]) for i in rows]
    return Table(caption, corner, tuple(names),
                 tuple((names[a], tuple(fmt(float(values[r, c])) for c in rows)) for a, r in enumerate(rows)),
                 token_rows=True, token_cols=True)


def _ch00(bundle, words) -> dict[str, list[Table]]:
    f = ch00.token_facts(bundle)
    t = Table(words.text("kit:table-ids", T=N.fmt_int(f["T"])), words.text("kit:table-token"),
              (words.text("kit:table-id"),),
              tuple((show_token(t), (str(i),)) for t, i in zip(f["tokens"], f["ids"])), token_rows=True)
    return {"ids": [t]}


def _ch01(bundle, words) -> dict[str, list[Table]]:
    f = ch01.embed_facts(bundle)
    rows = list(range(min(bundle.T, ch01.SHOWN_TOKENS)))
    cols, _ = window(f["d"], 7)                       # the grid beat's NumberGrid(max_cols=7)
    wte = bundle["wte_rows"]
    grid = Table(words.text("kit:table-embedding", n=N.fmt_int(len(cols)), d=N.fmt_int(f["d"])),
                 words.text("kit:table-token"), tuple(words.text("kit:table-dimension", i=N.fmt_int(c + 1)) for c in cols),
                 tuple((show_token(bundle.tokens[r]), tuple(N.fmt_signed(float(wte[r, c]), 2) for c in cols))
                       for r in rows), token_rows=True)
    pairs = Table(words.text("kit:table-cosine"), words.text("kit:table-pair"),
                  (words.text("kit:table-cosine-col"), words.text("kit:table-angle")),
                  tuple((f"{show_token(' ' + p['a'])} {show_token(' ' + p['b'])}",
                         (N.fmt_cos(p["cosine"]), N.fmt_int(int(round(ch01.angle_of(p["cosine"]))))))
                        for p in f["cosine"]), token_rows=True)
    return {"grid": [grid], "cosine": [pairs]}


def _ch02(bundle, words) -> dict[str, list[Table]]:
    tokens, T = bundle.tokens, bundle.T
    rows = token_window(T)
    last = T - 1
    h = ch02.head_facts(bundle)["head_index"]
    corner = words.text("kit:table-query-key")
    score = lambda v: N.fmt_signed(v, 2)         # noqa: E731  (the grid's cells: NumberGrid's two decimals)
    a = ch02.agreement_facts(bundle)
    keys = Table(words.text("kit:table-keys", token=show_token(tokens[last])), words.text("kit:table-key"),
                 (words.text("kit:table-score"), words.text("kit:table-angle")),
                 tuple((show_token(tokens[j]), (score(float(a["dots"][j])), N.fmt_int(int(round(a["angle"][j])))))
                       for j in rows), token_rows=True)
    r = ch02.root_facts(bundle)
    dh, root = r["dh"], N.fmt_general(r["root"])
    dots = bundle["q"][0, h].astype(np.float64) @ bundle["k"][0, bundle.shape.kv_head_of(h)].astype(np.float64).T
    raw = _grid(words.text("kit:table-dots"), corner, dots, tokens, rows, score)
    scaled = _grid(words.text("kit:table-scaled", dh=N.fmt_int(dh), root=root), corner,
                   bundle["scores_scaled"][0, h], tokens, rows, score)
    masked = _grid(words.text("kit:table-masked"), corner, bundle["scores_masked"][0, h], tokens, rows, score)
    sr = ch02.softmax_row(bundle, ch02.softmax_row_index(rows))
    names = tuple(show_token(tokens[c]) for c in rows)
    soft = Table(words.text("kit:table-softmax-row", token=show_token(tokens[sr["row"]]), total=N.fmt_general(sr["total"], 3)),
                 words.text("kit:table-token"), names,
                 ((words.text("kit:table-score"), tuple(score(float(sr["scores"][c])) for c in rows)),
                  (words.text("kit:table-exp"), tuple(N.fmt_general(float(sr["exp"][c]), 3) for c in rows)),
                  (words.text("kit:table-share"), tuple(N.fmt_pct(float(sr["weights"][c])) for c in rows))),
                 token_cols=True)
    probs = bundle["probs"][0, h].astype(np.float64)
    weights = _grid(words.text("kit:table-weights"), corner, probs, tokens, rows, N.fmt_pct)
    weights = Table(weights.caption, weights.corner, weights.columns + (words.text("kit:table-sum"),),
                    tuple((name, cells + (N.fmt_pct(float(probs[q].sum())),)) for (name, cells), q in zip(weights.rows, rows)),
                    True, True)
    b = ch02.budget_facts(bundle)
    budget = Table(words.text("kit:table-budget", token=show_token(tokens[last])), words.text("kit:table-token"),
                   (words.text("kit:table-share"),),
                   tuple((show_token(tokens[j]), (N.fmt_pct(float(b["weights"][j])),)) for j in range(T)), token_rows=True)
    both = Table(words.text("kit:table-root", dh=N.fmt_int(dh)), words.text("kit:table-token"),
                 (words.text("kit:table-divided", dh=N.fmt_int(dh)), words.text("kit:table-undivided")),
                 tuple((show_token(tokens[j]), (N.fmt_pct(float(r["divided"][j])), N.fmt_pct(float(r["undivided"][j]))))
                       for j in rows), token_rows=True)
    m = ch02.blend_facts(bundle)
    mix = Table(words.text("kit:table-mix", token=show_token(tokens[last])), words.text("kit:table-token"),
                (words.text("kit:table-weight"),),
                tuple((show_token(tokens[j]), (N.fmt_pct(float(m["weights"][j])),)) for j in range(T)), token_rows=True)
    c = ch02.cost_facts(bundle.ledger())
    ledger = bundle.ledger()
    cost = Table(words.text("kit:table-cost", total=N.fmt_int(c["total"])), words.text("kit:handout-step"),
                 (words.text("kit:handout-flops"), words.text("kit:table-share")),
                 tuple((N.step_words(words, ledger[k], bundle.shape), (N.fmt_int(int(fl)), N.fmt_pct(float(s))))
                       for k, fl, s in zip(c["keys"], c["flops"], c["share"])))
    x = bundle["ln1"][0]
    xcols, _ = window(bundle.shape.n_embd, 6)         # the inputs beat's NumberGrid(max_cols=6)
    inputs = Table(words.text("kit:table-inputs", n=N.fmt_int(len(xcols)), d=N.fmt_int(bundle.shape.n_embd)),
                   words.text("kit:table-token"), tuple(words.text("kit:table-dimension", i=N.fmt_int(c + 1)) for c in xcols),
                   tuple((show_token(tokens[r]), tuple(N.fmt_signed(float(x[r, c]), 2) for c in xcols)) for r in rows),
                   token_rows=True)
    return {"inputs": [inputs], "agree": [keys], "scores": [raw, scaled], "mask": [masked], "softmax": [soft, weights],
            "last_row": [budget], "root": [both], "mix": [mix], "receipt": [cost]}


def _ch03(bundle, words) -> dict[str, list[Table]]:
    lens = ch03.lens_facts(bundle)
    t = Table(words.text("kit:table-lens"), words.text("kit:table-layer"),
              (words.text("kit:table-guess"), words.text("kit:table-probability")),
              tuple((N.fmt_int(row["layer"] + 1), (show_token(row["text"]), N.fmt_prob(row["prob"]))) for row in lens))
    p = ch03.param_facts(bundle)
    params = Table(words.text("kit:table-params"), words.text("kit:handout-step"), (words.text("kit:table-parameters"),),
                   ((words.text("kit:table-attention"), (N.fmt_int(p["attention"]),)),
                    (words.text("kit:table-mlp"), (N.fmt_int(p["mlp"]),))))
    m = ch03.mlp_facts(bundle)
    hidden = Table(words.text("kit:table-hidden", n=N.fmt_int(len(m["hidden"])), token=show_token(bundle.tokens[m["token"]])),
                   words.text("kit:table-layer"),
                   tuple(words.text(f"kit:table-{k}") for k in ("above", "below", "zero", "min", "max")),
                   ((N.fmt_int(m["layer"] + 1), (N.fmt_int(m["n_pos"]), N.fmt_int(m["n_neg"]), N.fmt_int(m["n_zero"]),
                                                 N.fmt_signed(m["min"], 2), N.fmt_signed(m["max"], 2))),))
    return {"lens": [t], "params": [params], "mlp_up": [hidden]}


def _ch04(bundle, words) -> dict[str, list[Table]]:
    f = ch04.vote_facts(bundle)
    decimals = N.prob_decimals([c["prob"] for c in f["top"]])
    top = Table(words.text("kit:table-top", n=N.fmt_int(len(f["top"]))), words.text("kit:table-token"),
                (words.text("kit:table-rank"), words.text("kit:table-probability")),
                tuple((show_token(c["text"]), (N.fmt_int(i + 1), N.fmt_prob(c["prob"], decimals)))
                      for i, c in enumerate(f["top"])), token_rows=True)
    kept = Table(words.text("kit:table-topk", k=N.fmt_int(ch04.TOP_K)), words.text("kit:table-token"),
                 (words.text("kit:table-probability"), words.text("kit:table-share")),
                 tuple((show_token(c["text"]), (N.fmt_prob(c["prob"], decimals), N.fmt_pct(share)))
                       for c, share in zip(f["top"], f["topk"])), token_rows=True)
    n = max(len(t["texts"]) for t in f["temps"])
    temps = Table(words.text("kit:table-temperature"), words.text("kit:table-temperature-col"),
                  tuple(words.text("kit:table-rank-n", n=N.fmt_int(i + 1)) for i in range(n)),
                  tuple((N.fmt_fixed(t["t"], 1), tuple(f"{show_token(x)} {N.fmt_prob(p)}" for x, p in zip(t["texts"], t["probs"])))
                        for t in f["temps"]))
    return {"softmax": [top], "topk": [kept], "temperature": [temps]}


def _ch05(bundle, words) -> dict[str, list[Table]]:
    f = ch05.mask_facts(bundle)
    rows = token_window(bundle.T)
    corner = words.text("kit:table-query-key")
    return {"decoder": [_grid(words.text("kit:table-causal"), corner, f["causal"], bundle.tokens, rows, N.fmt_pct)],
            "encoder": [_grid(words.text("kit:table-full"), corner, f["full"], bundle.tokens, rows, N.fmt_pct)]}


def _ch06(bundle, words) -> dict[str, list[Table]]:
    f = ch06.loop_facts(bundle)
    loop = Table(words.text("kit:table-loop"), words.text("kit:table-pass"),
                 (words.text("kit:table-context"), words.text("kit:table-token"), words.text("kit:table-probability"),
                  words.text("kit:table-full-flops"), words.text("kit:table-cached-flops")),
                 tuple((N.fmt_int(s["index"] + 1), (N.fmt_int(s["context"]), show_token(s["text"]), N.fmt_prob(s["prob"]),
                                                     N.fmt_int(s["full"]), N.fmt_int(s["cached"])))
                       for s in f["steps"]))
    square = Table(words.text("kit:table-square"), words.text("kit:table-context"),
                   (words.text("kit:table-pairs"), words.text("kit:table-grid-flops"), words.text("kit:table-pass-share")),
                   tuple((N.fmt_int(s["tokens"]), (N.fmt_int(s["pairs"]), N.fmt_int(s["grid_flops"]), N.fmt_pct(s["share"])))
                         for s in f["square"]))
    cache = Table(words.text("kit:table-cache"), words.text("kit:table-pass"),
                  (words.text("kit:table-context"), words.text("kit:table-numbers"), words.text("kit:table-bytes")),
                  tuple((N.fmt_int(i + 1), (N.fmt_int(c["tokens"]), N.fmt_int(c["numbers"]), N.fmt_int(c["bytes"])))
                        for i, c in enumerate(f["cache"])))
    return {"loop": [loop], "square": [square], "cache": [cache]}


BUILDERS = {"00": _ch00, "01": _ch01, "02": _ch02, "03": _ch03, "04": _ch04, "05": _ch05, "06": _ch06}


def chapter_tables(chapter: str, bundle, words) -> dict[str, list[Table]]:
    """beat -> the tables of the numbers its picture shows (none for a chapter without them)."""
    build = BUILDERS.get(chapter)
    if build is None:
        return {}
    with N.language(words.lang):
        return build(bundle, words)


def ledger_table(heading: str, rows, words) -> Table:
    """The Σ FLOPs meter as a table: `rows` (step, formula, FLOPs, running total), as
    onepass.film.kit.handout.ledger_rows reads them."""
    with N.language(words.lang):
        return Table(heading, words.text("kit:handout-step"),
                     (words.text("kit:handout-formula"), words.text("kit:handout-flops"), words.text("kit:handout-total")),
                     tuple((s, (f, N.fmt_int(n), N.fmt_int(t))) for s, f, n, t in rows))


def table_html(t: Table, klass: str = "numbers-table") -> str:
    """A real HTML table: its caption, a header row of `<th scope="col">`, each row named by a
    `<th scope="row">`; token names isolated left to right."""
    e = html.escape

    def name(text: str, token: bool) -> str:
        return f'<bdi dir="ltr">{e(text)}</bdi>' if token else e(text)
    head = f'<th scope="col">{e(t.corner)}</th>' + "".join(f'<th scope="col">{name(c, t.token_cols)}</th>'
                                                             for c in t.columns)
    body = "".join(f'<tr><th scope="row">{name(r, t.token_rows)}</th>'
                   + "".join(f"<td><bdi>{e(c)}</bdi></td>" for c in cells) + "</tr>" for r, cells in t.rows)
    return (f'<table class="{klass}"><caption>{e(t.caption)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def table_text(t: Table) -> list[str]:
    """The table as lines of plain text: its caption, then each row as 'name: column value; …'."""
    out = [f"{t.caption}:"]
    for r, cells in t.rows:
        out.append(f"  {r}: " + "; ".join(f"{c} {v}" for c, v in zip(t.columns, cells)))
    return out
