"""Schema-driven fuzzing of every route in the OpenAPI description, with the token:
no 5xx, the one error shape on every refusal, and nothing written by a refused request."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server import appkeys
from server.openapi import document
from server.routes import route_apis
from testkit.live_server import LiveServer
from tests.conftest import free_port

OPS = [(path, method, op) for path, item in document(route_apis())["paths"].items() for method, op in item.items()]
ITEM_TABLES_SQL = (
    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE '%fts%' AND name NOT LIKE 'sqlite_%'"
)

junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
urlish = st.sampled_from(
    [
        "https://example.com/a",
        "https://chatgpt.com/c/1",
        "http://127.0.0.1/",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,x",
        "https://accounts.google.com/",
        "",
        "not a url",
        "https://ex.com/" + "é" * 10,
        "https://[::1]/",
        # hosts the server must read as Chrome does (WHATWG), and hosts that cannot be cleaned
        "http://127。0。0。1:9/secret",
        "http://１２７.0.0.1/",
        "https://chase%2Ecom/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::127.0.0.1]/",
        "http://intranet/wiki",
        "http://xn--a/",
        "http://exa%00mple.com/",
        "http://a.0/",
        "https:///path",
        "http://ex.com\\a",
    ]
)
hostish = st.sampled_from(
    [
        "intranet",
        "2130706433",
        "0x7f000001",
        "127。0。0。1",
        "chase%2Ecom",
        "[::ffff:127.0.0.1]",
        "::1",
        "com",
        "co.uk",
        "xn--a",
        "a..b",
        "a b",
        "exa%00mple",
        "%zz",
        "127.0.0.1:80",
        "[::1",
        "." * 10,
        "é" * 70,
    ]
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | junk
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        req = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v) for k, v in props.items() if k in req},
            optional={k: from_schema(v) for k, v in props.items() if k not in req} | {"zz_unknown": junk},
        )
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {})), max_size=4)
    if kind == "string":
        return urlish | hostish | st.text(max_size=40)
    if kind == "integer":
        return st.integers(min_value=-5, max_value=10**12)
    if kind == "boolean":
        return st.booleans()
    return junk


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path_factory.mktemp("fuzz"), free_port()).start()
    yield server
    server.stop()


def counts(live: LiveServer) -> dict[str, int]:
    async def read() -> dict[str, int]:
        assert live.app is not None
        # the background embedder turns earlier writes' queue rows into vectors at its own pace
        # (both models'): let it catch up first, so that a change seen below is the request's own
        await asyncio.wait_for(live.app[appkeys.EMBEDDER].idle.wait(), 60)
        store = live.app[appkeys.STORE]
        names = [r[0] for r in await store.fetchall(ITEM_TABLES_SQL)]
        return {n: (await store.fetchall(f'SELECT count(*) FROM "{n}"'))[0][0] for n in names if n != "activity"}

    return live.run(read())


def fill_path(path: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", quote(value, safe=""), path)


@pytest.mark.parametrize(("path", "method", "op"), OPS, ids=[f"{m.upper()} {p}" for p, m, _ in OPS])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_route_never_5xx_and_refusals_write_nothing(
    live: LiveServer, path: str, method: str, op: dict, data: st.DataObject
) -> None:
    params = {
        p["name"]: data.draw(from_schema(p["schema"]) if data.draw(st.booleans()) else st.text(max_size=20))
        for p in op.get("parameters", [])
        if p["required"] or data.draw(st.booleans())
    }
    query = urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()})
    target = fill_path(path, data.draw(st.sampled_from(["1", "0", "-1", "abc", "99999999999999999999", "é"])))
    body = None
    headers = {}
    if "requestBody" in op:
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        value = data.draw(from_schema(schema) | junk)
        body = json.dumps(value).encode()
        headers["Content-Type"] = "application/json"
    before = counts(live)
    status, answer = live.request(method.upper(), target + ("?" + query if query else ""), body, headers)
    declared = {int(code) for code in op["responses"] if code.isdigit()}
    assert status < 500 or (status in declared and status != 500), (status, answer)
    if status >= 400:
        assert isinstance(answer, dict) and set(answer) == {"error"}, answer
        assert isinstance(answer["error"]["code"], str) and isinstance(answer["error"]["message"], str)
        assert counts(live) == before, f"refused {status} but the store changed"


def test_openapi_lists_every_route(live: LiveServer) -> None:

    declared = {(s.path, s.method.lower()) for a in route_apis() for s in a.specs}
    status, doc = live.request("GET", "/api/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1")
    served = {(p, m) for p, item in doc["paths"].items() for m in item}
    assert served == declared
    registered = {
        (r.resource.canonical, r.method.lower())
        for r in live.app.router.routes()  # type: ignore[union-attr]
        if r.resource is not None and r.method != "HEAD"
    }
    assert registered == declared, "a route is registered outside the declarations (missing from OpenAPI)"
