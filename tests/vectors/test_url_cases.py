"""server/urls.py normalise_url against the shared vectors (extension/shared/urls.js runs the same file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.urls import BadUrl, normalise_url

CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "url-cases.json").read_text("utf-8"))["cases"]


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40
    assert len({c["name"] for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict) -> None:
    if case["expect"] is None:
        with pytest.raises(BadUrl):
            normalise_url(case["url"])
    else:
        assert normalise_url(case["url"]) == case["expect"]
        assert normalise_url(case["expect"]) == case["expect"], "normalising is idempotent"
