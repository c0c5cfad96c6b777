"""THE embedding model: WordLlama's static token embeddings (l2_supercat, 256 dimensions),
whose weights and tokenizer ship inside the `wordllama` wheel. Nothing is downloaded, ever:
the files are read from the installed package's folder, found without importing it (its
import configures the root logger and pulls in an HTTP client it would only use to download).

A text's vector is the mean of its tokens' vectors, L2-normalised (what WordLlama's own
`embed` computes, without padding a batch to its longest text), after the table's mean token
vector is taken from every token (`centred`): the direction every text shares is gone, so text
made of everyday words no longer sits near every query (paraphrase recall@10 by meaning alone
0.50 -> 0.62 on bench/bench_search_quality.py, other kinds unchanged; a fixed property of the
model, not of any store). A long text is cut into
windows of WINDOW_TOKENS tokens, at most MAX_WINDOWS of them, each its own vector: the mean
over a whole long chat turn blurs what any one part of it is about.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load_file
from tokenizers import Tokenizer

NAME = "wordllama-l2_supercat-256-centred"  # stored with each vector (0011_centred_vectors.sql)
DIMS = 256
WINDOW_TOKENS = 256
MAX_WINDOWS = 4
TOKENIZED_CHARS = 6_000  # what is tokenized of one text (MAX_WINDOWS windows: ~4,000 characters of prose)
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WORD_START = "\u2581"  # the tokenizer's mark of a token that starts a word ("\u2581week")

Vectors = npt.NDArray[np.float32]


class ModelMissing(RuntimeError):
    pass


def package_dir() -> Path:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing("the wordllama package is not installed (pip install wordllama)")
    return Path(next(iter(spec.submodule_search_locations)))


class Model:
    """Loaded once per process (`model()`); `embed` is thread-safe and CPU-bound: call it off the
    event loop."""

    name = NAME
    dims = DIMS

    def __init__(self, root: Path | None = None) -> None:
        root = root or package_dir()
        weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
        if not weights.is_file() or not tokenizer.is_file():
            raise ModelMissing(f"the model files are not in {root}")
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        table = load_file(str(weights))["embedding.weight"]
        self.weights: Vectors = centred(np.ascontiguousarray(table[:, :DIMS], dtype=np.float32))

    def _ids(self, texts: list[str]) -> list[list[int]]:
        encoded = self.tokenizer.encode_batch([t[:TOKENIZED_CHARS] for t in texts], add_special_tokens=False)
        return [e.ids for e in encoded]

    def embed(self, texts: list[str]) -> Vectors:
        """One unit vector per text (the whole text, up to WINDOW_TOKENS * MAX_WINDOWS tokens);
        a text with no token gets the zero vector."""
        return self._pool([ids[: WINDOW_TOKENS * MAX_WINDOWS] for ids in self._ids(texts)])

    def embed_windows(self, texts: list[str]) -> list[Vectors]:
        """Per text, one unit vector per window of WINDOW_TOKENS tokens (at most MAX_WINDOWS; a
        short last window joins the one before it); none for a text with no token."""
        pieces: list[list[int]] = []
        owners: list[int] = []
        for n, ids in enumerate(self._ids(texts)):
            ids = ids[: WINDOW_TOKENS * MAX_WINDOWS]
            starts = list(range(0, len(ids), WINDOW_TOKENS))
            if len(starts) > 1 and len(ids) - starts[-1] < WINDOW_TOKENS // 4:
                starts.pop()
            for i, s in enumerate(starts):
                end = starts[i + 1] if i + 1 < len(starts) else len(ids)
                pieces.append(ids[s:end])
                owners.append(n)
        pooled = self._pool(pieces)
        out: list[Vectors] = [np.zeros((0, DIMS), np.float32) for _ in texts]
        if pieces:
            bounds = np.searchsorted(np.array(owners), np.arange(len(texts) + 1))
            out = [pooled[bounds[n] : bounds[n + 1]] for n in range(len(texts))]
        return out

    def _pool(self, pieces: list[list[int]]) -> Vectors:
        # one small gather per piece: a gather of the whole batch's tokens at once (then
        # np.add.reduceat) moves hundreds of MB and is ~10x slower
        out = np.zeros((len(pieces), DIMS), np.float32)
        top = self.weights.shape[0] - 1
        for n, ids in enumerate(pieces):
            if ids:
                rows = np.clip(np.asarray(ids, dtype=np.int64), 0, top)
                out[n] = self.weights.take(rows, axis=0).sum(axis=0)
        return _unit(out)


def centred(table: Vectors) -> Vectors:
    """The token table less its mean token vector, in place (the common direction of all text)."""
    table -= table.mean(axis=0, dtype=np.float64).astype(np.float32)
    return table


def _unit(rows: Vectors) -> Vectors:
    """Rows scaled to length 1, in place (a zero row stays zero)."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows


_lock = threading.Lock()
_model: Model | None = None


def model() -> Model:
    """The process's one model, loaded on first use (~0.2 s, ~35 MB)."""
    global _model
    with _lock:
        if _model is None:
            _model = Model()
        return _model


def whole_word(word: str) -> bool:
    """Whether the word is one token of the model's vocabulary, as a word after a space: one of
    the ~32k most frequent pieces of the text it was trained on, so a word of the language and
    not a misspelling (server.memory.typos corrects only words that are not). False when the
    model is not installed or does not load: search by words goes on, correcting every word."""
    try:
        tokenizer = model().tokenizer
    except Exception:  # noqa: BLE001 - the meaning lane reports why (server.meaning.embedder)
        return False
    return tokenizer.token_to_id(_WORD_START + word) is not None


def sign_bits(vectors: Vectors) -> list[bytes]:
    """Each vector's signs, 256 bits packed in 32 bytes (what the in-memory index scans)."""
    return [row.tobytes() for row in np.packbits(vectors > 0, axis=1)]


def sign_estimates(bits: npt.NDArray[np.uint8], query: Vectors) -> Vectors:
    """Each vector's signs (rows of `bits`, as sign_bits packs them; a sign is +1 or -1) dotted
    with the query itself: an estimate of the vector's cosine to the query that weighs each
    dimension by the query's own value there, where the Hamming distance of the two sign bits
    weighs all alike (an asymmetric distance)."""
    signs = np.unpackbits(bits, axis=1)[:, : len(query)].astype(np.float32)
    out: Vectors = signs @ (2 * query) - float(query.sum())
    return out


def to_int8(vectors: Vectors) -> list[bytes]:
    """Each vector scaled so its largest component is 127, as int8 (what reranks: cosine is
    unchanged by the scale, and the rounding moves it by < 0.01)."""
    peak = np.maximum(np.abs(vectors).max(axis=1, keepdims=True), 1e-12)
    return [row.tobytes() for row in np.round(vectors / peak * 127).astype(np.int8)]


def from_int8(blobs: list[bytes], dims: int = DIMS) -> Vectors:
    """Unit vectors back from `to_int8` blobs (of `dims` components: server.meaning.minilm's too)."""
    if not blobs:
        return np.zeros((0, dims), np.float32)
    out = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), dims).astype(np.float32)
    return _unit(out)
