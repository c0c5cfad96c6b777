"""Every host a page can be stored from can be governed: a single-label host that is also a
top-level domain (`wiki`, `app`, `dev`, `docs`, `hr`, `chat`, `prod`) takes a rule and a forget
(covering that host only: a rule never reaches the public sites under a public suffix); a rule
on an IPv4 address covers its IPv4-mapped IPv6 spelling; `*.localhost` is local; the resolver
and the fetcher read the IPv4 inside an IPv6 address by one rule (server/urls.py embedded_ipv4)."""

from __future__ import annotations

import ipaddress

import pytest

from server.governance.policy import sensitive_defaults
from server.governance.resolver import embedded_ipv4, resolve
from server.library.fetch import address_refusal
from tests.conftest import Api

TLD_HOSTS = ["wiki", "app", "dev", "docs", "hr", "chat", "prod"]


async def live_texts(api: Api) -> set[str]:
    rows = await api.store.fetchall("SELECT text FROM facts WHERE invalid_at IS NULL")
    return {r["text"] for r in rows}


@pytest.mark.parametrize("host", TLD_HOSTS)
async def test_a_single_label_top_level_domain_host_takes_a_rule_covering_that_host_only(api: Api, host: str) -> None:
    status, body = await api.post("/api/notes", {"url": f"http://{host}/page", "title": "T", "text": f"note on {host}"})
    assert status == 201, body  # it can store something ...
    status, body = await api.post("/api/notes", {"url": f"https://site.{host}/x", "title": "T", "text": "public site"})
    assert status == 201, body
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "off"})  # ... so it is governable
    assert status == 200, body
    _, policy = await api.get("/api/policy")
    assert {"host": host, "mode": "off", "exact": True} in policy["rules"]
    status, body = await api.post("/api/notes", {"url": f"http://{host}/other", "title": "T", "text": "refused"})
    assert status == 403 and body["error"]["code"] == "site_mode", body
    # control: the public site under the suffix is untouched by the rule
    status, body = await api.post("/api/notes", {"url": f"https://site.{host}/y", "title": "T", "text": "still stored"})
    assert status == 201, body
    status, body = await api.get("/api/search", params={"q": "public"})
    assert status == 200 and body["results"], body


@pytest.mark.parametrize("host", TLD_HOSTS)
async def test_a_single_label_top_level_domain_host_can_be_forgotten_and_only_it(api: Api, host: str) -> None:
    for url, text in ((f"http://{host}/a", "intranet page"), (f"https://site.{host}/b", "public site page")):
        status, body = await api.post("/api/notes", {"url": url, "title": "T", "text": text})
        assert status == 201, body
    status, body = await api.post("/api/forget", {"host": host, "dry_run": True})
    assert status == 200, body
    assert (body["facts"], body["subdomains"]) == (1, False)
    status, body = await api.post("/api/forget", {"host": host, "confirm": body["confirm"]})
    assert status == 200 and body["facts"] == 1, body
    assert await live_texts(api) == {"public site page"}  # positive control: forgetting ran, one note left


async def test_control_a_forget_on_an_ordinary_site_still_covers_its_subdomains(api: Api) -> None:
    for url, text in (
        ("https://example.com/a", "root"),
        ("https://a.example.com/b", "sub"),
        ("https://other.com/", "other"),
    ):
        status, body = await api.post("/api/notes", {"url": url, "title": "T", "text": text})
        assert status == 201, body
    status, body = await api.post("/api/forget", {"host": "example.com", "dry_run": True})
    assert (body["facts"], body["subdomains"]) == (2, True), body


async def test_a_rule_on_an_ipv4_address_covers_its_mapped_ipv6_spelling(api: Api) -> None:
    status, body = await api.put("/api/site-mode", {"host": "93.184.216.34", "mode": "off"})
    assert status == 200, body
    status, body = await api.post("/api/notes", {"url": "http://[::ffff:93.184.216.34]/", "title": "T", "text": "x"})
    assert status == 403 and body["error"]["code"] == "site_mode", body
    # control: another address's mapped spelling is stored
    status, body = await api.post("/api/notes", {"url": "http://[::ffff:93.184.216.35]/", "title": "T", "text": "y"})
    assert status == 201, body


@pytest.mark.parametrize("host", ["app.localhost", "a.b.localhost", "localhost"])
async def test_localhost_and_its_subdomains_are_local_and_off_by_default(api: Api, host: str) -> None:
    status, body = await api.post("/api/notes", {"url": f"http://{host}:3000/", "title": "T", "text": "dev server"})
    assert status == 403 and body["error"]["code"] == "site_mode", body
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "collect"})  # a rule opens it
    assert status == 200, body
    status, body = await api.post("/api/notes", {"url": f"http://{host}:3000/", "title": "T", "text": "dev server"})
    assert status == 201, body


SNAPSHOT = {"global_default": "collect", "rules": [], "sensitive": sensitive_defaults()}
ADDRESSES = [
    "::2",
    "::ffff",
    "::0.0.0.2",
    "::1.2.3.4",
    "::127.0.0.1",
    "::ffff:127.0.0.1",
    "::ffff:8.8.8.8",
    "64:ff9b::10.0.0.1",
    "64:ff9b::8.8.8.8",
    "2002:c0a8:101::1",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",
    "2606:4700::1111",
]


@pytest.mark.parametrize("address", ADDRESSES)
def test_the_resolver_and_the_fetcher_read_the_ipv4_inside_an_ipv6_address_alike(address: str) -> None:
    """Local to the resolver exactly when the fetcher refuses it, for every embedding spelling."""
    ip = ipaddress.IPv6Address(address)
    local = resolve(f"[{address}]", SNAPSHOT).reason.startswith("sensitive:local")
    refused = address_refusal(ip) is not None
    assert local == refused, (address, embedded_ipv4(ip), address_refusal(ip))


def test_control_the_address_list_holds_both_verdicts() -> None:
    verdicts = {address_refusal(ipaddress.IPv6Address(a)) is None for a in ADDRESSES}
    assert verdicts == {True, False}
