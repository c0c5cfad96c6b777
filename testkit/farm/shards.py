"""The farm in shards, by site: which shard runs which test (`pytest e2e --shard 2`).

The plan is data, checked in next to this module (`shards.json`; `WF_SHARD_PLAN=<file>` reads
another): a list of shards, each a list of sites, plus the one shard that also runs the tests that
belong to no site (the farm's self-checks: skeleton, leaky builds, the note test, the side panel).
A test's site is read from its parameters — Phase A's `site`, Phase B's `fixture.site`, a real
page's URL through the extension's registry (as `SITE=` selects it) — so a site's Phase A, Phase B
and real pages run on the same machine and a red shard reads as "these sites".

`--shard K` deselects every other test through pytest's own deselection (what `-k` and `-m` do),
so `--collect-only` lists exactly what a shard runs, and the site health matrix of a shard expects
only its own cells. The plan must be a partition of `testkit.sites.SITES` (checked on load: a site in
no shard or in two is an error, never a silently skipped site); tests/testkit/test_farm_shard_plan.py collects
every shard and proves they cover the farm exactly once.

  python -m testkit.farm.shards names           # ["1", "2", ...]: the CI matrix
  python -m testkit.farm.shards show            # which sites each shard runs
  python -m testkit.farm.shards plan 4 [--from e2e/report/health.json]
                                               # a balanced plan (longest site first onto the
                                               # lightest shard), from a run's times or estimates
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PLAN_FILE = Path(__file__).resolve().with_name("shards.json")
REGISTRY = Path(__file__).resolve().parents[2] / "extension" / "sites" / "registry.json"

# Estimated seconds per test (one worker, this machine) when no run's times are given.
ESTIMATE_S = {"phase_a": 20.0, "phase_b": 10.0, "real_pages": 9.0, "siteless": 90.0}


class PlanError(ValueError):
    """The shard plan is not a partition of the farm's sites."""


@dataclass(frozen=True)
class Plan:
    shards: tuple[tuple[str, ...], ...]
    siteless: str  # the name of the shard that also runs the tests of no site

    @property
    def names(self) -> list[str]:
        return [str(i + 1) for i in range(len(self.shards))]

    def sites(self, name: str) -> tuple[str, ...]:
        if name not in self.names:
            raise PlanError(f"no shard {name!r}; the plan has {self.names}")
        return self.shards[int(name) - 1]

    def shard_of(self, site: str | None) -> str:
        """The shard that runs a site's tests; a test of no known site runs in `siteless`."""
        for name, sites in zip(self.names, self.shards, strict=True):
            if site in sites:
                return name
        return self.siteless

    def as_json(self) -> dict[str, Any]:
        return {"siteless": self.siteless, "shards": [list(s) for s in self.shards]}


def validate(data: Mapping[str, Any], sites: Iterable[str]) -> Plan:
    shards = data.get("shards")
    if not isinstance(shards, list) or not shards:
        raise PlanError("the plan needs a non-empty list `shards` (each a list of sites)")
    if not all(isinstance(s, list) and all(isinstance(x, str) for x in s) for s in shards):
        raise PlanError("every shard is a list of site ids")
    known = list(sites)
    seen: dict[str, int] = {}
    for i, shard in enumerate(shards, 1):
        for site in shard:
            if site in seen:
                raise PlanError(f"site {site!r} is in shard {seen[site]} and shard {i}")
            seen[site] = i
    unknown = sorted(set(seen) - set(known))
    missing = [s for s in known if s not in seen]
    if unknown:
        raise PlanError(f"the plan names sites the farm does not know: {unknown}")
    if missing:
        raise PlanError(f"sites in no shard (they would never run): {missing}")
    siteless = str(data.get("siteless", "1"))
    plan = Plan(tuple(tuple(s) for s in shards), siteless)
    if siteless not in plan.names:
        raise PlanError(f"`siteless` names shard {siteless!r}; the plan has {plan.names}")
    return plan


def plan_path() -> Path:
    return Path(os.environ.get("WF_SHARD_PLAN") or PLAN_FILE)


def load(path: Path | None = None) -> Plan:
    from testkit.sites import SITES

    p = path or plan_path()
    try:
        data = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise PlanError(f"cannot read the shard plan {p}: {exc}") from exc
    return validate(data, SITES)


# ---------------------------------------------------------------------------- which site a test is
def registry_site(host: str) -> str | None:
    """The registry's site for a host (the host or a subdomain of one of its hosts: the one
    host-or-subdomain rule, server/urls.py)."""
    from server.urls import host_or_subdomain  # here: `names` and `show` need no install

    try:
        reg = json.loads(REGISTRY.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    for s in reg.get("sites", []):
        if any(host_or_subdomain(host, h) for h in s.get("hosts") or []):
            return str(s["id"])
    return None


def _site_of_value(name: str, value: Any) -> str | None:
    if name == "site" and isinstance(value, str):
        return value
    site = getattr(value, "site", None)  # a Phase B fixture (testkit.sites.Fixture)
    if isinstance(site, str):
        return site
    # a real page: (html path, transcript {site, url, turns}); the registry decides, as SITE= does
    parts = value if isinstance(value, tuple) else (value,)
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("url"), str):
            host = urlsplit(part["url"]).hostname or ""
            found = registry_site(host) or part.get("site")
            return found if isinstance(found, str) else None
    return None


