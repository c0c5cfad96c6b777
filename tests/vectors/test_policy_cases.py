"""The resolver against the shared vectors (extension/shared/resolver.js runs the same file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.governance.policy import sensitive_defaults
from server.governance.resolver import resolve

CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "policy-cases.json").read_text("utf-8"))["cases"]


def snapshot_for(rules: list[dict[str, str]]) -> dict:
    sens = sensitive_defaults()
    return {
        "global_default": "collect",
        "rules": rules,
        "sensitive": {k: sens[k] for k in ("domains", "suffixes", "labels", "exact")},
    }


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 80
    assert len({c["name"] for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict) -> None:
    got = resolve(case["host"], snapshot_for(case["rules"]))
    assert {"mode": got.mode, "reason": got.reason} == case["expect"]


def test_sensitive_list_is_large_and_categorised() -> None:
    sens = sensitive_defaults()
    assert len(sens["domains"]) >= 300
    cats = set(sens["domains"].values())
    assert {"bank", "health", "government", "identity"} <= cats
    assert set(sens["sources"]) >= {"bank", "health", "government", "identity"}
    for host in sens["domains"]:
        assert host == host.lower().strip(".") and " " not in host
