"""Chat-site fixtures: catalogue and Playwright routing (see docs/fixtures-contract.md).

`catalog()` lists every fixture under fixtures/sites/<site>/<scenario>.html with its ground truth
(<scenario>.expected.json). `route_fixture(context, fixture)` / `route_fixtures(context, fixtures)`
make a Playwright browser context answer each fixture's real https URL with the page,
`/__wf_fixture/<file>.js` on that host with fixtures/sites/_lib/<file>.js, and every other request
on that host with 404, so nothing reaches the network for a fixture host.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from testkit import registry

ROOT = Path(__file__).resolve().parent.parent
FIXTURES_DIR = ROOT / "fixtures" / "sites"
LIB_DIR = FIXTURES_DIR / "_lib"
LIB_PREFIX = "/__wf_fixture/"

# The chat sites and their hosts: the registry's (extension/sites/registry.json), never a list here.
SITES: tuple[str, ...] = registry.site_ids()
SITE_HOSTS: dict[str, tuple[str, ...]] = registry.site_hosts()

_CONTENT_TYPES = {".js": "application/javascript; charset=utf-8"}


@dataclass(frozen=True)
class Fixture:
    site: str
    scenario: str
    url: str
    html_path: Path
    expected: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)  # the page's first-line JSON comment

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def id(self) -> str:
        return f"{self.site}/{self.scenario}"

    @property
    def has_composer(self) -> bool:
        """Does the page have a composer to insert into? (share and public pages have none)"""
        return self.expected.get("composer", True) is not False

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.meta.get("features", ()))

    def html(self) -> str:
        return self.html_path.read_text(encoding="utf-8")


class FixtureError(ValueError):
    """A fixture file breaks the contract."""


def read_meta(html_path: Path) -> dict[str, Any]:
    """Parse the JSON held by the HTML comment on the page's first line."""
    with html_path.open(encoding="utf-8") as fh:
        first = fh.readline().strip()
    if not (first.startswith("<!--") and first.endswith("-->")):
        raise FixtureError(f"{html_path}: first line must be an HTML comment holding JSON")
    try:
        meta = json.loads(first[4:-3].strip())
    except json.JSONDecodeError as exc:
        raise FixtureError(f"{html_path}: first-line comment is not JSON: {exc}") from exc
    if not isinstance(meta, dict):
        raise FixtureError(f"{html_path}: first-line JSON must be an object")
    return meta


def _load(site: str, html_path: Path) -> Fixture:
    meta = read_meta(html_path)
    scenario = html_path.name[: -len(".html")]
    exp_path = html_path.with_name(scenario + ".expected.json")
    if not exp_path.is_file():
        raise FixtureError(f"{html_path}: missing {exp_path.name}")
    expected = json.loads(exp_path.read_text(encoding="utf-8"))
    url = meta.get("url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise FixtureError(f"{html_path}: meta url must be an https URL")
    if expected.get("url") != url:
        raise FixtureError(f"{exp_path}: url differs from the page's ({url})")
    if meta.get("site", site) != site:
        raise FixtureError(f"{html_path}: meta site {meta.get('site')!r} is not folder {site!r}")
    host = urlsplit(url).hostname or ""
    if site in SITE_HOSTS and host not in SITE_HOSTS[site]:
        raise FixtureError(f"{html_path}: host {host} is not one of {SITE_HOSTS[site]}")
    turns = expected.get("turns")
    if not isinstance(turns, list) or not all(
        isinstance(t, dict) and t.get("role") in ("user", "assistant") and isinstance(t.get("text"), str) for t in turns
    ):
        raise FixtureError(f"{exp_path}: turns must be [{{role: user|assistant, text}}]")
    return Fixture(site, scenario, url, html_path, expected, meta)


def catalog(site: str | None = None) -> list[Fixture]:
    """Every fixture (optionally one site's), sorted by site (registry order) then scenario."""
    out: list[Fixture] = []
    if not FIXTURES_DIR.is_dir():
        return out
    for site_dir in FIXTURES_DIR.iterdir():
        if not site_dir.is_dir() or site_dir.name.startswith(("_", ".")):
            continue
        if site is not None and site_dir.name != site:
            continue
        for html_path in site_dir.glob("*.html"):
            out.append(_load(site_dir.name, html_path))
    order = {s: i for i, s in enumerate(SITES)}
    out.sort(key=lambda f: (order.get(f.site, len(order)), f.site, f.scenario))
    return out


def find(site: str, scenario: str) -> Fixture:
    for fx in catalog(site):
        if fx.scenario == scenario:
            return fx
    raise KeyError(f"no fixture {site}/{scenario}")


def _page_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path or '/'}?{parts.query}" if parts.query else (parts.path or "/")


class _HostRoutes:
    """One Playwright route per (context, host); pages can be added later."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.pages: dict[str, Fixture] = {}

    def matches(self, url: str) -> bool:
        return urlsplit(url).hostname == self.host

    async def handle(self, route: Any) -> None:
        url = route.request.url
        path = urlsplit(url).path
        if path.startswith(LIB_PREFIX):
            name = path[len(LIB_PREFIX) :]
            lib_file = LIB_DIR / name
            if "/" not in name and name.endswith(".js") and lib_file.is_file():
                await route.fulfill(
                    status=200,
                    headers={"content-type": _CONTENT_TYPES[".js"], "cache-control": "no-store"},
                    body=lib_file.read_bytes(),
                )
                return
        else:
            fx = self.pages.get(_page_key(url))
            if fx is not None and route.request.method in ("GET", "HEAD"):
                await route.fulfill(
                    status=200,
                    headers={"content-type": "text/html; charset=utf-8", "cache-control": "no-store"},
                    body=fx.html_path.read_bytes(),
                )
                return
        await route.fulfill(status=404, headers={"content-type": "text/plain"}, body="not found")


_registry: weakref.WeakKeyDictionary[Any, dict[str, _HostRoutes]] = weakref.WeakKeyDictionary()


async def route_fixtures(context: Any, fixtures: list[Fixture] | tuple[Fixture, ...]) -> None:
    """Serve several fixtures on one Playwright BrowserContext (hosts may repeat)."""
    hosts = _registry.setdefault(context, {})
    for fx in fixtures:
        hr = hosts.get(fx.host)
        if hr is None:
            hr = hosts[fx.host] = _HostRoutes(fx.host)
            await context.route(hr.matches, hr.handle)
        hr.pages[_page_key(fx.url)] = fx


async def route_fixture(context: Any, fixture: Fixture) -> None:
    """Serve one fixture at its real URL on a Playwright BrowserContext."""
    await route_fixtures(context, [fixture])


def collapse(text: str) -> str:
    """Whitespace collapsed to single spaces and trimmed, as in expected.json `text`."""
    return " ".join(text.split())
