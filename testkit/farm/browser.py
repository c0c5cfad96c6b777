"""Chromium with the unpacked extension, forced through the tap; handles on its contexts.

One persistent context (a fresh profile dir) per test: extensions need a persistent context, and a
launch takes about a second here. Chromium's own background traffic is silenced by flags; what
cannot be silenced (GAIA's ListAccounts) is pointed at `wf-gaia.invalid`, so the tap can tell it
from ours.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from .server import FarmError
from .tap import CONTROL_PREFIX, Record, Tap

EXTENSION_ID = "gidncpejkfcnakpojbbbhocinihfkjmj"
EXTENSION_ORIGIN = f"chrome-extension://{EXTENSION_ID}"
REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "extension"
# Chromium's own Google services that flags cannot switch off are pointed at sinks the tap knows:
# GAIA's ListAccounts (sign-in) and GCM check-in/registration (push messaging).
GAIA_SINK = "wf-gaia.invalid"
GCM_SINK = "wf-gcm.invalid"
NOISE_HOSTS = frozenset({GAIA_SINK, GCM_SINK})

# Playwright's own --disable-features list (ours replaces it, so it is repeated) less the features
# users have on that touch what the farm judges — HTTPS upgrades and third-party storage
# partitioning stay on, as Local Network Access and Private Network Access do
# (e2e/test_farm_local_network.py: the service worker reaches the server, a web page cannot) —
# plus what keeps Chromium quiet (its own calls home, which the tap would otherwise have to name).
DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "Translate",
    "AutofillServerCommunication",
    "InterestFeedContentSuggestions",
    "CertificateTransparencyComponentUpdater",
]


PROFILE_PREFS = {
    "browser": {"enable_spellchecking": False},
    "spellcheck": {"dictionaries": [], "dictionary": "", "use_spelling_service": False},
    "translate": {"enabled": False},
    "safebrowsing": {"enabled": False},
    "search": {"suggest_enabled": False},
    "alternate_error_pages": {"enabled": False},
    "net": {"network_prediction_options": 2},
}


# The browser's full version (the user agent string says only "150.0.0.0").
VERSION_JS = """async () => {
  const d = navigator.userAgentData;
  const all = d ? (await d.getHighEntropyValues(['fullVersionList'])).fullVersionList : [];
  const b = all.find(x => /Chrom/.test(x.brand));
  return b ? b.version : (navigator.userAgent.match(/Chrome\\/([\\d.]+)/) || [])[1] || null;
}"""


def chromium_path() -> str | None:
    env = os.environ.get("WHEREFROM_CHROMIUM")
    if env:
        return env
    for cand in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if Path(cand).exists():
            return cand
    return shutil.which("chromium")  # None: Playwright's own Chromium


def unpacked_id(path: Path) -> str:
    """The id Chromium gives an unpacked extension without a `key`: from its directory's path."""
    digest = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def chromium_args(ext_dir: Path, tap: Tap, others: tuple[Path, ...] = ()) -> list[str]:
    dirs = ",".join(str(d) for d in (ext_dir, *others))
    args = [
        f"--disable-extensions-except={dirs}",
        f"--load-extension={dirs}",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-default-apps",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        "--no-pings",
        "--safebrowsing-disable-auto-update",
        "--metrics-recording-only",
        f"--gaia-url=http://{GAIA_SINK}/",
        f"--gcm-checkin-url=http://{GCM_SINK}/checkin",
        f"--gcm-registration-url=http://{GCM_SINK}/register",
        f"--gcm-mcs-endpoint=http://{GCM_SINK}/mcs",
        "--disable-features=" + ",".join(DISABLED_FEATURES),
        *tap.proxy_args,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


class Browser:
    """A launched persistent context with the extension, its service worker and helper calls."""

    def __init__(
        self,
        playwright: Any,
        root: Path,
        tap: Tap,
        ext_dir: Path = EXTENSION_DIR,
        viewport: dict[str, int] | None = None,
        others: tuple[Path, ...] = (),
    ) -> None:
        self.pw = playwright
        self.others = tuple(Path(o) for o in others)  # more unpacked extensions (ids from their paths)
        self.viewport = viewport or {"width": 1280, "height": 900}
        self.root = Path(root)
        self.tap = tap
        self.ext_dir = Path(ext_dir)
        self.context: Any = None
        self.sw: Any = None
        self.version: str | None = None  # Chromium's, from the service worker's user agent
        self.seen: list[dict[str, Any]] = []  # Playwright's view of requests, for attribution
        self.console: list[str] = []
        self.tracing = os.environ.get("WF_TRACE", "1") != "0"

    async def launch(self) -> Browser:
        if not (self.ext_dir / "manifest.json").is_file():
            raise FarmError(f"no extension at {self.ext_dir} (manifest.json missing)")
        profile = self.root / "profile"
        # Spell checking downloads a Hunspell dictionary (redirector.gvt1.com) the first time a
        # person types in an editable field: switched off in the profile's preferences.
        (profile / "Default").mkdir(parents=True, exist_ok=True)
        (profile / "Default" / "Preferences").write_text(json.dumps(PROFILE_PREFS), "utf-8")
        t0 = time.monotonic()
        try:
            self.context = await self.pw.chromium.launch_persistent_context(
                str(profile),
                headless=True,
                executable_path=chromium_path(),
                args=chromium_args(self.ext_dir, self.tap, self.others),
                viewport=self.viewport,
            )
        except Exception as exc:
            raise FarmError(f"Chromium did not launch with the extension: {exc}") from exc
        self.launch_s = time.monotonic() - t0
        self.context.on("request", self._on_request)
        if self.tracing:
            await self.context.tracing.start(screenshots=True, snapshots=True)
        self.sw = await self._service_worker()
        self.version = await self.sw.evaluate(VERSION_JS)
        self.sw.on("console", lambda m: self.console.append(f"sw {m.type}: {m.text}"))
        return self

    async def _service_worker(self, within: float = 10.0) -> Any:
        deadline = time.monotonic() + within
        while True:
            for w in self.context.service_workers:
                if w.url.startswith("chrome-extension://") and w.url.split("/")[2] not in self.other_ids:
                    if not w.url.startswith(EXTENSION_ORIGIN + "/"):
                        raise FarmError(
                            f"the extension loaded with id {w.url.split('/')[2]}, not the pinned {EXTENSION_ID}"
                        )
                    return w
            if time.monotonic() > deadline:
                raise FarmError("the extension's service worker did not start (is background/main.js loadable?)")
            try:
                await self.context.wait_for_event(
                    "serviceworker", timeout=max(100, (deadline - time.monotonic()) * 1000)
                )
            except Exception:  # noqa: BLE001, S110 - loop re-checks and raises on the deadline
                pass

    @property
    def other_ids(self) -> set[str]:
        return {unpacked_id(o) for o in self.others}

    async def worker_of(self, extension_id: str, within: float = 10.0) -> Any:
        """The service worker of another loaded extension."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            for w in self.context.service_workers:
                if w.url.startswith(f"chrome-extension://{extension_id}/"):
                    return w
            await asyncio.sleep(0.1)
        raise FarmError(f"no service worker for extension {extension_id}")

    def _on_request(self, request: Any) -> None:
        ctx = "unknown"
        try:
            if request.service_worker is not None:
                ctx = "service_worker"
            else:
                page_url = request.frame.page.url
                ctx = "extension_page" if page_url.startswith(EXTENSION_ORIGIN) else f"page:{page_url}"
        except Exception:  # noqa: BLE001, S110
            pass
        self.seen.append({"method": request.method, "url": request.url, "context": ctx})

    async def close(self) -> None:
        if self.context is not None:
            try:
                await self.context.close()
            except Exception:  # noqa: BLE001, S110
                pass
            self.context = None

    # ------------------------------------------------------------------ extension state
    async def storage_set(self, values: dict[str, Any]) -> None:
        await self.sw.evaluate("v => chrome.storage.local.set(v)", values)

    async def storage_get(self, keys: list[str] | None = None) -> dict[str, Any]:
        return await self.sw.evaluate("k => chrome.storage.local.get(k)", keys)

    async def storage(self, key: str) -> Any:
        """One value of chrome.storage.local (None when unset)."""
        return await self.sw.evaluate("async (k) => (await chrome.storage.local.get(k))[k]", key)

    async def set_server(self, url: str) -> None:
        """Point the extension at a server, as the Settings view would (nothing else changes)."""
        await self.storage_set({"serverUrl": url})

    async def configure(
        self, server_url: str, token: str, *, page_memory: bool, disclosure: bool | None = None
    ) -> None:
        """Write the settings the side panel would write, then nudge the worker to re-read them."""
        await self.storage_set(
            {
                "serverUrl": server_url,
                "token": token,
                "pageMemory": page_memory,
                "disclosureAccepted": page_memory if disclosure is None else disclosure,
            }
        )
        await self.sw.evaluate("() => globalThis.wherefromSync ? globalThis.wherefromSync() : null")

    async def registered_scripts(self) -> list[dict[str, Any]]:
        return await self.sw.evaluate(
            "() => chrome.scripting.getRegisteredContentScripts()"
            ".then(l => l.map(s => ({id: s.id, matches: s.matches})))"
        )

    async def wait_registered(self, site: str, within: float = 10.0) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if any(s["id"].endswith(site) for s in await self.registered_scripts()):
                return True
            await asyncio.sleep(0.1)
        return False

    async def tab_id(self, url: str) -> int | None:
        return await self.sw.evaluate(
            "u => chrome.tabs.query({}).then(ts => {"
            " const t = ts.find(t => t.url === u || t.pendingUrl === u); return t ? t.id : null; })",
            url,
        )

    async def action_title(self, tab_id: int) -> str:
        return await self.sw.evaluate("id => chrome.action.getTitle({tabId: id})", tab_id)

    # ------------------------------------------------------------------ pages
    async def new_page(self) -> Any:
        page = await self.context.new_page()
        page.on("console", lambda m: self.console.append(f"page {m.type}: {m.text}"))
        return page

    async def open_panel(self, tab_id: int | None = None, *, view: str | None = None, settled: bool = False) -> Any:
        """The side panel page, opened as a tab (?tabId= says which tab it is about, ?view= which
        view to show). settled: wait until the panel has checked its connection."""
        page = await self.new_page()
        query = {k: str(v) for k, v in (("tabId", tab_id), ("view", view)) if v is not None}
        await page.goto(f"{EXTENSION_ORIGIN}/sidepanel/index.html" + (f"?{urlencode(query)}" if query else ""))
        if settled:
            await page.wait_for_function("() => document.getElementById('conn').textContent !== '…'")
        return page

    async def web_tab(self, url: str, html: str) -> tuple[Any, int]:
        """A route-fulfilled web page at its real URL, and its tab id."""

        async def fulfil(route: Any) -> None:
            await route.fulfill(status=200, content_type="text/html", body=html)

        page = await self.new_page()
        await page.route(url, fulfil)
        await page.goto(url)
        tab_id = await self.sw.evaluate("async (u) => (await chrome.tabs.query({url: u}))[0].id", url)
        return page, int(tab_id)

    async def panel_message(self, panel: Any, type_: str, payload: dict[str, Any] | None = None) -> Any:
        return await panel.evaluate(
            "([t, p]) => chrome.runtime.sendMessage({type: t, payload: p})", [type_, payload or {}]
        )

    async def capture_injected(self, page: Any) -> bool:
        """Did an isolated world of our extension appear in this page? (CDP, not the extension's word)"""
        cdp = await self.context.new_cdp_session(page)
        found: list[dict[str, Any]] = []
        cdp.on("Runtime.executionContextCreated", lambda e: found.append(e.get("context", {})))
        try:
            await cdp.send("Runtime.enable")
            await asyncio.sleep(0.1)
            await cdp.send("Runtime.disable")
        finally:
            await cdp.detach()
        return any(
            c.get("auxData", {}).get("type") == "isolated"
            and (str(c.get("origin", "")).startswith(EXTENSION_ORIGIN) or c.get("name") == "Wherefrom")
            for c in found
        )

    # ------------------------------------------------------------------ positive controls
    async def positive_controls(
        self, server_url: str, web_page: Any | None, *, panel: Any | None = None, tag: str = "start"
    ) -> dict[str, Record]:
        """Prove the tap sees a request from each context; any miss makes the test invalid."""
        nonce = f"{tag}-{int(time.monotonic() * 1000)}"
        seen: dict[str, Record] = {}
        own_panel = panel is None
        if own_panel:
            panel = await self.open_panel()
        try:
            targets: list[tuple[str, Any, bool]] = [
                ("service_worker", self.sw, False),
                ("extension_page", panel, False),
            ]
            if web_page is not None:
                targets.append(("web_page", web_page, True))
            for name, where, no_cors in targets:
                url = f"{server_url}{CONTROL_PREFIX}{name}/{nonce}"
                opts = "{mode: 'no-cors', cache: 'no-store'}" if no_cors else "{cache: 'no-store'}"
                result = await where.evaluate(
                    f"u => fetch(u, {opts}).then(r => r.type + ' ' + r.status).catch(e => 'error ' + e)",
                    url,
                )
                rec = await self.tap.wait_for(lambda r, u=url: r.url == u, within=5)
                if rec is None:
                    raise FarmError(
                        f"positive control failed: the tap did not see the {name} request {url} "
                        f"(fetch said {result!r}); a 'zero requests' result would be meaningless"
                    )
                if not rec.forwarded or rec.status in (None, 502):
                    raise FarmError(
                        f"positive control: the {name} request was not answered by the server ({rec.status})"
                    )
                rec.context = name
                seen[name] = rec
        finally:
            if own_panel:
                await panel.close()
        return seen

    # ------------------------------------------------------------------ attribution
    def attribute(self, records: list[Record]) -> list[Record]:
        """Name the sending context of each record: Playwright's event if one matches, else headers."""
        pool = list(self.seen)
        for r in records:
            if r.is_control:
                continue
            if r.host in NOISE_HOSTS:
                r.context = "browser(google services sink)"
                continue
            hit = next((s for s in pool if s["url"] == r.url and s["method"] == r.method), None)
            if hit is not None:
                pool.remove(hit)
                r.context = hit["context"]
                continue
            origin = r.origin or ""
            if origin.startswith(EXTENSION_ORIGIN):
                r.context = "extension"
            elif origin.startswith(("http://", "https://")):
                r.context = f"web:{origin}"
            elif r.is_connect:
                r.context = "tunnel"
            else:
                r.context = "unknown"
        return records

    # ------------------------------------------------------------------ failure artifacts
    async def keep_artifacts(self, out_dir: Path, name: str, failed: bool) -> list[str]:
        kept: list[str] = []
        if self.context is None:
            return kept
        if failed:
            out_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 - teardown, once
            for i, page in enumerate(self.context.pages):
                try:
                    path = out_dir / f"{name}-page{i}.png"
                    await page.screenshot(path=str(path), timeout=5000)
                    kept.append(str(path))
                except Exception:  # noqa: BLE001, S110
                    pass
            (out_dir / f"{name}-console.txt").write_text("\n".join(self.console[-400:]), "utf-8")
        if self.tracing:
            try:
                if failed:
                    path = out_dir / f"{name}-trace.zip"
                    await self.context.tracing.stop(path=str(path))
                    kept.append(str(path))
                else:
                    await self.context.tracing.stop()
            except Exception:  # noqa: BLE001, S110
                pass
        return kept


def dump(records: list[Record], limit: int = 30) -> str:
    return json.dumps([r.summary() for r in records[:limit]], indent=1, ensure_ascii=False)
