"""Parity of the two resolvers on generated hosts and rule sets.

server/governance/resolver.py decides on the server; extension/shared/resolver.js decides
offline in the extension from the policy snapshot. fixtures/policy-cases.json pins chosen
cases for both; this test generates many more (labels, IDN, ports, trailing dots, IP
literals, the sensitive hosts and their lookalikes) and runs each batch through both: one
node subprocess per batch (the batch goes in a temp JSON file, an inline ESM script imports
resolver.js and prints the answers as JSON). Mode and reason must be equal for every case.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from server.governance.policy import sensitive_defaults
from server.governance.resolver import MODES, clean_host, resolve
from tests.conftest import skip_unless_optional

REPO = Path(__file__).resolve().parents[2]
RESOLVER_JS = REPO / "extension" / "shared" / "resolver.js"
NODE = shutil.which("node")


@pytest.fixture(autouse=True)
def _needs_node() -> None:
    if NODE is None:
        skip_unless_optional("node is not installed")


SENS = sensitive_defaults()
SENSITIVE = {k: SENS.get(k, {}) for k in ("domains", "suffixes", "labels", "exact")}
SENS_DOMAINS = sorted(SENSITIVE["domains"])
SENS_SUFFIXES = sorted(SENSITIVE["suffixes"])
SENS_LABELS = sorted(SENSITIVE["labels"])

# Reads the batch file named in argv, resolves each case, prints [{host, mode, reason}].
NODE_SCRIPT = """
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [resolverPath, batchPath] = process.argv.slice(-2);
const mod = await import(pathToFileURL(resolverPath).href);
const { sensitive, cases } = JSON.parse(readFileSync(batchPath, 'utf8'));
const out = cases.map((c) => {
  try {
    const r = mod.resolve(c.host, { global_default: c.global_default, rules: c.rules, sensitive });
    return { host: r.host, mode: r.mode, reason: r.reason };
  } catch (e) {
    return { error: String(e && e.stack || e) };
  }
});
process.stdout.write(JSON.stringify(out));
"""


def run_node(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not RESOLVER_JS.exists():
        pytest.fail(f"{RESOLVER_JS.relative_to(REPO)} does not exist yet: the extension's resolver is missing")
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch.json"
        batch.write_text(json.dumps({"sensitive": SENSITIVE, "cases": cases}), "utf-8")
        proc = subprocess.run(  # noqa: S603 - fixed argv, our own script
            [NODE, "--input-type=module", "-e", NODE_SCRIPT, str(RESOLVER_JS), str(batch)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, f"node failed:\n{proc.stderr}"
    out = json.loads(proc.stdout)
    assert len(out) == len(cases)
    return out


# ---------------------------------------------------------------- generated hosts

ASCII_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,12}[a-z0-9])?", fullmatch=True)
# Letters real IDN hosts use (Latin with diacritics, German sharp s, Cyrillic and Greek
# lookalikes, CJK, Japanese kana), upper and lower case.
IDN_CHARS = "abcdeiopsxyzüöäéèçñåøßÜÖÉаеорсхукαβγοκ中文日本語ひらがなカタ"
IDN_LABEL = st.text(alphabet=IDN_CHARS, min_size=1, max_size=10)
LABEL = st.one_of(ASCII_LABEL, ASCII_LABEL, ASCII_LABEL, IDN_LABEL, st.sampled_from(SENS_LABELS))
NAME = st.lists(LABEL, min_size=1, max_size=5).map(".".join)

IPV4 = st.ip_addresses(v=4).map(str)
IPV6 = st.ip_addresses(v=6).map(str)
LOCAL_IPS = st.sampled_from(
    [
        "127.0.0.1",
        "127.1.2.3",
        "10.0.0.1",
        "172.16.5.4",
        "172.32.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "8.8.8.8",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",  # noqa: S104
        "::ffff:127.0.0.1",
        "::ffff:8.8.8.8",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:c0a8:101",
        "::ffff:1.1.1.1",
        "2001:db8::1",
        "2606:4700::1111",
        "64:ff9b::1.2.3.4",
        "2002:7f00:1::",
    ]
)


def _lookalikes(domain: str) -> list[str]:
    first, _, rest = domain.partition(".")
    out = [
        domain,
        "www." + domain,
        "a.b." + domain,
        "not" + domain,
        "x-" + domain,
        domain + ".evil.example",
        first + "-secure." + rest if rest else first + "-x",
        first[:-1] + ("0" if first[-1:] != "0" else "o") + ("." + rest if rest else ""),
        domain.replace(".", "-"),
        domain.upper(),
        domain + ".",
        "login." + domain,
    ]
    if "o" in first:
        out.append(domain.replace("o", "о", 1))  # Cyrillic o
    if "a" in first:
        out.append(domain.replace("a", "а", 1))  # Cyrillic a
    return out


SENSITIVE_HOSTS = st.sampled_from(SENS_DOMAINS).flatmap(lambda d: st.sampled_from(_lookalikes(d)))
SUFFIX_HOSTS = st.tuples(st.sampled_from(SENS_SUFFIXES), st.lists(ASCII_LABEL, max_size=2)).map(
    lambda t: ".".join([*t[1], t[0]])
) | st.sampled_from(SENS_SUFFIXES).map(lambda s: "not" + s)
LABEL_HOSTS = st.tuples(st.sampled_from(SENS_LABELS), st.lists(ASCII_LABEL, min_size=0, max_size=3)).map(
    lambda t: ".".join([t[0], *t[1]])
)
ODD = st.sampled_from(
    [
        "",
        " ",
        ".",
        "..",
        "a..b",
        "[",
        "[]",
        "[::1",
        "::1]",
        "a:b:c",
        ":80",
        "example.com:",
        "EXAMPLE.COM",
        " example.com ",
        "localhost",
        "LOCALHOST.",
        "localhost:37711",
        "xn--bcher-kva.example",
        "xn--",
        "-a.com",
        "a-.com",
        "_dmarc.example.com",
        "*.example.com",
        "1.2.3",
        "1.2.3.4.5",
        "01.2.3.4",
        "256.1.1.1",
        "a" * 63 + ".com",
        "a" * 64 + ".com",
        "0x7f.0.0.1",
        "2130706433",
    ]
)

BASE_HOST = st.one_of(NAME, NAME, IPV4, IPV6, LOCAL_IPS, SENSITIVE_HOSTS, SENSITIVE_HOSTS, SUFFIX_HOSTS, LABEL_HOSTS)


@st.composite
def host_forms(draw: st.DrawFn) -> str:
    """A host as it may reach a resolver: with a port, trailing dots, brackets, odd case."""
    base = draw(st.one_of(BASE_HOST, BASE_HOST, BASE_HOST, ODD))
    is_v6 = ":" in base and not base.startswith("[") and base.count(":") > 1
    if is_v6 and draw(st.booleans()):
        base = f"[{base}]"
    if draw(st.integers(0, 5)) == 0 and not (":" in base and not base.startswith("[")):
        base += draw(st.sampled_from([":80", ":443", ":8080", ":37711", ":"]))
    elif draw(st.integers(0, 6)) == 0 and not is_v6:
        base += draw(st.sampled_from([".", ".."]))
    if draw(st.integers(0, 6)) == 0:
        base = base.upper()
    return base


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    host = draw(host_forms())
    cleaned = clean_host(host)
    parents = [".".join(cleaned.split(".")[i:]) for i in range(cleaned.count(".") + 1)] if cleaned else []
    # rule hosts as the server stores them (cleaned): parents of the host, sensitive domains, random
    rule_host = st.one_of(
        st.sampled_from(parents) if parents else st.nothing(),
        st.sampled_from(SENS_DOMAINS),
        NAME.map(clean_host),
        LOCAL_IPS.map(clean_host),
    ).filter(bool)
    rules = draw(st.dictionaries(rule_host, st.sampled_from(MODES), max_size=4))
    return {
        "host": host,
        "global_default": draw(st.sampled_from(MODES)),
        "rules": [{"host": h, "mode": m} for h, m in rules.items()],
    }


def python_answers(batch: list[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for c in batch:
        r = resolve(c["host"], {"global_default": c["global_default"], "rules": c["rules"], "sensitive": SENSITIVE})
        out.append({"host": r.host, "mode": r.mode, "reason": r.reason})
    return out


def assert_parity(batch: list[dict[str, Any]]) -> None:
    js = run_node(batch)
    py = python_answers(batch)
    diffs = [
        {"case": c, "python": p, "js": j}
        for c, p, j in zip(batch, py, js, strict=True)
        if "error" in j or (p["mode"], p["reason"]) != (j["mode"], j["reason"])
    ]
    assert not diffs, "resolvers disagree:\n" + json.dumps(diffs[:10], ensure_ascii=False, indent=1)


# No shrinking: a failing batch already names each disagreeing case, and shrinking a batch
# costs one node process per step.
@settings(
    max_examples=25,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(cases(), min_size=20, max_size=80))
def test_generated_batches_resolve_alike(batch: list[dict[str, Any]]) -> None:
    assert_parity(batch)


def test_every_sensitive_entry_and_its_lookalikes_resolve_alike() -> None:
    """Not sampled: every sensitive domain, suffix and label, with lookalikes and rules on parents."""
    batch: list[dict[str, Any]] = []
    for d in SENS_DOMAINS:
        for h in _lookalikes(d):
            batch.append({"host": h, "global_default": "collect", "rules": []})
        parent = d.split(".", 1)[1] if d.count(".") >= 2 else d
        batch.append({"host": "x." + d, "global_default": "collect", "rules": [{"host": parent, "mode": "collect"}]})
        batch.append({"host": d, "global_default": "suggest", "rules": [{"host": d, "mode": "collect"}]})
    for s in SENS_SUFFIXES:
        for h in (s, "x." + s, "a.b." + s, "not" + s, s + ".example"):
            batch.append({"host": h, "global_default": "collect", "rules": []})
    for lab in SENS_LABELS:
        for h in (
            lab + ".com",
            lab + ".example.com",
            lab + ".a.b.example",
            "my" + lab + ".example.com",
            "www." + lab + ".example.com",
        ):
            batch.append(
                {"host": h, "global_default": "collect", "rules": [{"host": "example.com", "mode": "collect"}]}
            )
    assert len(batch) > 1000
    assert_parity(batch)


def test_ip_literals_resolve_alike() -> None:
    """Every listed address (IPv4-mapped IPv6 included: Python judges those by the IPv4 inside)."""
    ips = [
        "127.0.0.1",
        "127.1.2.3",
        "10.0.0.1",
        "172.16.5.4",
        "172.32.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "8.8.8.8",
        "1.1.1.1",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",  # noqa: S104
        "::ffff:127.0.0.1",
        "::ffff:8.8.8.8",
        "::ffff:1.1.1.1",
        "::ffff:10.0.0.1",
        "::ffff:c0a8:101",
        "::ffff:169.254.169.254",
        "2001:db8::1",
        "2606:4700::1111",
        "64:ff9b::1.2.3.4",
        "2002:7f00:1::",
    ]
    batch = [{"host": h, "global_default": "collect", "rules": []} for ip in ips for h in (ip, f"[{ip}]", ip.upper())]
    assert_parity(batch)
