"""Every reader of a stored item goes through the one visibility rule
(server.governance.visibility.visible: not forgotten, host not `off` now).

The item tables are found, not listed: every table the migrations create with a `source_host`
column, and the full-text tables over them. Then every SQL string in server/**/*.py that SELECTs
from one of them is checked: each item table it names (with its alias) must carry the clause
built by `visible(table, alias)` in the same SQL expression (an f-string field, or a module
constant bound to a visible() call); a full-text table must be joined back to its content table
in the same statement. The few readers that must see everything (forget counting what it will
hide, a writer finding the row it updates) are listed below, each with its reason. The rule's
one variant, `visible(table, alias, include_off=...)` (the export's --include-off: site mode not
asked, forgotten rows still kept back), counts only in the readers listed in INCLUDE_OFF; anywhere
else it is a bypass. A synthetic module of bad readers proves the check can fail.
"""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

from server.governance.visibility import FTS_TABLES, INDEX_TABLES, ITEM_TABLES
from server.store.db import _statements, migration_files

SERVER = Path(__file__).resolve().parent.parent / "server"

# module:function (or module:CONSTANT) -> why it may read hidden rows. Nothing here answers a
# client with an item it reads.
NOT_READERS = {
    "server/memory/forget.py:COUNT_LIVE": "forget counts every live fact of the host it will hide, off or not",
    "server/library/queries.py:count_for_host": "forget's dry run counts the live documents it may hide, off or not",
    "server/memory/forget.py:HIDE_CHUNKS": "forget hides the chunks of the documents its batch hid; returns no item",
    "server/memory/coverage.py:COUNT_SQL": "counts FTS hits to choose a query plan; returns no item",
    "server/memory/captures.py:write_turns": "the capture writer lines up incoming turns with the stored ones",
    "server/memory/versions.py:write_thread": "the import writer matches a placed thread's turns to the stored ones",
    "server/memory/captures.py:conversation_row": "the capture writer finds the conversation row it updates",
    "server/memory/search.py:_CHUNK_COUNT_SQL": "whether the library holds a typed word (spelling); no item",
    "server/memory/coverage.py:_TERM_IDS_SQL": "a term's rowids, to count and order; items are read through the rule",
    "server/memory/coverage.py:_RANKS_SQL": "bm25 of the any-term hits, to order; items are read through the rule",
    "server/library/queries.py:_CHUNK_HOLDS_TERM": "whether a chunk holds a term; search_chunks reads the chunk",
    "server/memory/captures.py:_record": "the capture writer finds the activity row it coalesces into",
    "server/library/pipeline.py:store_document": "the library writer finds the document it replaces",
    "server/dataio/importer.py:import_batch": "the import writer finds a note or clip it already holds (forgotten too)",
    "server/dataio/importer.py:_stored": "the import writer finds which conversation rows of a batch it adds to",
    "server/dataio/importer.py:_record": "the import writer finds its own activity row to add the next batch to",
    "server/dataio/export.py:_left_out": "counts, per host, what the export leaves out (site off); no item",
    "server/library/pipeline.py:delete_document": "an explicit removal by id reads the row it removes",
    "server/meaning/items.py:TEXT_SQL": "the builds read every queued item's text (hidden too: a forget can be undone)",
    "server/meaning/embedder.py:_write": "the vector writer reads the largest vector id to number new rows",
    "server/meaning/embedder.py:_LOAD_SQL": "loads vector ids and bits into the index; answers no item",
    "server/meaning/lane.py:_VECTORS_SQL": "ranks candidates by their vectors; their items are read through the rule",
    "server/meaning/deep.py:_VECTORS_SQL": "the second model's vectors of candidate items, to rescore; no item",
    "server/meaning/partitions.py:_VECTORS_SQL": "trains and assigns partitions from vectors; answers no item",
    "server/meaning/deep.py:_LOAD_SQL": "loads the second model's window bits into its own scan; answers no item",
    "server/meaning/deep.py:_COUNT_SQL": "counts the second model's vectors (its scan keeps at most so many)",
    "server/meaning/third.py:_VECTORS_SQL": "the third voice's vectors of candidates, to score them; no item",
    "server/meaning/third.py:_LOAD_SQL": "loads the third voice's window bits into its own scan; answers no item",
    "server/meaning/third.py:_COUNT_SQL": "counts the third voice's vectors (its scan keeps at most so many)",
    "server/meaning/lane.py:_ITEM_VECTORS_SQL": "static vectors of the second model's own candidates; no item",
    "server/meaning/scale.py:_ITEMS_SQL": "the items of a random sample of vectors, for the scale; answers no item",
    "server/meaning/scale.py:_STATIC_SQL": "the static vectors of sampled items read as visible; a statistic",
    "server/store/upgrades.py:reindex_unspaced": "a migration step rewrites the indexed form of every row, hidden too",
}


