"""The fusion lab: ranking rules tried offline on a store of bench_search_quality.py, over every item
(no candidate window, no server): each query's cosine to each item's nearest window by the static
model, the second model and, with --e5, multilingual-e5-small (server.meaning.e5); then, per rule
below, recall@1/5/10 of the target URL for each query set and kind, the held-out queries whose
target is in another language (`target_language`) apart as `cross-language`.

    .venv/bin/python bench/bench_search_quality.py --data-dir D --seed 5 --repeat 0   # the store
    .venv/bin/python bench/fusion_lab.py D [--e5]

The e5 vectors are computed once (~5 min for the store's ~11k items, one thread) and kept beside
the store (D/wherefrom.db.e5s.npz). Rules use `deep.mixed` as served; "reads" is the second model's
rule for queries (`deep.reads`: the share of words its vocabulary holds, at least KNOWN_WORDS)
applied to each item's text; e5's cosine is put on the static model's scale by each query's median
and 95th percentile (its noise) under each model: over all items ("this query's"), fixed, or (as
served: server.meaning.scale) over both models' windows of scale.SAMPLE items picked at random,
SAMPLES times.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.memory_store import install_visibility  # noqa: E402
from server.governance.visibility import visible  # noqa: E402
from server.meaning import deep, e5, minilm  # noqa: E402
from server.meaning import model as model_mod  # noqa: E402
from server.meaning import scale as scale_mod  # noqa: E402
from server.meaning.items import item_text  # noqa: E402

Arr = np.ndarray
SAMPLES = 5  # random samples of the served scale's kind, each a rule
# every stored window of each model, by item kind (for `stored`)
STATIC_SQL = {
    "f": "SELECT fact_id, vec FROM vectors WHERE fact_id IS NOT NULL",
    "c": "SELECT chunk_id, vec FROM vectors WHERE chunk_id IS NOT NULL",
}
DEEP_SQL = {"f": "SELECT fact_id, vec FROM deep_fact_vectors", "c": "SELECT chunk_id, vec FROM deep_chunk_vectors"}


def items(con: sqlite3.Connection) -> list[tuple[str, int, str, str]]:
    """(kind, id, text, url) of every fact and library chunk a search may show."""
    install_visibility(con)  # through the one visibility rule, under the default policy, as served
    facts = f"SELECT f.id, f.title, f.text, f.source_url FROM facts f WHERE {visible('facts', 'f')}"  # noqa: S608
    chunks = (
        "SELECT c.id, d.title, c.text, d.source_url FROM document_chunks c JOIN documents d ON d.id = c.document_id "  # noqa: S608
        f"WHERE {visible('document_chunks', 'c')} AND {visible('documents', 'd')}"
    )
    out = [("f", i, item_text(t, x), u) for i, t, x, u in con.execute(facts)]
    out += [("c", i, item_text(t, x), u) for i, t, x, u in con.execute(chunks)]
    return out


def stored(
    con: sqlite3.Connection, rows: list[tuple[str, int, str, str]], sql: dict[str, str], dims: int
) -> tuple[Arr, Arr]:
    """(owner row, unit vector) of every stored window of the rows' items."""
    at = {(k, i): n for n, (k, i, _t, _u) in enumerate(rows)}
    owners, vecs = [], []
    for kind, q in sql.items():
        for item, blob in con.execute(q):
            if (kind, item) in at:
                w = np.frombuffer(blob, np.int8).reshape(-1, dims).astype(np.float32)
                owners += [at[(kind, item)]] * len(w)
                vecs.append(w / np.linalg.norm(w, axis=1, keepdims=True))
    return np.array(owners), np.concatenate(vecs)


def e5_vectors(rows: list[tuple[str, int, str, str]], cache: Path) -> tuple[Arr, Arr]:
    """Every item's e5 passage vectors, one per window of the second model's (cached)."""
    if not cache.exists():
        owners, vecs = [], []
        for n, (_k, _i, text, _u) in enumerate(rows):
            for window in e5.model().passages(minilm.model().window_texts(text)):
                vecs.append(window)
                owners.append(n)
        np.savez(cache, owners=np.array(owners), vecs=np.array(vecs, np.float32))
    z = np.load(cache)
    return z["owners"], z["vecs"]


def best(owners: Arr, cosines: Arr, n: int) -> Arr:
    out = np.full(n, -2.0, np.float32)
    np.maximum.at(out, owners, cosines)
    return out


def rank_of(urls: Arr, score: Arr, target: str) -> int:
    seen: list[str] = []
    for u in urls[np.argsort(-score, kind="stable")[:800]]:
        if u not in seen:
            seen.append(u)
        if u == target:
            return len(seen)
    return 999


