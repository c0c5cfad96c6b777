"""'This host or a subdomain of it': server/urls.py host_or_subdomain and its SQL form host_clause
run the shared vectors (fixtures/host-cases.json; tests/js/hosts.test.mjs runs them in JS)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from server.urls import host_clause, host_or_subdomain, host_parents

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "host-cases.json").read_text("utf-8")
)["cases"]


def test_the_shared_file_has_cases_both_ways() -> None:
    assert len(CASES) >= 30
    assert {c["expect"] for c in CASES} == {True, False}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['host']}|{c['parent']}")
def test_host_or_subdomain(case: dict[str, Any]) -> None:
    assert host_or_subdomain(case["host"], case["parent"]) is case["expect"]


@pytest.mark.parametrize(
    "case", [c for c in CASES if "python_only" not in c], ids=lambda c: f"{c['host']}|{c['parent']}"
)
def test_host_clause_agrees_in_sql(case: dict[str, Any]) -> None:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (source_host TEXT)")
    con.execute("INSERT INTO t VALUES (?)", (case["host"],))
    sql = f"SELECT COUNT(*) FROM t WHERE {host_clause('t.source_host', 'parent')}"  # noqa: S608 - built by the helper
    (n,) = con.execute(sql, {"parent": case["parent"]}).fetchone()
    assert bool(n) is case["expect"]


def test_parents_agree_with_the_rule() -> None:
    for case in CASES:
        host = case["host"]
        if host and not host.startswith("."):
            assert (case["parent"] in host_parents(host)) is case["expect"], case


def test_host_clause_refuses_what_is_not_a_name() -> None:
    with pytest.raises(ValueError):
        host_clause("x; DROP TABLE t", "p")
    with pytest.raises(ValueError):
        host_clause("source_host", "p OR 1")