def index_tables() -> dict[str, set[str]]:
    """{table: the item tables it indexes}: every table without provenance of its own whose
    foreign keys point at item tables (the vectors of facts and chunks)."""
    con = sqlite3.connect(":memory:")
    for _name, sql in migration_files():
        for statement in _statements(sql):
            con.execute(statement)
    items = {t for t, c in item_tables().items() if t == c}
    found: dict[str, set[str]] = {}
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if table in items:
            continue
        targets = {r[2] for r in con.execute(f"PRAGMA foreign_key_list({table})")} & items
        if targets:
            found[table] = targets
    return found


# module:function -> why it may use visible(..., include_off=...): items of `off` sites only
# when the person asks for them, never forgotten ones
INCLUDE_OFF = {
    f"server/dataio/export.py:{reader}": "the export's --include-off"
    for reader in ("_total", "_conversations", "_facts", "_documents")
}


def item_tables() -> dict[str, str]:
    """{table: content table} for every item table (itself) and full-text table (its content)."""
    con = sqlite3.connect(":memory:")
    for _name, sql in migration_files():
        for statement in _statements(sql):
            con.execute(statement)
    found: dict[str, str] = {}
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"):
        columns = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
        if "source_host" in columns:
            found[table] = table
    for name, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'"):
        for table in list(found):
            if found[table] == table and re.search(rf"\bFROM\s+{table}\b", sql, re.I):
                found[name] = table  # a view over an item table (facts_search) is read through it too
    for name, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'"):
        m = re.search(r"content\s*=\s*'?(\w+)'?", sql)
        if m and m.group(1) in found:
            found[name] = found[m.group(1)]
    return found


_KEYWORDS = {
    "WHERE",
    "ON",
    "JOIN",
    "LEFT",
    "INNER",
    "CROSS",
    "NATURAL",
    "ORDER",
    "GROUP",
    "LIMIT",
    "USING",
    "UNION",
    "AND",
    "OR",
}


def references(sql: str, tables: dict[str, str] | set[str]) -> list[tuple[str, str]]:
    """(table, alias) of every item or full-text table a SELECT names after FROM / JOIN."""
    text = " ".join(sql.split())
    if not re.search(r"\bSELECT\b", text, re.I):
        return []
    names = "|".join(re.escape(t) for t in sorted(tables, key=len, reverse=True))
    out = []
    for m in re.finditer(
        rf"\b(?:FROM|JOIN)\s+[\"`\[]?({names})\b[\"`\]]?(?=(?:\s+(?:AS\s+)?([A-Za-z_]\w*))?)", text, re.I
    ):
        table, alias = m.group(1), m.group(2)
        if alias is None or alias.upper() in _KEYWORDS:
            alias = table
        out.append((table, alias))
    return out


Mark = tuple[str, str, bool]  # (table, alias, the include_off variant)


def _visible_call(node: ast.AST) -> Mark | None:
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        args = node.args
        keywords = {k.arg for k in node.keywords}
        if (
            name == "visible"
            and len(args) == 2
            and all(isinstance(a, ast.Constant) for a in args)
            and keywords <= {"include_off"}
        ):
            return (str(args[0].value), str(args[1].value), bool(keywords))  # type: ignore[attr-defined]
    return None


class _Sql:
    """The text of a string expression and the visible() clauses inside it."""

    def __init__(self, text: str, marks: set[Mark]) -> None:
        self.text, self.marks = text, marks