def served(s: Arr, d: Arr | None) -> Arr:
    """deep.mixed item by item; an item with no vector of the second model (-2) by the static alone."""
    if d is None:
        return s
    mixed = np.vectorize(deep.mixed)(s, d).astype(np.float32)
    return np.where(d < -1.5, s, mixed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--e5", action="store_true", help="adds the rules of the third voice's model")
    args = ap.parse_args()
    db = args.data_dir / "wherefrom.db"
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = items(con)
    urls = np.array([u for _k, _i, _t, u in rows])
    so, sv = stored(con, rows, STATIC_SQL, model_mod.DIMS)
    do, dv = stored(con, rows, DEEP_SQL, minilm.DIMS)
    mini = minilm.model()
    reads = np.array([deep.reads(t[: minilm.ITEM_CHARS]) for _k, _i, t, _u in rows])  # its rule for queries
    third = e5_vectors(rows, Path(f"{db}.e5s.npz")) if args.e5 else None
    n = len(rows)
    print(f"{n} items; {int((~reads).sum())} the second model does not read; e5 {'on' if third is not None else 'off'}")
    # (query set, query, static, second model, e5: each item's nearest window's cosine; then the
    # static model's and e5's cosine to each window)
    asked = []
    for name in ("search_queries.json", "search_queries_heldout.json"):
        for q in json.loads((REPO / "bench" / name).read_text("utf-8"))["queries"]:
            sw = sv @ model_mod.model().embed([q["q"]]).reshape(-1)  # its cosine to each window
            ew = third[1] @ e5.model().query(q["q"]) if third is not None else None
            s = best(so, sw, n)
            d = best(do, dv @ mini.embed([q["q"]])[0], n) if deep.reads(q["q"]) else None
            e = best(third[0], ew, n) if third is not None and ew is not None else None
            asked.append((name.split("_")[-1], q, s, d, e, sw, ew))

    # each model's noise: a query's median and 95th percentile over the items, and the medians of
    # those over the queries (the fixed scale a server could use, knowing no query's distribution)
    def noise(x: Arr) -> tuple[float, float]:
        return float(np.median(x)), float(np.percentile(x, 95))

    fixed = None
    if third is not None:
        fixed = tuple(tuple(np.median([noise(a[k]) for a in asked], axis=0).tolist()) for k in (2, 4))
        (sm, sp), (em, ep) = fixed
        print(f"noise median / p95: static {sm:.3f} / {sp:.3f}, e5 {em:.3f} / {ep:.3f}")
    table: dict[tuple[str, str, str], list[int]] = {}
    rng = np.random.default_rng(0)
    samples = []  # each: the static and e5 windows of scale.SAMPLE items picked at random
    for _k in range(SAMPLES if third is not None else 0):
        items_picked = rng.choice(n, scale_mod.SAMPLE, replace=False)
        samples.append((np.isin(so, items_picked), np.isin(third[0], items_picked)))
    for qs, q, s, d, e, sw, ew in asked:
        base = served(s, d)
        rules: dict[str, Arr] = {"served": base}
        if e is not None:
            dd = d if d is not None else s
            scales = [
                ("this query's", (noise(s), noise(e))),
                ("fixed", fixed),
                # what a server knew: e5's cosines to the items it reads (those the second model does not)
                ("fixed static, e5 of its items", (fixed[0], noise(e[~reads]))),
            ]
            # what it knows now (server.meaning.scale): both models' windows of the same random items
            for k, picked in enumerate(samples):
                scales.append(
                    (f"sample {k + 1} of {scale_mod.SAMPLE} items", (noise(sw[picked[0]]), noise(ew[picked[1]])))
                )
            for scale, ((sm, sp), (em, ep)) in scales:
                e_on_s = sm + (e - em) * (sp - sm) / (ep - em)  # e5's cosine on the static model's scale
                rules[f"mean(e5, second), {scale}"] = np.where(reads, base, (e_on_s + dd) / 2)
                rules[f"e5 alone, {scale}"] = np.where(reads, base, e_on_s)
                if scale.startswith("fixed static"):
                    for w in (0.6, 0.7, 0.8):  # e5 weighed more than the second model
                        rules[f"{w} e5 + {1 - w:.1f} second, {scale}"] = np.where(
                            reads, base, w * e_on_s + (1 - w) * dd
                        )
        group = "cross-language" if q.get("target_language") else q["kind"]
        for rule, score in rules.items():
            table.setdefault((qs, group, rule), []).append(rank_of(urls, score, q["target"]))
    for (qs, group, rule), ranks in sorted(table.items()):
        r = np.array(ranks)
        print(f"{qs:<13} {group:<15} {rule:<48} n {len(r):3d}  r@1 {(r <= 1).mean():.2f}  "
              f"r@5 {(r <= 5).mean():.2f}  r@10 {(r <= 10).mean():.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
