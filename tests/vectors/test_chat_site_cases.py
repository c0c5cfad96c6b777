"""Which chat site is this page, in Python (testkit/registry.py site_for_url, used by the farm's
real-page test), and the one Python match-pattern parser: the shared vectors that
extension/shared/sites.js runs too (tests/js/sites.test.mjs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testkit.registry import parse_match_pattern, pattern_host, site_for_url

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "chat-site-cases.json").read_text("utf-8"))["cases"]
PATTERNS: list[dict[str, Any]] = json.loads((FIXTURES / "match-pattern-cases.json").read_text("utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["url"])
def test_chat_site_of_a_url(case: dict[str, Any]) -> None:
    assert site_for_url(case["url"]) == case["site"]


@pytest.mark.parametrize("case", PATTERNS, ids=lambda c: c["pattern"])
def test_match_pattern(case: dict[str, Any]) -> None:
    assert (parse_match_pattern(case["pattern"]) is not None) == case["valid"]
    assert pattern_host(case["pattern"]) == case["host"]


def test_match_pattern_cases_both_ways() -> None:
    assert any(c["valid"] for c in PATTERNS) and any(not c["valid"] for c in PATTERNS)
