"""The farm's pytest wiring: per-test farm (tap + isolated server + Chromium with the extension),
failure artifacts, and the site health matrix (merged across xdist workers at the end)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from testkit import processes
from testkit.farm import report
from testkit.farm.browser import EXTENSION_DIR
from testkit.farm.farm import Farm

_SESSION_T0: list[float] = []


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_report_header(config: pytest.Config) -> list[str]:
    from testkit.farm.real_pages import describe_expected_failures

    return [describe_expected_failures()]


def pytest_sessionstart(session: pytest.Session) -> None:
    processes.session_start(session.config)  # "do you leak?": count our processes before and after
    _SESSION_T0.append(time.monotonic())
    if not _is_worker(session.config) and not session.config.option.collectonly:
        report.reset()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shard",
        default=None,
        metavar="K",
        help="run only shard K of the farm (the sites testkit/farm/shards.json gives it; "
        "`python -m testkit.farm.shards show` lists them)",
    )


def _shard(config: pytest.Config) -> str | None:
    value = config.getoption("--shard", default=None)
    return str(value) if value else None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    processes.session_finish(session)
    if not _is_worker(session.config) and not session.config.option.collectonly:
        path = report.write(time.monotonic() - _SESSION_T0[0] if _SESSION_T0 else None, _shard(session.config))
        matrix = json.loads(path.read_text("utf-8"))
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"farm: site health matrix in {path} (and health.html)")
            tr.write_line(matrix["line"])
            from testkit.farm.real_pages import describe_expected_failures

            tr.write_line(f"farm: {describe_expected_failures()}")
        # a whole-farm run where a cell never ran is not green: silence is not "passed"
        not_run = sum(s.get("not_run", 0) for s in matrix["summary"].values())
        if not_run and _whole_farm(session.config) and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            if tr is not None:
                tr.write_line(f"farm: {not_run} cell(s) of the health matrix never ran", red=True)


def _whole_farm(config: pytest.Config) -> bool:
    """The run covers every farm test (any SITE): no -k/-m and no narrower path than e2e/."""
    here = Path(__file__).resolve().parent
    narrowed = config.option.keyword or config.option.markexpr
    paths = [Path(str(a).split("::")[0]).resolve() for a in config.args]
    return not narrowed and all(p == here or p in here.parents for p in paths)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    farm_items = []
    for item in items:
        if Path(str(item.fspath)).resolve().parent == here:
            farm_items.append(item)
            item.add_marker(pytest.mark.farm)
            # one event loop per worker, so one Playwright driver per worker (`playwright_driver`)
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)
    shard = _shard(config)
    if shard is not None:
        from testkit.farm import shards

        _, dropped = shards.select(farm_items, shards.load(), shard)
        if dropped:
            gone = set(map(id, dropped))
            config.hook.pytest_deselected(items=dropped)
            items[:] = [i for i in items if id(i) not in gone]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


def _failed(node: pytest.Item) -> bool:
    for when in ("setup", "call"):
        rep = getattr(node, f"rep_{when}", None)
        if rep is not None and rep.failed:
            return True
    return False


def _outcome(node: pytest.Item) -> str:
    setup = getattr(node, "rep_setup", None)
    call = getattr(node, "rep_call", None)
    if setup is not None and setup.failed:
        return "error"
    if setup is not None and setup.skipped:
        return "xfailed" if hasattr(setup, "wasxfail") else "skipped"
    if call is None:
        return "error"
    if hasattr(call, "wasxfail"):  # an expected failure (from a checked-in list) and its fate
        return "xfailed" if call.skipped else "xpassed"
    return "skipped" if call.skipped else ("failed" if call.failed else "passed")


def _error_text(node: pytest.Item) -> str | None:
    for when in ("setup", "call"):
        rep = getattr(node, f"rep_{when}", None)
        if rep is not None and (rep.failed or rep.skipped):
            crash = getattr(rep.longrepr, "reprcrash", None)
            if crash is not None:
                return str(crash.message)[:600]
            return str(rep.longrepr)[-600:]
    return None


def safe_name(nodeid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid.split("::")[-1])[:120]


@pytest.fixture
def health(request: pytest.FixtureRequest) -> Any:
    """The test's row in the site health matrix; filled by the test, written at teardown."""
    row: dict[str, Any] = {"test": request.node.nodeid, "worker": report.worker_id()}
    t0 = time.monotonic()
    yield row
    row.setdefault("time_s", round(time.monotonic() - t0, 1))
    row["outcome"] = _outcome(request.node)
    for when in ("setup", "call"):
        reason = getattr(getattr(request.node, f"rep_{when}", None), "wasxfail", None)
        if reason:
            row["xfail_reason"] = reason
    err = _error_text(request.node)
    if err and row["outcome"] not in ("passed", "xfailed"):
        row["error"] = err
    report.append(row)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def playwright_driver() -> AsyncIterator[Any]:
    """One Playwright driver per worker (starting one takes ~0.5 s); every test still launches its
    own Chromium with its own profile."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        yield pw


@pytest_asyncio.fixture(loop_scope="session")
async def make_farm(
    request: pytest.FixtureRequest, health: dict[str, Any], playwright_driver: Any
) -> AsyncIterator[Callable[..., Awaitable[Farm]]]:
    """make_farm(ext_dir=..., viewport=..., others=(more extension dirs,)) -> a started Farm; every
    farm made is stopped at teardown."""
    farms: list[Farm] = []
    pw = playwright_driver
    tmp = Path(tempfile.mkdtemp(prefix="wf-farm-"))

    async def make(
        ext_dir: Path = EXTENSION_DIR,
        tag: str = "",
        viewport: dict[str, int] | None = None,
        others: tuple[Path, ...] = (),
    ) -> Farm:
        name = safe_name(request.node.nodeid) + (f"-{tag}" if tag else "")
        farm = Farm(pw, tmp / f"farm{len(farms)}", name, ext_dir, viewport, others)
        farms.append(farm)
        await farm.start()
        health.setdefault("start_s", farm.timings.get("start_s"))
        health.setdefault("chromium", farm.browser.version)
        return farm

    try:
        yield make
    finally:
        failed = _failed(request.node)
        for f in farms:
            try:
                await f.stop(failed)
                if f.artifacts:
                    health.setdefault("artifacts", []).extend(f.artifacts)
            except Exception as exc:  # noqa: BLE001 - teardown must stop the others
                health.setdefault("teardown_errors", []).append(repr(exc))
        if os.environ.get("WF_KEEP_TMP") != "1":
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


@pytest_asyncio.fixture(loop_scope="session")
async def farm(make_farm: Callable[..., Awaitable[Farm]]) -> Farm:
    return await make_farm()
