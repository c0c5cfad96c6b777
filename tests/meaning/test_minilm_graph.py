"""The second model's quantised graph (server.meaning.minilm.graph_file, what the server runs)
reads texts as the full-float graph of the same weights does: cosine >= 0.99 a text, on prose,
code, a Japanese sentence, a one-word query and a window of the full 128 tokens; a graph built
anew removes the model's graphs of an older rounding from the cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from server.meaning import minilm

pytest.importorskip("onnxruntime")
if not minilm.available():
    pytest.skip("the second model is not installed", allow_module_level=True)

TEXTS = [
    "getting a new pup comfortable in its cage",
    "Crate training: make the crate a happy place, feed the puppy's meals inside it.",
    "def merge(a, b):\n    return {**a, **b}  # the right one wins",
    "東京の天気は明日も雨になるでしょう",
    "sourdough",
    "The committee postponed the vote on the budget until the auditors had finished. " * 9,
    "SELECT COUNT(*) FROM deep_fact_vectors WHERE fact_id = ?;",
    "How do I stop my bike chain from slipping when I climb a hill?",
]


def _full_float_session() -> Any:
    import onnxruntime as ort  # type: ignore[import-untyped]
    from safetensors.numpy import load_file

    from server.meaning import minilm_graph

    weights = load_file(str(minilm.model_dir() / "model.safetensors"))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(minilm_graph.build(weights), options, providers=["CPUExecutionProvider"])


def test_the_quantised_graph_reads_as_full_floats_do() -> None:
    model = minilm.model()
    session = _full_float_session()
    quantised = model.embed(TEXTS)
    full = np.zeros_like(quantised)
    for n, encoding in enumerate(model.tokenizer.encode_batch(TEXTS)):
        row = np.asarray([encoding.ids], np.int64)
        (vector,) = session.run(["sentence_embedding"], {"input_ids": row, "attention_mask": np.ones_like(row)})
        full[n] = vector[0]
    assert len(model.tokenizer.encode(TEXTS[5]).ids) == minilm.MAX_TOKENS  # a whole window is read
    cosines = (quantised * full).sum(axis=1)
    assert cosines.min() >= 0.99, dict(zip(TEXTS, cosines.round(4).tolist(), strict=True))
    # control: the measure tells another text's vector from the text's own
    assert (quantised * np.roll(full, 1, axis=0)).sum(axis=1).max() < 0.9


def test_a_graph_built_anew_removes_the_older_roundings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    models = minilm.cache_dir()
    assert models.is_relative_to(tmp_path)
    models.mkdir(parents=True)
    older = models / f"{minilm.NAME}-{minilm.WEIGHTS_SHA256[:16]}-int8.onnx"  # before 7 bits
    other = models / "another-model-int8.onnx"
    for path in (older, other):
        path.write_bytes(b"an older graph")
    built = minilm.graph_file()
    assert built.parent == models and built.stat().st_size > 10_000_000
    assert sorted(p.name for p in models.iterdir()) == sorted([built.name, other.name])
    assert minilm.graph_file() == built  # and the next call uses the graph now there
