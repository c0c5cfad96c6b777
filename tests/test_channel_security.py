"""Each defence of the channel, with the request that it refuses and a control that passes."""

from __future__ import annotations

import os
import stat

import pytest

from server.commands.main import main as cli_main
from tests.conftest import Api


async def test_health_open_without_token_but_details_need_it(api: Api) -> None:
    status, body = await api.get("/api/health", auth=False)
    assert status == 200 and body["ok"] is True and "build" not in body and "db" not in body
    status, body = await api.get("/api/health")
    assert status == 200
    assert body["build"]["pid"] == os.getpid()
    assert body["db"]["path"] == str(api.store.path)
    assert body["db"]["schema_version"]


async def test_token_file_is_256_bits_and_private(api: Api) -> None:
    path = api.store.path.parent / "token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = path.read_text().strip()
    assert token == api.token and len(token) >= 43  # 32 bytes urlsafe-base64


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic abc", "Bearer "])
async def test_api_needs_the_bearer_token(api: Api, header: str | None) -> None:
    headers = {"Authorization": header} if header is not None else {}
    status, body = await api.get("/api/policy", auth=False, headers=headers)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, _ = await api.get("/api/policy")  # control
    assert status == 200


async def test_token_in_query_string_is_not_accepted(api: Api) -> None:
    status, body = await api.get("/api/policy", auth=False, params={"token": api.token})
    assert status == 401


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "attacker.test", "localhost.evil.com:{port}"])
async def test_dns_rebinding_host_is_refused(api: Api, host: str) -> None:
    port = api.base.rsplit(":", 1)[1]
    status, body = await api.get("/api/policy", headers={"Host": host.format(port=port)})
    assert status == 403 and body["error"]["code"] == "bad_host"
    status, _ = await api.get("/api/policy", headers={"Host": f"localhost:{port}"})
    assert status == 200


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
)
async def test_web_origin_refused_even_with_token(api: Api, origin: str) -> None:
    status, body = await api.get("/api/policy", headers={"Origin": origin})
    assert status == 403 and body["error"]["code"] == "bad_origin"


async def test_pinned_extension_origin_allowed_and_no_cors_headers(api: Api) -> None:
    from server.settings import PINNED_EXTENSION_ID

    async with api.session.get(
        api.base + "/api/policy",
        headers={"Authorization": f"Bearer {api.token}", "Origin": f"chrome-extension://{PINNED_EXTENSION_ID}"},
    ) as r:
        assert r.status == 200
        assert not any(h.lower().startswith("access-control-") for h in r.headers)
    status, body = await api.call("OPTIONS", "/api/policy", headers={"Origin": "https://evil.example"})
    assert status == 403


async def test_body_limit_413_and_nothing_written(api: Api) -> None:
    status, body = await api.put("/api/site-mode", {"host": "a.example.com", "mode": "off", "x": "y" * 5000})
    assert status == 413 and body["error"]["code"] == "payload_too_large"
    assert await api.store.fetchall("SELECT * FROM site_rules") == []


@pytest.mark.parametrize(
    ("data", "ctype", "code"),
    [
        ("{not json", "application/json", "bad_json"),
        ('["a"]', "application/json", "bad_json"),
        ('{"host": 5, "mode": "off"}', "application/json", "bad_type"),
        ('{"host": "a.com", "mode": "off", "extra": 1}', "application/json", "unknown_field"),
        ('{"host": "a.com"}', "application/json", "missing_field"),
        ('{"host": "a.com", "mode": "sometimes"}', "application/json", "bad_value"),
        ('{"host": "a.com", "mode": "off"}', "text/plain", "unsupported_media_type"),
        (b'{"host": "\xff", "mode": "off"}', "application/json", "bad_json"),
        ("[" * 100 + "]" * 100, "application/json", "bad_json"),
    ],
)
async def test_bad_bodies_get_one_error_shape(api: Api, data: str, ctype: str, code: str) -> None:
    status, body = await api.call("PUT", "/api/site-mode", data=data, headers={"Content-Type": ctype})
    assert status in (400, 415)
    assert set(body) == {"error"} and body["error"]["code"] == code and isinstance(body["error"]["message"], str)
    assert await api.store.fetchall("SELECT * FROM site_rules") == []


async def test_unknown_route_is_json_404_after_auth(api: Api) -> None:
    status, body = await api.get("/api/nope")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _ = await api.get("/api/nope", auth=False)
    assert status == 401


def test_serve_refuses_non_loopback_bind(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert cli_main(["serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path)]) == 2
    assert "not a loopback" in capsys.readouterr().err
