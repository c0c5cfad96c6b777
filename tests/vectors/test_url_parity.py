"""Parity of the two URL normalisers on generated URLs (one URL rule in both languages).

server/urls.py normalise_url (ada-url, the WHATWG parser) and extension/shared/urls.js
normaliseUrl (the platform `URL`, also WHATWG) must give the same answer for every URL,
refusals included: fixtures/url-cases.json pins chosen cases; this test generates many more
around hosts the two used to read differently (Unicode dots and digits, percent-encoded
hosts, IPv4 in decimal, octal, hex and short forms, IPv6 carrying IPv4, IDN, trailing dots,
ports, user info) with odd paths and queries, and runs each batch through both (one node
subprocess per batch).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from server.urls import BadUrl, normalise_url
from tests.conftest import skip_unless_optional

REPO = Path(__file__).resolve().parents[2]
URLS_JS = REPO / "extension" / "shared" / "urls.js"
NODE = shutil.which("node")

NODE_SCRIPT = """
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [modPath, batchPath] = process.argv.slice(-2);
const mod = await import(pathToFileURL(modPath).href);
const urls = JSON.parse(readFileSync(batchPath, 'utf8'));
process.stdout.write(JSON.stringify(urls.map((u) => mod.tryNormaliseUrl(u))));
"""


@pytest.fixture(autouse=True)
def _needs_node() -> None:
    if NODE is None:
        skip_unless_optional("node is not installed")


def js_answers(urls: list[str]) -> list[str | None]:
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch.json"
        batch.write_text(json.dumps(urls), "utf-8")
        proc = subprocess.run(  # noqa: S603 - fixed argv, our own script
            [str(NODE), "--input-type=module", "-e", NODE_SCRIPT, str(URLS_JS), str(batch)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, f"node failed:\n{proc.stderr}"
    out: list[str | None] = json.loads(proc.stdout)
    assert len(out) == len(urls)
    return out


def py_answer(url: str) -> str | None:
    try:
        return normalise_url(url)
    except BadUrl:
        return None


def assert_parity(urls: list[str]) -> None:
    js = js_answers(urls)
    diffs = [{"url": u, "python": py_answer(u), "js": j} for u, j in zip(urls, js, strict=True) if py_answer(u) != j]
    assert not diffs, "normalisers disagree:\n" + json.dumps(diffs[:10], ensure_ascii=False, indent=1)


DOTS = ".。．｡"
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
IPV4_FORMS = st.integers(0, 2**32 - 1).flatmap(
    lambda n: st.sampled_from(
        [
            ".".join(str((n >> s) & 255) for s in (24, 16, 8, 0)),
            str(n),
            hex(n),
            "0" + oct(n)[2:],
            f"{n >> 24}.{n & 0xFFFFFF}",
            f"{n >> 24}.{(n >> 16) & 255}.{n & 0xFFFF}",
            ".".join(hex((n >> s) & 255) for s in (24, 16, 8, 0)),
            ".".join("0" + oct((n >> s) & 255)[2:] for s in (24, 16, 8, 0)),
        ]
    )
)
LABEL = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?", fullmatch=True) | st.text(
    alphabet="abcüößéаеоß中文ひカ-", min_size=1, max_size=8
)
NAME = st.lists(LABEL, min_size=1, max_size=4).map(".".join)
IPV6 = st.ip_addresses(v=6).map(lambda ip: f"[{ip}]") | st.sampled_from(
    [
        "[::ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "[0:0:0:0:0:ffff:7f00:1]",
        "[64:ff9b::127.0.0.1]",
        "[::1]",
        "[::]",
        "[fe80::1%25eth0]",
        "[::1",
        "[127.0.0.1]",
        "[v1.x]",
    ]
)
ODD = st.sampled_from(
    [
        "chase%2Ecom",
        "CHASE%2ecom",
        "%63hase.com",
        "exa%00mple.com",
        "%zz",
        "a..b",
        "xn--a",
        "xn--zca",
        "a b",
        "a<b",
        "",
        ".",
        "..",
        "256.0.0.1",
        "4294967296",
        "0x100000000",
        "1.2.3.4.5",
        "1.2.3.09",
        "a.0",
        "a.0x1",
        "intranet",
        "\u00ad",
        "a\u00adb",
        "\u200d.com",
        "ＥＸＡＭＰＬＥ.com",
        "ｅｘａｍｐｌｅ。ｃｏｍ",
    ]
)


@st.composite
def hosts(draw: st.DrawFn) -> str:
    host: str = draw(st.one_of(IPV4_FORMS, IPV4_FORMS, NAME, NAME, IPV6, ODD))
    if not host.startswith("[") and draw(st.booleans()):
        dot = draw(st.sampled_from(DOTS))
        host = host.replace(".", dot)
    if draw(st.integers(0, 4)) == 0:
        host = host.translate(FULLWIDTH)
    if draw(st.integers(0, 5)) == 0 and not host.startswith("["):
        host += draw(st.sampled_from([".", "..", "。"]))
    if draw(st.integers(0, 5)) == 0:
        host = host.upper()
    return host


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "ftp", "javascript"]))
    slashes = draw(st.sampled_from(["//", "//", "//", "///", "/\\", "\\\\", ""]))
    userinfo = draw(st.sampled_from(["", "", "", "user@", "u:p@", ":@", "a@b@"]))
    port = draw(st.sampled_from(["", "", "", ":80", ":443", ":0443", ":8080", ":", ":99999", ":x"]))
    path = draw(st.sampled_from(["", "/", "/a/b/", "/a/./b/../c", "/a b", "/%7e/%41", "\\a\\b", "/é", "/a//b//"]))
    query = draw(st.sampled_from(["", "?", "?b=2&a=1", "?utm_source=x&q=a+b", "?q=%7e%2f", "?a=1;b=2", "?é=ü"]))
    frag = draw(st.sampled_from(["", "#x", "#a?b"]))
    ws = draw(st.sampled_from(["", "", " ", "\t", "\n"]))
    return f"{ws}{scheme}:{slashes}{userinfo}{draw(hosts())}{port}{path}{query}{frag}{ws}"


# No shrinking: a failing batch already names each disagreeing URL.
@settings(
    max_examples=25,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(urls(), min_size=30, max_size=100))
def test_generated_urls_normalise_alike(batch: list[str]) -> None:
    assert_parity(batch)


def test_the_host_forms_chrome_reads_normalise_alike_and_to_loopback() -> None:
    forms = [
        "127。0。0。1",
        "１２７.0.0.1",
        "2130706433",
        "0177.0.0.1",
        "0x7f000001",
        "127.1",
        "0x7f.1",
        "127．0．0．1",
        "127%E3%80%820%E3%80%820%E3%80%821",
    ]
    batch = [f"http://{h}:8080/secret" for h in forms]
    assert_parity(batch)
    assert {py_answer(u) for u in batch} == {"http://127.0.0.1:8080/secret"}


def test_control_a_disagreement_would_be_seen() -> None:
    """The comparison can fail: a Python answer changed on purpose differs from node's."""
    url = "http://127。0。0。1/"
    js = js_answers([url])
    assert js == [py_answer(url)] == ["http://127.0.0.1/"]
    assert js != ["http://127。0。0。1/"]
