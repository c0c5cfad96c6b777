"""Two tiny shards run for real, then merged: the shard selection, each shard's matrix and the
merge command work on what a real run writes (the cheap proofs are in tests/testkit/test_farm_shard_plan.py).

A plan of two shards (the first and the last site with one scenario, one in each) is written to a temp file;
each shard runs Phase B of its one site (`SITE=` keeps it to one scenario) as a separate pytest
session with its own report dir, and the merge command joins their health.json files.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.farm import shards
from testkit.sites import SITES, catalog

pytestmark = [pytest.mark.farm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
# the first and the last site that have exactly one scenario (adding a scenario to a site must
# not break this test): one in each shard
_SINGLES = [s for s in SITES if len(catalog(s)) == 1]
PICKS = (_SINGLES[0], _SINGLES[-1])


def run_shard(tmp: Path, plan: Path, name: str, site: str) -> dict[str, Any]:
    env = {**os.environ, "SITE": site, "WF_SHARD_PLAN": str(plan), "WF_REPORT_DIR": str(tmp / name)}
    env.pop("PYTEST_XDIST_WORKER", None)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "e2e/test_farm_phase_b.py", "--shard", name],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "1 passed" in out.stdout and "deselected" not in out.stdout, out.stdout[-2000:]
    matrix: dict[str, Any] = json.loads((tmp / name / "health.json").read_text("utf-8"))
    return matrix


async def test_two_real_shards_merge(tmp_path: Path, health: dict[str, Any]) -> None:
    health.update(site="_farm", phase="other", variant="shards-merge")
    assert PICKS[0] != PICKS[1]
    half = SITES.index(PICKS[1])
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"siteless": "1", "shards": [list(SITES[:half]), list(SITES[half:])]}))
    assert [shards.load(plan).shard_of(s) for s in PICKS] == ["1", "2"]
    parts = [await asyncio.to_thread(run_shard, tmp_path, plan, str(i + 1), site) for i, site in enumerate(PICKS)]
    for part, site in zip(parts, PICKS, strict=True):
        assert set(part["sites"]) == {site}, "a shard's matrix holds its own site only"
        (row,) = part["sites"][site]["phase_b"].values()
        assert row["outcome"] == "passed" and row["turns_captured"] == row["turns_expected"]
        (tmp_path / f"health-{site}.json").write_text(json.dumps(part), "utf-8")
    out = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "testkit.farm.merge_health",
            str(tmp_path / "merged"),
            *(str(tmp_path / f"health-{s}.json") for s in PICKS),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    merged = json.loads((tmp_path / "merged" / "health.json").read_text("utf-8"))
    # Phase A was not run (only Phase B's file): its cells stay `not_run` and the merge says so
    assert out.returncode == 1, out.stdout + out.stderr
    assert sorted(merged["sites"]) == sorted(PICKS)
    for part, site in zip(parts, PICKS, strict=True):
        assert merged["sites"][site] == part["sites"][site]
    assert merged["summary"]["phase_b"] == {"passed": 2}
    assert merged["summary"]["phase_a"] == {"not_run": 6}
    assert merged["shards"].keys() == {"1", "2"}
    assert merged["line"] in out.stdout and "B 2/2" in merged["line"]
    health.update(merged_line=merged["line"])
