"""One test's farm: the tap, an isolated companion server, Chromium with the extension.

farm = Farm(playwright, tmp_dir, name)
await farm.start()          # tap thread, server subprocess and browser launch overlap
...
await farm.stop(failed)     # artifacts on failure, then browser, server, tap
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .browser import EXTENSION_DIR, Browser
from .report import ARTIFACTS_DIR
from .server import CompanionServer, FarmError, ledger_key
from .tap import Tap

P_GET_POLICY = "panel:get-policy"
P_INSERT = "panel:insert-text"
P_SAVE_NOTE = "panel:save-note"


class Farm:
    def __init__(
        self,
        playwright: Any,
        root: Path,
        name: str,
        ext_dir: Path = EXTENSION_DIR,
        viewport: dict[str, int] | None = None,
        others: tuple[Path, ...] = (),
    ) -> None:
        self.root = Path(root)
        self.name = name
        self.tap = Tap()
        self.server = CompanionServer(self.root)
        self.browser = Browser(playwright, self.root, self.tap, ext_dir, viewport, others)
        self.timings: dict[str, float] = {}
        self._lap = time.monotonic()
        self.artifacts: list[str] = []

    async def start(self) -> Farm:
        t0 = time.monotonic()
        self.tap.start()
        self.server.start()
        self.tap.forward_ports = {self.server.port}
        try:
            await self.browser.launch()
            await self.server.ready()
        except BaseException:
            await self.stop(failed=False)
            raise
        self.timings["start_s"] = round(time.monotonic() - t0, 2)
        self._lap = time.monotonic()
        return self

    def lap(self, label: str) -> None:
        """Record how long the step that just ended took (shown in the health matrix)."""
        now = time.monotonic()
        self.timings[label] = round(now - self._lap, 2)
        self._lap = now

    async def stop(self, failed: bool) -> None:
        try:
            self.artifacts = await self.browser.keep_artifacts(ARTIFACTS_DIR, self.name, failed)
            if failed:
                ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
                log = ARTIFACTS_DIR / f"{self.name}-server.log"
                log.write_text(self.server.log_tail(20000), "utf-8")
                self.artifacts.append(str(log))
        finally:
            await self.browser.close()
            await self.server.stop()
            self.tap.stop()

    # ------------------------------------------------------------------ tap vs the server's ledger
    async def check_ledger(self, within: float = 10.0) -> dict[str, int]:
        """The tap and the server's own ledger agree: every request the tap forwarded to this
        test's server and got an answer for is in the ledger, and the ledger (without the harness
        header) holds nothing the tap did not forward — nothing the server saw went unseen by the
        tap, nothing it answered vanished. A request forwarded while the server was going down and
        never answered may or may not have reached its ledger; it is allowed either way and named.
        Read once the tap is drained; retried while either side is still catching up.
        Raises AssertionError (both lists in the message) on a lasting mismatch."""
        port = self.server.port
        deadline = time.monotonic() + within
        while True:
            await self.tap.drain(port, within=max(0.5, deadline - time.monotonic()))
            forwarded = [r for r in self.tap.records() if r.port == port and r.forwarded and r.done]
            answered = Counter(r.server_key() for r in forwarded if r.status is not None and r.status > 0)
            unanswered = Counter(r.server_key() for r in forwarded if not (r.status is not None and r.status > 0))
            entries = self.server.browser_ledger()
            ledger = Counter(ledger_key(e) for e in entries)
            if not (answered - ledger) and not (ledger - (answered + unanswered)):
                return {"ledger_requests": len(entries), "tap_forwarded": len(forwarded)}
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.3)

        def lines(c: Counter[tuple[str, str, str]]) -> str:
            return "\n".join(f"  {n}x {m} {p}{'?' + q if q else ''}" for (m, p, q), n in sorted(c.items()))

        raise AssertionError(
            "the tap and the server's ledger disagree\n"
            f"seen by the server, not forwarded by the tap:\n{lines(ledger - (answered + unanswered)) or '  -'}\n"
            f"answered through the tap, not in the server's ledger:\n{lines(answered - ledger) or '  -'}\n"
            f"forwarded, never answered (allowed either way):\n{lines(unanswered) or '  -'}\n"
            f"tap ({sum(answered.values())} answered):\n{lines(answered)}\n"
            f"ledger ({sum(ledger.values())}, harness calls excluded):\n{lines(ledger)}\n"
            f"still in flight: {[r.url for r in self.tap.in_flight(port)]}"
        )

    # ------------------------------------------------------------------ convenience
    @property
    def sw(self) -> Any:
        return self.browser.sw

    async def configure(self, *, page_memory: bool, disclosure: bool | None = None) -> None:
        await self.browser.configure(self.server.url, self.server.token, page_memory=page_memory, disclosure=disclosure)

    async def refresh_policy(self, keep_open: bool = False) -> Any:
        """Make the worker fetch GET /api/policy now (the panel's refresh) and re-register its
        capture scripts. Returns the panel page when keep_open (the caller closes it)."""
        panel = await self.browser.open_panel()
        try:
            # the panel checks its connection on opening (which itself reloads the policy): let that
            # finish first, as a person would, rather than racing it
            try:
                await panel.locator("#conn:not([data-state='unknown'])").wait_for(timeout=5000)
            except Exception:  # noqa: BLE001, S110 - the message below reports what is wrong
                pass
            answer = await self.browser.panel_message(panel, P_GET_POLICY, {"refresh": True})
        except BaseException:
            await panel.close()
            raise
        if not keep_open:
            await panel.close()
        if not isinstance(answer, dict) or not answer.get("ok"):
            errors = [line for line in self.browser.console if line.startswith("sw error")][-3:]
            raise FarmError(f"the extension could not load the policy: {answer}; worker console: {errors}")
        return panel if keep_open else answer

    async def open(self, url: str, fixture: Any | None = None) -> Any:
        if fixture is not None:
            from testkit.sites import route_fixture

            await route_fixture(self.browser.context, fixture)
        page = await self.browser.new_page()
        await page.goto(url, wait_until="load")
        return page

    async def settle(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