def _sql(node: ast.AST, constants: dict[str, Mark]) -> _Sql | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _Sql(node.value, set())
    if isinstance(node, ast.JoinedStr):
        text, marks = "", set()
        for v in node.values:
            if isinstance(v, ast.Constant):
                text += str(v.value)
                continue
            assert isinstance(v, ast.FormattedValue)
            text += " ? "
            inner = v.value
            mark = _visible_call(inner)
            if mark is None and isinstance(inner, ast.Name):
                mark = constants.get(inner.id)
            if mark is not None:
                marks.add(mark)
        return _Sql(text, marks)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _sql(node.left, constants), _sql(node.right, constants)
        if left is None and right is None:
            return None
        left, right = left or _Sql("", set()), right or _Sql("", set())
        return _Sql(left.text + right.text, left.marks | right.marks)
    return None


def _visit(
    node: ast.AST,
    owner: str,
    module: str,
    constants: dict[str, Mark],
    tables: dict[str, str],
    found: set[str],
    bad: set[str],
    variant: set[str],
) -> None:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return  # a docstring
    sql = _sql(node, constants)
    if sql is not None:
        refs = references(sql.text, tables)
        indexes = references(sql.text, set(INDEXED))
        if indexes:
            where = f"{module}:{owner}"
            found.add(where)
            named = {table for table, _alias in refs}
            if not all(INDEXED[table] & named for table, _alias in indexes):
                bad.add(where)  # an index table read without its item joined back
        if refs:
            where = f"{module}:{owner}"
            found.add(where)
            named = {table for table, _alias in refs}
            for table, alias in refs:
                content = tables[table]
                if content != table:  # a full-text table (or view) must be joined back
                    ok = content in named
                elif (table, alias, False) in sql.marks:
                    ok = True
                else:
                    ok = (table, alias, True) in sql.marks and where in INCLUDE_OFF
                if not ok:
                    bad.add(where)
            if any(mark[2] for mark in sql.marks):
                variant.add(where)
        return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            _visit(child, child.name, module, constants, tables, found, bad, variant)
        elif isinstance(node, ast.Module) and isinstance(child, ast.Assign | ast.AnnAssign):
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            name = next((t.id for t in targets if isinstance(t, ast.Name)), owner)
            _visit(child, name, module, constants, tables, found, bad, variant)
        else:
            _visit(child, owner, module, constants, tables, found, bad, variant)


def bypassing_readers(
    sources: dict[str, str], tables: dict[str, str], variant: set[str] | None = None
) -> tuple[list[str], list[str]]:
    """(readers found, readers that bypass the rule), each as 'module:function' (or :CONSTANT);
    `variant` collects the readers that use the include_off variant."""
    found: set[str] = set()
    bad: set[str] = set()
    variant = set() if variant is None else variant
    for module, src in sources.items():
        tree = ast.parse(src)
        constants = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                mark = _visible_call(node.value)
                if mark is not None:
                    constants[node.targets[0].id] = mark

        _visit(tree, "<module>", module, constants, tables, found, bad, variant)
    return sorted(found), sorted(bad)


def server_sources() -> dict[str, str]:
    return {str(p.relative_to(SERVER.parent)): p.read_text("utf-8") for p in sorted(SERVER.rglob("*.py"))}


INDEXED = index_tables()


def test_the_index_tables_are_the_ones_the_rule_knows() -> None:
    assert INDEXED == {t: set(c) for t, c in INDEX_TABLES.items()}, "a new index table: add it to visibility"


def test_the_item_tables_are_the_ones_the_rule_knows() -> None:
    tables = item_tables()
    assert {t for t, c in tables.items() if t == c} == set(ITEM_TABLES), "a new item table: add it to visibility"
    for fts, content in FTS_TABLES.items():
        assert tables[fts] == content


