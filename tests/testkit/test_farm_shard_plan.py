"""The farm in shards: every shard in turn runs the whole farm exactly once, and the shards'
health matrices merge into the matrix one run writes.

Coverage is proven on pytest's own collection (`--collect-only`, no browser): the farm collected
whole, then shard by shard with `--shard K` — the shards are disjoint, none is empty, and their
union is the whole farm. The merge is proven on health-matrix rows: a realistic single run's rows,
split by the plan into shard matrices (each built as that shard's run builds it), merged, and
compared with the single run's matrix. test_two_real_shards_merge (farm: Chromium) runs two tiny
shards for real and merges what they wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.farm import merge_health, report, shards
from testkit.farm.cells import status, summary_line
from testkit.farm.merge_health import MergeError, merge
from testkit.farm.shards import PlanError
from testkit.sites import SITES, catalog

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "farm.yml"


def collect(*args: str, site: str | None = None, plan: Path | None = None) -> list[str]:
    """Test ids pytest collects for the farm with these arguments (a subprocess, no browser)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SITE", "WF_SHARD_PLAN")}
    if site:
        env["SITE"] = site
    if plan:
        env["WF_SHARD_PLAN"] = str(plan)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return [line.strip() for line in out.stdout.splitlines() if "::" in line]


# --------------------------------------------------------------------------- coverage
@pytest.fixture(scope="module")
def collected() -> dict[str, list[str]]:
    plan = shards.load()
    out = {"all": collect("e2e")}
    for name in plan.names:
        out[name] = collect("e2e", "--shard", name)
    return out


def test_every_shard_in_turn_runs_the_whole_farm_once(collected: dict[str, list[str]]) -> None:
    plan = shards.load()
    whole = collected["all"]
    assert len(whole) == len(set(whole)) and len(whole) > 50, whole[:5]
    seen: dict[str, str] = {}
    for name in plan.names:
        ids = collected[name]
        assert ids, f"shard {name} runs nothing"
        for test_id in ids:
            assert test_id not in seen, f"{test_id} runs in shard {seen[test_id]} and shard {name}"
            seen[test_id] = name
    missed = [t for t in whole if t not in seen]
    extra = [t for t in seen if t not in whole]
    assert not missed, f"in no shard: {missed}"
    assert not extra, f"in a shard, not in the farm: {extra}"


def test_a_site_runs_whole_in_its_own_shard(collected: dict[str, list[str]]) -> None:
    """Phase A, Phase B and real pages of a site are all in the shard the plan gives the site;
    the self-checks (tests of no site) in the plan's `siteless` shard."""
    plan = shards.load()
    for site in SITES:
        ids = collected[plan.shard_of(site)]
        assert f"e2e/test_farm_phase_a.py::test_phase_a[{site}]" in ids
        for fx in catalog(site):
            assert f"e2e/test_farm_phase_b.py::test_capture_insert_and_note[{fx.id}]" in ids
    self_checks = [t for t in collected["all"] if "test_farm_skeleton.py" in t or "test_sidepanel" in t]
    assert self_checks and all(t in collected[plan.siteless] for t in self_checks)


def test_real_pages_follow_site_selection(collected: dict[str, list[str]]) -> None:
    """A real page lands in the shard of the site `SITE=` files it under (the registry's site
    for its URL), so a shard and `SITE=` agree."""
    plan = shards.load()
    real = [t for t in collected["all"] if "test_farm_real_pages.py" in t]
    if not real or any("no-real-pages" in t for t in real):
        pytest.skip("no real saved pages here (../shared/reference/real-dom/)")
    checked = 0
    for site in ("chatgpt",):
        for test_id in collect("e2e/test_farm_real_pages.py", site=site):
            # a test of no page (the gate's own control) is a self-check, in the siteless shard
            shard = plan.shard_of(site) if "[" in test_id else plan.siteless
            assert test_id in collected[shard], (test_id, site)
            checked += "[" in test_id
    assert checked >= 1, "the positive control: SITE= selected real pages to check"


