"""A single-label intranet host (`http://intranet/wiki`) is stored, so a rule and a forget on it
are allowed, covering its subdomains; a rule on a public suffix (`com`, `co.uk`, `github.io`,
and single-label top-level domains: tests/test_hostile_hosts.py) covers only that host."""

from __future__ import annotations

import pytest

from tests.conftest import Api


async def live_notes(api: Api) -> set[str]:
    rows = await api.store.fetchall("SELECT text FROM facts WHERE invalid_at IS NULL")
    return {r["text"] for r in rows}


@pytest.mark.parametrize("host", ["intranet", "nas", "wiki-server", "INTRANET."])
async def test_a_rule_on_a_single_label_host_is_allowed(api: Api, host: str) -> None:
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "off"})
    assert status == 200, body
    clean = host.lower().rstrip(".")
    assert body["host"] == clean
    status, body = await api.get("/api/site-mode", params={"host": clean})
    assert (body["mode"], body["reason"]) == ("off", f"rule:{clean}")
    status, body = await api.post("/api/notes", {"url": f"http://{clean}/wiki", "title": "Wiki", "text": "a note"})
    assert status == 403 and body["error"]["code"] == "site_mode", body


@pytest.mark.parametrize("host", ["com", "co.uk", "github.io", "org"])
async def test_a_rule_on_a_public_suffix_covers_that_host_only(api: Api, host: str) -> None:
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "off"})
    assert status == 200, body
    status, body = await api.get("/api/site-mode", params={"host": host})
    assert (body["mode"], body["reason"]) == ("off", f"rule:{host}")
    status, body = await api.get("/api/site-mode", params={"host": f"shop.{host}"})
    assert (body["mode"], body["reason"]) == ("collect", "default"), "a rule on a public suffix reached a site under it"


async def test_a_forget_on_a_single_label_host_is_allowed(api: Api) -> None:
    for url, text in (
        ("http://intranet/wiki", "intranet wiki note"),
        ("http://intranet:8080/x", "other port"),
        ("https://example.com/a", "a public page"),
    ):
        status, body = await api.post("/api/notes", {"url": url, "title": "T", "text": text})
        assert status == 201, body
    status, body = await api.post("/api/forget", {"host": "intranet", "dry_run": True})
    assert status == 200, body
    assert (body["host"], body["facts"]) == ("intranet", 2)
    status, body = await api.post("/api/forget", {"host": "intranet", "confirm": body["confirm"]})
    assert status == 200, body
    assert await live_notes(api) == {"a public page"}
