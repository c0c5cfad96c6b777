"""Hostile requests on the write routes that carry a page (notes, clips, captures, add_text):
no valid bearer, a token in the query, a web origin, a rebinding host, the browser's cross-site
"simple" POSTs and preflights. Each refused with the right status, nothing stored.

tests/test_channel_security.py covers the channel on GET /api/policy and PUT /api/site-mode.
"""

from __future__ import annotations

import pytest

from tests.conftest import Api
from tests.hostile_support import ROUTES, WRITES, as_json, assert_nothing_stored, bearer, counts, raw

# ---------------------------------------------------------------- controls


@pytest.mark.parametrize("route", ROUTES)
async def test_control_the_same_write_with_the_right_headers_is_stored(api: Api, route: str) -> None:
    """Proves the bodies below are valid, so each refusal is about the attack, not the body."""
    status, body = await api.post(route, WRITES[route])
    assert status in (200, 201), body
    assert (await counts(api))["activity"] >= 1


# ---------------------------------------------------------------- the channel, on write routes


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("case", "auth"),
    [
        ("no token", None),
        ("wrong token", "Bearer " + "A" * 43),
        ("not bearer", "Basic {token}"),
        ("token without scheme", "{token}"),
        ("lower-case scheme", "bearer {token}"),
    ],
)
async def test_write_without_a_valid_bearer_is_401(api: Api, route: str, case: str, auth: str | None) -> None:
    headers = {"Content-Type": "application/json"}
    if auth is not None:
        headers["Authorization"] = auth.format(token=api.token)
    status, body = await raw(api, "POST", route, data=as_json(route), headers=headers)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("param", ["token", "access_token", "Authorization", "auth"])
async def test_write_with_token_in_the_query_string_is_401(api: Api, route: str, param: str) -> None:
    value = api.token if param != "Authorization" else f"Bearer {api.token}"
    status, body = await raw(
        api, "POST", route, data=as_json(route), params={param: value}, headers={"Content-Type": "application/json"}
    )
    assert status == 401 and body["error"]["code"] == "unauthorized"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "null",
        "http://127.0.0.1",
        "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "moz-extension://gidncpejkfcnakpojbbbhocinihfkjmj",
    ],
)
async def test_write_from_a_web_origin_with_a_valid_token_is_403(api: Api, route: str, origin: str) -> None:
    status, body = await raw(
        api,
        "POST",
        route,
        data=as_json(route),
        headers={**bearer(api), "Content-Type": "application/json", "Origin": origin},
    )
    assert status == 403 and body["error"]["code"] == "bad_origin"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "host",
    ["evil.example:{port}", "attacker.test", "127.0.0.1", "localhost:1", "127.0.0.1.nip.io:{port}", "[::1]:{port}0"],
)
async def test_write_with_a_rebinding_host_is_403(api: Api, route: str, host: str) -> None:
    port = api.base.rsplit(":", 1)[1]
    status, body = await raw(
        api,
        "POST",
        route,
        data=as_json(route),
        headers={**bearer(api), "Content-Type": "application/json", "Host": host.format(port=port)},
    )
    assert status == 403 and body["error"]["code"] == "bad_host"
    await assert_nothing_stored(api)


# A page on another site can make the browser POST without a preflight only with these three
# content types (and no custom header, so never with Authorization): the classic CSRF form.
SIMPLE_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("ctype", SIMPLE_TYPES)
async def test_cross_site_simple_post_is_refused(api: Api, route: str, ctype: str) -> None:
    data = as_json(route)  # a form can smuggle a JSON-looking text/plain body
    # as a browser sends it: web Origin, no Authorization
    status, body = await raw(
        api, "POST", route, data=data, headers={"Content-Type": ctype, "Origin": "https://evil.example"}
    )
    assert status == 403 and body["error"]["code"] == "bad_origin"
    # no Origin (a privacy mode or an old browser), no token
    status, body = await raw(api, "POST", route, data=data, headers={"Content-Type": ctype})
    assert status == 401
    # even with the token (an attacker who learnt it), a non-JSON body is refused
    status, body = await raw(api, "POST", route, data=data, headers={**bearer(api), "Content-Type": ctype})
    assert status == 415 and body["error"]["code"] == "unsupported_media_type"
    # and with the token and the web Origin
    status, body = await raw(
        api, "POST", route, data=data, headers={**bearer(api), "Content-Type": ctype, "Origin": "https://evil.example"}
    )
    assert status == 403
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
async def test_preflight_gets_no_cors(api: Api, route: str) -> None:
    async with api.session.options(
        api.base + route,
        headers={
            "Origin": "https://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    ) as r:
        assert r.status in (401, 403)
        assert not any(h.lower().startswith("access-control-") for h in r.headers)
    await assert_nothing_stored(api)


# ---------------------------------------------------------------- hostile bodies, on write routes
