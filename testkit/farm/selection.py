"""Which fixtures the farm runs: all of them, or one site's (`SITE=claude ./scripts/test`)."""

from __future__ import annotations

import os
from typing import Any

import pytest


def site_filter() -> str | None:
    return (os.environ.get("SITE") or "").strip() or None


def _sites() -> tuple[str, ...]:
    from testkit.sites import SITES

    return SITES


def _catalog(site: str | None) -> list[Any]:
    from testkit.sites import catalog

    return catalog(site)


def per_site_params() -> list[Any]:
    """One param per chat site: (site, its first fixture or None when it has none yet)."""
    want = site_filter()
    sites = [s for s in _sites() if want is None or s == want]
    if not sites:
        return [pytest.param(want, None, id=f"unknown-site-{want}")]
    out = []
    for s in sites:
        fx = _catalog(s)
        out.append(pytest.param(s, fx[0] if fx else None, id=s))
    return out


def per_fixture_params() -> list[Any]:
    """One param per fixture scenario (site/scenario)."""
    want = site_filter()
    fxs = _catalog(want)
    if not fxs:
        return [pytest.param(None, id=f"no-fixtures-{want or 'all'}")]
    return [pytest.param(f, id=f.id) for f in fxs]
