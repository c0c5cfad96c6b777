"""Site rules over HTTP: stored, read back, resolved with their reasons, refused when wrong."""

from __future__ import annotations

import pytest

from tests.conftest import Api


async def test_rule_round_trip_and_reason(api: Api) -> None:
    status, body = await api.get("/api/site-mode", params={"host": "news.example.com"})
    assert (status, body["mode"], body["reason"]) == (200, "collect", "default")
    status, body = await api.put("/api/site-mode", {"host": "Example.COM.", "mode": "suggest"})
    assert status == 200 and body == {"host": "example.com", "mode": "suggest"}
    status, body = await api.get("/api/site-mode", params={"host": "news.example.com"})
    assert (body["mode"], body["reason"]) == ("suggest", "rule:example.com")
    status, snap = await api.get("/api/policy")
    assert {"host": "example.com", "mode": "suggest"} in snap["rules"]
    status, body = await api.delete("/api/site-mode", params={"host": "example.com"})
    assert body == {"removed": True}
    status, body = await api.get("/api/site-mode", params={"host": "news.example.com"})
    assert body["reason"] == "default"
    status, body = await api.delete("/api/site-mode", params={"host": "example.com"})
    assert body == {"removed": False}


async def test_policy_version_changes_with_rules(api: Api) -> None:
    _, before = await api.get("/api/policy")
    await api.put("/api/site-mode", {"host": "a.example", "mode": "off"})
    _, after = await api.get("/api/policy")
    assert before["version"] != after["version"]
    assert len(after["sensitive"]["domains"]) >= 300


async def test_sensitive_child_beats_user_rule_on_parent(api: Api) -> None:
    await api.put("/api/site-mode", {"host": "google.com", "mode": "collect"})
    _, body = await api.get("/api/site-mode", params={"host": "accounts.google.com"})
    assert (body["mode"], body["reason"]) == ("off", "sensitive:identity:accounts.google.com")
    _, body = await api.get("/api/site-mode", params={"host": "docs.google.com"})
    assert (body["mode"], body["reason"]) == ("collect", "rule:google.com")


@pytest.mark.parametrize("host", ["a b.com", "http://x.com/", "a..com", "x" * 64 + ".com", "a:b:c", "[zz::1]"])
async def test_bad_rule_hosts_refused_and_nothing_stored(api: Api, host: str) -> None:
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "off"})
    assert status == 400, body
    assert await api.store.fetchall("SELECT * FROM site_rules") == []


async def test_rule_change_is_in_activity(api: Api) -> None:
    await api.put("/api/site-mode", {"host": "example.org", "mode": "off"})
    rows = await api.store.fetchall("SELECT kind, summary FROM activity")
    assert [(r["kind"], r["summary"]) for r in rows] == [("rule", "example.org and its subdomains: off")]


async def test_policy_carries_the_limits_clients_cut_to(api: Api) -> None:
    from server import limits

    _, snap = await api.get("/api/policy")
    assert snap["limits"] == limits.as_dict()
    # the limits are the ones the routes enforce: one more character is refused
    too_long = "x" * (snap["limits"]["note_chars"] + 1)
    status, _ = await api.post("/api/notes", {"url": "https://example.com/", "title": "t", "text": too_long})
    assert status == 413
    status, _ = await api.post("/api/notes", {"url": "https://example.com/", "title": "t", "text": too_long[:-1]})
    assert status == 201
