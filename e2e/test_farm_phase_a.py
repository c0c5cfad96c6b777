"""Phase A on each of the 22 sites: where the extension is off, nothing leaves the browser.

One browser and one server per site, three observation windows in turn — memory_off, site_off,
sensitive — each its own row in the health matrix, each checked even when an earlier one failed.
What each window does and checks is described in testkit/farm/phase_a.py and docs/testing.md.
"""

from __future__ import annotations

import pytest

from testkit.farm.phase_a import (
    OTHER_HTML,
    OTHER_URL,
    Variant,
    memory_off,
    route_html,
    sensitive,
    site_off,
)
from testkit.farm.selection import per_site_params
from testkit.farm.server import FarmError

pytestmark = [pytest.mark.farm, pytest.mark.slow]


@pytest.mark.parametrize(("site", "fixture"), per_site_params())
async def test_phase_a(site, fixture, make_farm, health):
    health.update(site=site, phase="phase_a", variant="run")
    if site is None or fixture is None:
        pytest.fail(f"no fixture for site {site!r} under fixtures/sites/{site}/ (Phase A needs one per site)")
    index = [p.values[0] for p in per_site_params()].index(site)
    farm = await make_farm()
    await route_html(farm, OTHER_URL, OTHER_HTML)
    variants = []
    for name, fn in (("memory_off", memory_off), ("site_off", site_off), ("sensitive", sensitive)):
        v = Variant(site, name, fixture.scenario)
        try:
            await (fn(farm, fixture, v, index) if fn is sensitive else fn(farm, fixture, v))
        except Exception as exc:  # noqa: BLE001 - every window runs; reported together below
            v.finish(exc)
        else:
            v.finish()
        variants.append(v)
        farm.lap(name)
    health["timings"] = farm.timings
    health["variants"] = {v.row["variant"]: v.row["outcome"] for v in variants}
    # the tap against the server's own ledger, over all three windows
    ledger_error = None
    try:
        led = await farm.check_ledger()
        health["ledger"] = led["ledger_requests"]
    except AssertionError as exc:
        ledger_error = str(exc)
        health["ledger"] = "mismatch"
    invalid = [v for v in variants if v.invalid]
    failed = [v for v in variants if v.error]
    if invalid:
        raise FarmError("invalid Phase A run:\n" + "\n".join(f"[{v.row['variant']}] {v.error}" for v in invalid))
    assert not failed, (
        "Phase A violations:\n"
        + "\n\n".join(f"[{v.row['variant']}] {v.error}" for v in failed)
        + (f"\n\n[ledger] {ledger_error}" if ledger_error else "")
    )
    assert ledger_error is None, ledger_error
