"""The title-heading rule on the shared vectors the panel's reader runs too (tests/js/text.test.mjs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.dataio.markdown import without_title

CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "title-heading-cases.json").read_text("utf-8"))


def test_there_are_cases() -> None:
    assert len(CASES["cases"]) >= 10


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_without_title(case: dict[str, str]) -> None:
    assert without_title(case["markdown"], case["title"]) == case["expect"]
