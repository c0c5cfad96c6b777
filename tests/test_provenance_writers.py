"""Every writer of a stored item goes through the one stamp (server.provenance.stamp).

The item tables are found, not listed: every table the migrations create with source_url,
source_host and source_ref columns. Then every SQL statement in server/**/*.py that INSERTs
into one of them (or UPDATEs a source column of one) is traced to the functions that run it —
the function holding the string, or every function naming the module constant holding it —
and each such function must call stamp() or take a Provenance argument. A synthetic writer
that skips the stamp proves the check can fail. A behavioural test then sends a messy URL to
every write route and reads the normalised one back from every item table.
"""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

from server.store.db import _statements, migration_files
from tests.conftest import Api

SERVER = Path(__file__).resolve().parent.parent / "server"
SOURCE_COLUMNS = ("source_url", "source_host", "source_ref")


def item_tables() -> set[str]:
    con = sqlite3.connect(":memory:")
    for _name, sql in migration_files():
        for statement in _statements(sql):
            con.execute(statement)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = set()
    for table in tables:
        columns = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
        if set(SOURCE_COLUMNS) <= columns:
            found.add(table)
    return found


def writes_items(sql: str, tables: set[str]) -> bool:
    """Does this SQL insert into an item table, or set a source column of one?"""
    text = " ".join(sql.split())
    names = "|".join(re.escape(t) for t in sorted(tables, key=len, reverse=True))
    if re.search(rf"\b(?:INSERT|REPLACE)\s+(?:OR\s+\w+\s+)?INTO\s+[\"`\[]?(?:{names})\b", text, re.I):
        return True
    for m in re.finditer(rf"\bUPDATE\s+(?:OR\s+\w+\s+)?[\"`\[]?(?:{names})\b[\"`\]]?\s+SET\s+(.*)", text, re.I):
        assignments = re.split(r"\b(?:WHERE|FROM|RETURNING)\b", m.group(1), maxsplit=1, flags=re.I)[0]
        if re.search(r"\bsource_(?:url|host|ref)\b\s*=", assignments, re.I):
            return True
    return False


def _strings(node: ast.AST) -> list[str]:
    """The SQL text of a string literal, an f-string's literal parts, or a concatenation."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else " ? " for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _strings(node.left), _strings(node.right)
        return [a + b for a in left or [""] for b in right or [""]] if (left or right) else []
    return []


def _stamps(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for arg in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
        ann = arg.annotation
        if ann is not None and "Provenance" in ast.unparse(ann):
            return True
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == "stamp") or (isinstance(f, ast.Attribute) and f.attr == "stamp"):
                return True
    return False


def unstamped_writers(sources: dict[str, str], tables: set[str]) -> tuple[list[str], list[str]]:
    """(writers found, writers that skip the stamp), each as 'module:function'."""
    trees = {name: ast.parse(src) for name, src in sources.items()}
    constants: set[str] = set()  # module-level names bound to writer SQL
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(writes_items(s, tables) for s in _strings(node.value)):
                    constants.update(t.id for t in targets if isinstance(t, ast.Name))
    found, bad = [], []
    for name, tree in trees.items():
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            writes = False
            for node in ast.walk(fn):
                if any(writes_items(s, tables) for s in _strings(node)):
                    writes = True
                elif isinstance(node, ast.Name) and node.id in constants:
                    writes = True
                elif isinstance(node, ast.Attribute) and node.attr in constants:
                    writes = True
            if writes:
                found.append(f"{name}:{fn.name}")
                if not _stamps(fn):
                    bad.append(f"{name}:{fn.name}")
    # innermost functions decide: a nested helper is checked on its own, so drop duplicates
    return sorted(set(found)), sorted(set(bad))


def server_sources() -> dict[str, str]:
    return {str(p.relative_to(SERVER.parent)): p.read_text("utf-8") for p in sorted(SERVER.rglob("*.py"))}


def test_item_tables_are_found_from_the_migrations() -> None:
    tables = item_tables()
    assert {"facts", "conversations"} <= tables
    assert "activity" not in tables  # a log with a URL, not a stored item


def test_every_writer_of_an_item_table_stamps() -> None:
    found, bad = unstamped_writers(server_sources(), item_tables())
    assert "server/memory/facts.py:insert_fact" in found
    assert "server/memory/captures.py:conversation_row" in found
    assert bad == [], f"writers that skip provenance.stamp: {bad}"


def test_no_trigger_writes_an_item_table() -> None:
    """A trigger would be a writer outside Python that no stamp can reach."""
    tables = item_tables()
    for name, sql in migration_files():
        for statement in _statements(sql):
            if statement.upper().startswith("CREATE TRIGGER"):
                body = statement.split("BEGIN", 1)[1]
                assert not writes_items(body, tables), f"{name}: a trigger writes an item table"


SYNTHETIC = {
    "server/evil.py": """