def test_an_unknown_shard_is_an_error() -> None:
    with pytest.raises(PlanError, match="no shard '99'"):
        shards.select([], shards.load(), "99")


# --------------------------------------------------------------------------- the plan
def test_the_plan_must_partition_the_sites() -> None:
    assert shards.validate({"shards": [["a", "b"], ["c"]]}, ["a", "b", "c"]).names == ["1", "2"]
    with pytest.raises(PlanError, match="in no shard"):
        shards.validate({"shards": [["a"], ["c"]]}, ["a", "b", "c"])
    with pytest.raises(PlanError, match="shard 1 and shard 2"):
        shards.validate({"shards": [["a", "b"], ["b", "c"]]}, ["a", "b", "c"])
    with pytest.raises(PlanError, match="does not know"):
        shards.validate({"shards": [["a", "b", "c", "zz"]]}, ["a", "b", "c"])
    with pytest.raises(PlanError, match="siteless"):
        shards.validate({"shards": [["a", "b", "c"]], "siteless": "2"}, ["a", "b", "c"])


def test_balance_places_every_site_once_and_evens_the_load() -> None:
    costs = {s: float(10 + 3 * i) for i, s in enumerate(SITES)}
    plan = shards.balance(costs, 90.0, 4)
    placed = [s for shard in plan.shards for s in shard]
    assert sorted(placed) == sorted(SITES)
    shards.validate(plan.as_json(), SITES)
    loads = [sum(costs[s] for s in shard) for shard in plan.shards]
    loads[int(plan.siteless) - 1] += 90.0
    assert max(loads) - min(loads) <= max(costs.values())


