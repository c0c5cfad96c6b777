"""Which chat site is this page, in Python (e2e/sites.py site_for_url, used by the farm's real-page
test): the shared vectors extension/shared/sites.js runs too (tests/js/sites.test.mjs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from e2e.sites import site_for_url

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parent.parent / "fixtures" / "chat-site-cases.json").read_text("utf-8")
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["url"])
def test_chat_site_of_a_url(case: dict[str, Any]) -> None:
    assert site_for_url(case["url"]) == case["site"]
