"""A store whose second-model vectors were read from each item's first 128 tokens only (before
0015_deep_windows.sql) gets its long items read again, in windows, in the background; short items
keep the vector they have."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from server.governance.visibility import govern
from server.meaning import deep, minilm
from server.meaning import model as model_mod
from server.store.db import Store
from tests.meaning.old_stores import add_notes, migrated_before
from tests.meaning.test_deep_lane import CRATE, PREAMBLE

TEXTS = [CRATE, PREAMBLE + CRATE]  # one window; two


pytestmark = pytest.mark.usefixtures("second_model")


def store_before_0015(db: Path) -> list[bytes]:
    """Migrations up to 0014, a short and a long note, each with a one-window vector of the second
    model and nothing queued for it; the vectors' blobs."""
    con = migrated_before(db, "0015")
    fact_ids = add_notes(con, [(f"https://site.example/{i}", "note", text) for i, text in enumerate(TEXTS)])
    blobs = model_mod.to_int8(minilm.model().embed(TEXTS))
    for fid, blob in zip(fact_ids, blobs, strict=True):
        con.execute("INSERT INTO deep_fact_vectors(fact_id, model, vec) VALUES (?, ?, ?)", (fid, minilm.NAME, blob))
    con.execute("DELETE FROM deep_queue")  # the second model had read everything, its old way
    con.commit()
    con.close()
    return blobs


async def test_long_items_are_read_again_in_windows_after_the_upgrade(tmp_path: Path) -> None:
    db = tmp_path / "wherefrom.db"
    before = store_before_0015(db)
    store = await Store.open(db)
    executor = ThreadPoolExecutor(max_workers=1)
    try:
        await govern(store)
        queued = await store.fetchall("SELECT q.item, f.text FROM deep_queue q JOIN facts f ON f.id = q.id")
        assert [(r[0], r[1]) for r in queued] == [("fact", TEXTS[1])]  # the long one alone
        lane = deep.DeepLane(store)
        while await lane.step(executor):
            pass
        rows = await store.fetchall("SELECT vec FROM deep_fact_vectors ORDER BY fact_id")
        short, long = (bytes(r[0]) for r in rows)
        assert short == before[0]  # untouched
        assert len(before[1]) == minilm.DIMS and len(long) == 2 * minilm.DIMS  # one window, now two
        # its last window holds the crate paragraph: nearer to a paraphrase of it than its first
        query = minilm.model().embed(["getting a new pup comfortable in its cage"])[0]
        step = minilm.DIMS
        windows = model_mod.from_int8([long[a : a + step] for a in range(0, len(long), step)], step)
        cosines = windows @ query
        assert int(np.argmax(cosines)) == len(cosines) - 1 and cosines[-1] > cosines[0] + 0.2, cosines
        row = await store.fetchone("SELECT COUNT(*) FROM deep_queue")
        assert row is not None and row[0] == 0
    finally:
        executor.shutdown()
        await store.close()