def test_the_checked_in_plan_is_valid_and_names_the_ci_matrix() -> None:
    plan = shards.load(shards.PLAN_FILE)
    assert len(plan.names) >= 2
    out = subprocess.run(
        [sys.executable, "-m", "testkit.farm.shards", "names"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == plan.names


# --------------------------------------------------------------------------- merge
def single_run_rows() -> list[dict[str, Any]]:
    """Rows as one whole-farm run writes them: every site's Phase A windows and run, every
    fixture scenario, real pages, the self-checks — with failures, gaps, an xfail, a skip, and
    one scenario that never ran."""
    rows: list[dict[str, Any]] = []
    for i, site in enumerate(SITES):
        for v in ("memory_off", "site_off", "sensitive"):
            bad = site == "grok" and v == "site_off"
            rows.append(
                {
                    "site": site,
                    "phase": "phase_a",
                    "variant": v,
                    "scenario_used": "chat",
                    "worker": f"gw{i % 2}",
                    "time_s": 5.1,
                    "requests": 3 if bad else 0,
                    "violations": 1 if bad else 0,
                    "injected": False,
                    "outcome": "failed" if bad else "passed",
                    **({"error": "AssertionError: grok.com is off, yet: carries 'grok.com'"} if bad else {}),
                    "steps": {"controls": 0.6, "tabs": 0.4, "type_select": 0.5, "idle": 2.0},
                }
            )
        rows.append(
            {
                "test": f"e2e/test_farm_phase_a.py::test_phase_a[{site}]",
                "site": site,
                "phase": "phase_a",
                "variant": "run",
                "ledger": 14,
                "time_s": 19.2,
                "variants": {
                    v: "failed" if site == "grok" and v == "site_off" else "passed"
                    for v in ("memory_off", "site_off", "sensitive")
                },
                "outcome": "failed" if site == "grok" else "passed",
                "chromium": "131.0.6778.85",
            }
        )
        for fx in catalog(site):
            if fx.id == "claude/virtualised":
                continue  # never ran: the matrix must say so
            n = len(fx.expected.get("turns", []))
            short = fx.id == "chatgpt/streaming"
            rows.append(
                {
                    "test": f"e2e/test_farm_phase_b.py::test_capture_insert_and_note[{fx.id}]",
                    "site": site,
                    "phase": "phase_b",
                    "scenario": fx.scenario,
                    "turns_expected": n,
                    "turns_captured": n - 1 if short else n,
                    "match": not short,
                    "injected": True,
                    "probe_requests": 2,
                    "capture_requests": 3,
                    "selector_misses": 0,
                    "composer_insert": True,
                    "note_green": True,
                    "time_s": 8.4,
                    "outcome": "failed" if short else "passed",
                }
            )
    real = [
        ("chatgpt", "chatgpt-chat", dict(expected=11, captured=11, matched=11, misses=[])),
        (
            "chatgpt",
            "oae-chatgpt-share",
            dict(expected=4, captured=0, matched=0, misses=["no_turns"], silent_partial=False),
        ),
        ("gemini", "gemini-chat", dict(expected=6, captured=3, matched=3, misses=[], silent_partial=True)),
        (
            "claude",
            "claude-chat",
            dict(
                turns_expected=14,
                turns_captured=14,
                matched_turns=14,
                match=True,
                blocks={"code": "2/2", "table": "1/1"},
            ),
        ),
        (
            "perplexity",
            "oae-perplexity-deep-research",
            dict(expected=2, captured=1, matched=1, misses=["missing_role"]),
        ),
    ]
    for site, name, fields in real:
        outcome = (
            "xfailed"
            if name == "oae-perplexity-deep-research"
            else ("failed" if name == "oae-chatgpt-share" else "passed")
        )
        rows.append(
            {
                "test": f"e2e/test_farm_real_pages.py::test_real_page_capture[{name}]",
                "site": site,
                "phase": "real_pages",
                "variant": name,
                "supported": True,
                "time_s": 7.0,
                "outcome": outcome,
                **fields,
            }
        )
    for name, outcome in (
        ("skeleton", "passed"),
        ("positive-controls", "passed"),
        ("ledger-can-fail", "passed"),
        ("stranger-port", "passed"),
    ):
        rows.append({"site": "_farm", "phase": "other", "variant": name, "outcome": outcome, "time_s": 3.0})
    for leak in ("content-script", "worker-activation"):
        rows.append(
            {"site": "_leaky", "phase": "other", "variant": leak, "violations": 4, "outcome": "passed", "time_s": 9.0}
        )
    rows.append(
        {
            "site": "_sidepanel",
            "phase": "other",
            "variant": "test_outbox[chromium]",
            "outcome": "skipped",
            "time_s": 0.1,
        }
    )
    return rows


def shard_matrices(rows: list[dict[str, Any]], plan: shards.Plan) -> list[tuple[str, dict[str, Any]]]:
    """Each shard's matrix, built as `pytest e2e --shard K` builds it (report.write)."""
    out = []
    for name in plan.names:
        mine = [dict(r) for r in rows if plan.shard_of(r.get("site")) == name]
        m = report.build_matrix(mine, report.expected_cells(name))
        m["selection"] = {"shard": name, "site": None, "plan": plan.as_json()}
        m["build"] = {"commit": "abc1234", "chromium": "131.0.6778.85"}
        m["wall_s"] = 100.0 + int(name)
        out.append((f"health-{name}.json", json.loads(json.dumps(m))))  # through JSON, as on disk
    return out


COMPARED = ("sites", "summary", "expected")


def test_merged_shards_equal_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITE", raising=False)
    monkeypatch.delenv("WF_SHARD_PLAN", raising=False)
    rows = single_run_rows()
    single = json.loads(json.dumps(report.build_matrix(rows, report.expected_cells())))
    single["build"] = {"commit": "abc1234", "chromium": "131.0.6778.85"}
    parts = shard_matrices(rows, shards.load())
    assert all(p["sites"] for _, p in parts), "every shard holds some of the run"
    merged = merge(parts)
    for key in COMPARED:
        assert merged[key] == single[key], key
    assert summary_line(merged) == summary_line(single)
    # the merge kept what matters: the never-run scenario, the failures, the gaps
    assert status(merged["sites"]["claude"]["phase_b"]["virtualised"]) == "notrun"
    assert status(merged["sites"]["grok"]["phase_a"]["site_off"]) == "fail"
    assert status(merged["sites"]["gemini"]["real_pages"]["gemini-chat"]) == "gap"
    assert merged["wall_s"] == 104.0 and merged["machine_s"] == 410.0
    assert list(merged["shards"]) == shards.load().names


def test_the_comparison_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Positive control for the equality: a shard that lost one row no longer merges into the
    single run's matrix, and its cell is `not_run`."""
    monkeypatch.delenv("SITE", raising=False)
    monkeypatch.delenv("WF_SHARD_PLAN", raising=False)
    rows = single_run_rows()
    single = report.build_matrix(rows, report.expected_cells())
    parts = shard_matrices([r for r in rows if not (r["site"] == "qwen" and r["phase"] == "phase_b")], shards.load())
    merged = merge(parts)
    assert merged["sites"] != single["sites"]
    assert merged["sites"]["qwen"]["phase_b"]["chat"]["outcome"] == "not_run"


def test_merge_refuses_what_is_not_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITE", raising=False)
    monkeypatch.delenv("WF_SHARD_PLAN", raising=False)
    plan = shards.load()
    parts = shard_matrices(single_run_rows(), plan)
    with pytest.raises(MergeError, match="shard\\(s\\) \\['2'\\] of the plan are missing"):
        merge([p for p in parts if p[1]["selection"]["shard"] != "2"])
    with pytest.raises(MergeError, match="given twice"):
        merge([*parts, parts[0]])
    # a test that ran in two shards: shard 2's Phase A row of one of its sites also in shard 3
    site = plan.sites("2")[0]
    stray = dict(parts[1][1]["sites"][site]["phase_a"]["memory_off"])
    third = json.loads(json.dumps(parts[2][1]))
    third["sites"][site] = {"phase_a": {"memory_off": stray}, "phase_b": {}, "real_pages": {}, "other": {}}
    with pytest.raises(MergeError, match=f"{site}/phase_a/memory_off \\(shards 2 and 3\\)"):
        merge([parts[0], parts[1], ("health-3.json", third), parts[3]])
    other_plan = json.loads(json.dumps(parts[3][1]))
    other_plan["selection"]["plan"] = {"siteless": "1", "shards": [list(SITES)]}
    with pytest.raises(MergeError, match="different plans"):
        merge([*parts[:3], ("health-4.json", other_plan)])


def test_merge_command_writes_the_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITE", raising=False)
    monkeypatch.delenv("WF_SHARD_PLAN", raising=False)
    files = []
    for name, m in shard_matrices(single_run_rows(), shards.load()):
        (tmp_path / name).write_text(json.dumps(m), "utf-8")
        files.append(str(tmp_path / name))
    out = tmp_path / "merged"
    rc = merge_health.main([str(out), *files])
    assert rc == 1, "the run has failures: the merge says so"
    merged = json.loads((out / "health.json").read_text("utf-8"))
    assert merged["line"].startswith("Wherefrom farm @abc1234 · Chromium 131.0.6778.85:")
    assert "grok/A/site_off" in merged["line"]
    assert "<details" in (out / "health.html").read_text("utf-8")
    assert merge_health.main([str(tmp_path / "again"), files[0], files[0]]) == 2
    assert not (tmp_path / "again").exists(), "a refused merge writes nothing"


# --------------------------------------------------------------------------- the CI workflow
def test_the_workflow_runs_one_job_per_shard_and_merges() -> None:
    """The workflow takes its matrix from the plan, runs each shard with --shard, uploads each
    shard's health.json, and merges them with the merge command in a final job."""
    text = WORKFLOW.read_text("utf-8")
    assert "python -m testkit.farm.shards names" in text
    assert "fromJSON(needs.plan.outputs.shards)" in text
    assert "--shard ${{ matrix.shard }}" in text
    assert "actions/upload-artifact" in text and "health-${{ matrix.shard }}" in text
    assert "needs: [plan, shard]" in text and "if: ${{ always() }}" in text
    assert "python -m testkit.farm.merge_health" in text
    # an extra, not a replacement: .ci/run stays one call of ./scripts/test, with no shard
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    assert ci.count("./scripts/test") == 1 and "shard" not in ci
    assert "run: ./scripts/test" not in text