def test_every_reader_of_an_item_table_goes_through_the_rule() -> None:
    variant: set[str] = set()
    found, bad = bypassing_readers(server_sources(), item_tables(), variant)
    # the readers this test must see (so that it cannot pass by finding nothing)
    for reader in (
        "server/memory/pagematch.py:_EXACT_SQL",
        "server/memory/pagematch.py:_SITE_SQL",
        "server/library/queries.py:DOCUMENTS_FOR_PAGE_SQL",
        "server/memory/pagematch.py:page_probe",
        "server/memory/search.py:_RANK_ALL_SQL",
        "server/memory/coverage.py:_CANDIDATES_SQL",
        "server/memory/coverage.py:_ROWS_SQL",
        "server/memory/threads.py:conversation_item",
        "server/library/queries.py:list_documents",
        "server/library/queries.py:get_document",
        "server/library/queries.py:search_chunks",
        "server/memory/activity_log.py:recent",
        "server/meaning/lane.py:_FACT_ROWS_SQL",
        "server/meaning/lane.py:_CHUNK_ROWS_SQL",
        "server/dataio/export.py:_facts",
    ):
        assert reader in found, reader
    unexplained = [b for b in bad if b not in NOT_READERS]
    assert unexplained == [], f"readers of stored items that skip server.governance.visibility.visible(): {unexplained}"
    stale = [k for k in NOT_READERS if k not in bad]
    assert stale == [], f"listed as exceptions but no longer bypassing the rule: {stale}"
    assert variant == set(INCLUDE_OFF), "the include_off variant is used exactly by the export readers listed"


SYNTHETIC = {
    "server/evil.py": """
from server.governance.visibility import visible

VISIBLE_F = visible("facts", "f")
GOOD_CONST_SQL = f"SELECT f.text FROM facts f WHERE {VISIBLE_F}"
FTS_ONLY = "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?"

async def sneaky_list(store):
    return await store.fetchall("SELECT text FROM facts WHERE invalid_at IS NULL")

async def sneaky_literal(store):
    return await store.fetchall("SELECT f.text FROM facts f WHERE f.invalid_at IS NULL AND wf_visible(f.source_host)")

async def sneaky_wrong_alias(store):
    return await store.fetchall(f"SELECT d.text FROM documents d JOIN document_chunks c ON c.document_id = d.id "
                                f"WHERE {visible('documents', 'd')}")

async def sneaky_concat(store, q):
    return await store.fetchall("SELECT a.summary FROM activity a " + "ORDER BY a.at DESC")

async def good(store):
    return await store.fetchall(f"SELECT c.text FROM conversations c WHERE {visible('conversations', 'c')}")

async def good_fts(store):
    return await store.fetchall(
        f"SELECT f.text FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid WHERE {visible('facts', 'f')}"
    )

async def sneaky_include_off(store):
    return await store.fetchall(f"SELECT f.text FROM facts f WHERE {visible('facts', 'f', include_off=True)}")

async def sneaky_other_keyword(store):
    return await store.fetchall(f"SELECT f.text FROM facts f WHERE {visible('facts', 'f', hosts=False)}")

async def sneaky_vectors(store):
    return await store.fetchall("SELECT v.vec FROM vectors v WHERE v.id IN (1, 2)")

async def good_vectors(store):
    return await store.fetchall(
        f"SELECT v.vec FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE {visible('facts', 'f')}"
    )

async def a_write(conn):
    await conn.execute("UPDATE facts SET invalid_at = 1 WHERE source_host = ?", ("a",))
""",
}


def test_the_check_fails_on_readers_that_bypass_the_rule() -> None:
    found, bad = bypassing_readers(SYNTHETIC, item_tables())
    assert bad == [
        "server/evil.py:FTS_ONLY",
        "server/evil.py:sneaky_concat",
        "server/evil.py:sneaky_include_off",
        "server/evil.py:sneaky_list",
        "server/evil.py:sneaky_literal",
        "server/evil.py:sneaky_other_keyword",
        "server/evil.py:sneaky_vectors",
        "server/evil.py:sneaky_wrong_alias",
    ]
    good = {f"server/evil.py:{n}" for n in ("good", "good_fts", "GOOD_CONST_SQL", "good_vectors")}
    assert good <= set(found)
    assert "server/evil.py:a_write" not in found
