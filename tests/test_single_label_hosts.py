"""Single-label hosts are hosts: a single-label intranet host (`http://intranet/wiki`) is stored, so a rule
and a forget on it are allowed; a real public suffix (`com`, `co.uk`, `github.io`) stays
refused (the control that the suffix check still runs)."""

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
async def test_control_a_public_suffix_is_still_refused(api: Api, host: str) -> None:
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "off"})
    assert status == 400 and body["error"]["code"] == "public_suffix", body
    status, body = await api.post("/api/forget", {"host": host, "dry_run": True})
    assert status == 400 and body["error"]["code"] == "public_suffix", body


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