INSERT_SQL = "INSERT INTO facts(kind, text, source_url, source_host, source_ref) VALUES (?, ?, ?, ?, ?)"

async def sneaky_note(conn, url, text):
    await conn.execute(INSERT_SQL, ("note", text, url, url, ""))

async def sneaky_inline(conn, url):
    await conn.execute(f"INSERT OR REPLACE INTO document_chunks(source_url) VALUES ('{url}')")

async def sneaky_update(conn, url):
    await conn.execute("UPDATE facts SET source_url = ? " + "WHERE id = 1", (url,))

async def harmless_update(conn):
    await conn.execute("UPDATE facts SET invalid_at = 1 WHERE source_host = 'a' AND source_url = 'b'")

async def good(conn, url):
    prov = stamp(url, "t")
    await conn.execute(INSERT_SQL, ("note", "x", prov.source_url, prov.source_host, prov.source_ref))

async def good_param(conn, prov: Provenance):
    await conn.execute("INSERT INTO conversations(source_url) VALUES (?)", (prov.source_url,))
""",
}


def test_the_check_fails_on_a_writer_that_skips_the_stamp() -> None:
    found, bad = unstamped_writers(SYNTHETIC, {"facts", "conversations", "document_chunks"})
    assert bad == ["server/evil.py:sneaky_inline", "server/evil.py:sneaky_note", "server/evil.py:sneaky_update"]
    assert "server/evil.py:good" in found and "server/evil.py:good_param" in found
    assert "server/evil.py:harmless_update" not in found


MESSY = "HTTPS://Example.COM:443/a/?utm_source=x#f"
CLEAN = "https://example.com/a"


@pytest.mark.parametrize(
    "route,body",
    [
        ("/api/notes", {"url": MESSY, "title": "t", "text": "note"}),
        ("/api/clips", {"url": MESSY, "title": "t", "text": "clip"}),
        ("/api/captures", {"url": MESSY, "title": "t", "site": "x", "turns": [{"role": "user", "text": "hi"}]}),
        ("/api/library/add_text", {"url": MESSY, "title": "t", "text": "A saved page about provenance. " * 30}),
    ],
)
async def test_every_write_route_stores_the_normalised_url(api: Api, route: str, body: dict[str, object]) -> None:
    status, answer = await api.post(route, body)
    assert status in (200, 201), answer
    rows = 0
    for table in sorted(item_tables()):
        for r in await api.store.fetchall(f"SELECT source_url, source_host FROM {table}"):  # noqa: S608
            assert (r["source_url"], r["source_host"]) == (CLEAN, "example.com"), table
            rows += 1
    assert rows >= 1


def test_index_tables_hold_no_provenance_of_their_own() -> None:
    """The vectors table indexes items (like FTS): a vector's provenance is its item's stamp,
    read by joining back, so there is no second copy that could disagree with the stamp."""
    from tests.test_visibility_readers import index_tables

    con = sqlite3.connect(":memory:")
    for _name, sql in migration_files():
        for statement in _statements(sql):
            con.execute(statement)
    indexes = index_tables()
    assert "vectors" in indexes
    for table in indexes:
        columns = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
        assert not columns & set(SOURCE_COLUMNS), table


@pytest.mark.parametrize(
    "route,body",
    [
        ("/api/notes", {"url": MESSY, "title": "t", "text": "a note about provenance"}),
        ("/api/captures", {"url": MESSY, "title": "t", "site": "x", "turns": [{"role": "user", "text": "hi there"}]}),
        ("/api/library/add_text", {"url": MESSY, "title": "t", "text": "A saved page about provenance. " * 30}),
    ],
)
async def test_every_vector_belongs_to_a_stamped_item(api: Api, route: str, body: dict[str, object]) -> None:
    status, answer = await api.post(route, body)
    assert status in (200, 201), answer
    await api.get("/api/search", params={"q": "provenance"})  # waits for the embedder to catch up
    rows = await api.store.fetchall(
        "SELECT COALESCE(f.source_url, c.source_url) AS url, COALESCE(f.source_host, c.source_host) AS host "
        "FROM vectors v LEFT JOIN facts f ON f.id = v.fact_id LEFT JOIN document_chunks c ON c.id = v.chunk_id"
    )
    assert rows and all((r["url"], r["host"]) == (CLEAN, "example.com") for r in rows)