def item_site(item: Any) -> str | None:
    """The site a collected test belongs to, from its parameters; None for the farm's
    self-checks (no site parameter)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for name, value in callspec.params.items():
        site = _site_of_value(name, value)
        if site is not None:
            return site
    return None


def select(items: list[Any], plan: Plan, shard: str) -> tuple[list[Any], list[Any]]:
    """(kept, deselected) for one shard."""
    plan.sites(shard)  # raises on an unknown shard name
    kept: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        (kept if plan.shard_of(item_site(item)) == shard else dropped).append(item)
    return kept, dropped


# ---------------------------------------------------------------------------- balancing
def site_costs(matrix: Mapping[str, Any] | None) -> tuple[dict[str, float], float]:
    """Seconds per site and for the site-less tests: from a run's health matrix (each row's
    `time_s`; Phase A by its whole-test row), else estimated from what the farm holds."""
    from testkit.sites import SITES, catalog

    costs: dict[str, float] = dict.fromkeys(SITES, 0.0)
    siteless = 0.0
    if matrix is not None:
        for site, entry in matrix.get("sites", {}).items():
            total = 0.0
            for phase, bucket in entry.items():
                for key, row in bucket.items():
                    if phase == "phase_a" and key != "run":
                        continue  # the windows' time is inside the whole test's row
                    total += float(row.get("time_s") or 0)
            if site in costs:
                costs[site] += total
            else:
                siteless += total
        return costs, siteless
    for s in SITES:
        costs[s] = ESTIMATE_S["phase_a"] + ESTIMATE_S["phase_b"] * len(catalog(s))
    return costs, ESTIMATE_S["siteless"]


def balance(costs: Mapping[str, float], siteless: float, n: int) -> Plan:
    """Longest processing time first: each site, longest first, onto the lightest shard; the
    site-less tests are placed like a site."""
    if n < 1:
        raise PlanError("a plan needs at least one shard")
    loads = [0.0] * n
    shards: list[list[str]] = [[] for _ in range(n)]
    siteless_at = 0
    work = sorted([*costs.items(), ("", siteless)], key=lambda kv: (-kv[1], kv[0]))
    for site, cost in work:
        i = min(range(n), key=lambda k: (loads[k], k))
        loads[i] += cost
        if site:
            shards[i].append(site)
        else:
            siteless_at = i
    from testkit.sites import SITES

    order = {s: k for k, s in enumerate(SITES)}
    return Plan(tuple(tuple(sorted(s, key=order.__getitem__)) for s in shards), str(siteless_at + 1))


ABOUT = (
    "Which sites each farm shard runs (testkit/farm/shards.py; tests/testkit/test_farm_shard_plan.py proves the "
    "shards cover the farm exactly once). Rebalance from a run's times: "
    "python -m testkit.farm.shards plan 4 --from e2e/report/health.json > testkit/farm/shards.json"
)


def dumps(plan: Plan, about: str = ABOUT) -> str:
    """The plan as shards.json holds it: one shard per line."""
    lines = ",\n".join("  " + json.dumps(list(s)) for s in plan.shards)
    head = f' "about": {json.dumps(about)},\n' if about else ""
    return f'{{\n{head} "siteless": "{plan.siteless}",\n "shards": [\n{lines}\n ]\n}}\n'


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m testkit.farm.shards", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("names", help="the shard names, as JSON (a CI matrix)")
    sub.add_parser("show", help="which sites each shard runs")
    p = sub.add_parser("plan", help="print a balanced plan (JSON) for N shards")
    p.add_argument("n", type=int)
    p.add_argument("--from", dest="source", type=Path, help="a run's health.json (its times)")
    args = ap.parse_args(argv)
    if args.cmd == "plan":
        matrix = json.loads(args.source.read_text("utf-8")) if args.source else None
        costs, siteless = site_costs(matrix)
        plan = balance(costs, siteless, args.n)
        print(dumps(plan))
        loads = [sum(costs[s] for s in shard) for shard in plan.shards]
        loads[int(plan.siteless) - 1] += siteless
        print("estimated seconds per shard: " + ", ".join(f"{x:.0f}" for x in loads), file=sys.stderr)
        return 0
    plan = load()
    if args.cmd == "names":
        print(json.dumps(plan.names))
    else:
        for name in plan.names:
            extra = " + the farm's self-checks" if name == plan.siteless else ""
            print(f"shard {name}: {' '.join(plan.sites(name))}{extra}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
