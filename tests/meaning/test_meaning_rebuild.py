"""A store whose vectors an older model wrote gets them rebuilt by the current one
(0011_centred_vectors.sql queues them again; server.meaning.embedder replaces them item by item),
and the current model's vectors are those of the centred token table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

from server.governance.visibility import govern
from server.meaning import model as model_mod
from server.meaning.embedder import Embedder
from server.meaning.items import item_text
from server.store.db import Store
from tests.meaning.old_stores import add_notes, migrated_before

OLD_MODEL = "wordllama-l2_supercat-256"
TEXTS = ["Crate training for a new puppy, short stays at first.", "Feed the sourdough starter every day."]


def store_before_0011(db: Path) -> None:
    """Migrations up to 0010, two notes and a document chunk embedded by the old model."""
    con = migrated_before(db, "0011")
    fact_ids = add_notes(con, [(f"https://site.example/{i}", "note", text) for i, text in enumerate(TEXTS)])
    old = np.ones((1, model_mod.DIMS), np.float32) / np.sqrt(model_mod.DIMS)  # not any text's vector
    for n, fid in enumerate(fact_ids, 1):
        con.execute(
            "INSERT INTO vectors(id, fact_id, chunk_id, seq, model, bits, vec) VALUES (?, ?, NULL, 0, ?, ?, ?)",
            (n, fid, OLD_MODEL, model_mod.sign_bits(old)[0], model_mod.to_int8(old)[0]),
        )
    con.execute("DELETE FROM embed_queue")  # the old model had embedded everything
    con.commit()
    con.close()


async def test_vectors_of_an_older_model_are_rebuilt_by_the_current_one(tmp_path: Path) -> None:
    db = tmp_path / "wherefrom.db"
    store_before_0011(db)
    store = await Store.open(db)
    try:
        await govern(store)
        queued = await store.fetchall("SELECT item, id FROM embed_queue ORDER BY id")
        assert [tuple(r) for r in queued] == [("fact", 1), ("fact", 2)]  # both queued again
        embedder = Embedder(store)
        try:
            await embedder.drain()
        finally:
            await embedder.stop()
        rows = await store.fetchall(
            "SELECT f.text, v.model, v.vec FROM vectors v JOIN facts f ON f.id = v.fact_id ORDER BY f.id"
        )
        assert [(r["text"], r["model"]) for r in rows] == [(t, model_mod.NAME) for t in TEXTS]
        stored = model_mod.from_int8([r["vec"] for r in rows])
        wanted = model_mod.model().embed([item_text("", t) for t in TEXTS])
        assert np.all(np.sum(stored * wanted, axis=1) > 0.99)  # the text's own vector, not the old one
        assert (await store.fetchone("SELECT COUNT(*) FROM embed_queue"))[0] == 0  # type: ignore[index]
    finally:
        await store.close()


def test_the_model_takes_the_common_direction_out_of_its_token_table() -> None:
    table = load_file(str(model_mod.package_dir() / "weights/l2_supercat_256.safetensors"))["embedding.weight"]
    assert float(np.linalg.norm(table.mean(axis=0))) > 0.5  # control: the wheel's own table is not centred
    assert float(np.linalg.norm(model_mod.model().weights.mean(axis=0))) < 1e-4
