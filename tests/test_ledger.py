"""The opt-in request ledger records every request, refused ones included, never the token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.settings import Settings
from tests.conftest import Api, free_port


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", port=free_port(), ledger=tmp_path / "ledger.jsonl")


async def test_ledger_lines(api: Api, settings: Settings) -> None:
    assert settings.ledger is not None
    await api.get("/api/health", auth=False)
    await api.put("/api/site-mode", {"host": "example.com", "mode": "off"})
    await api.get("/api/policy", auth=False)
    lines = [json.loads(x) for x in settings.ledger.read_text().splitlines()]
    assert [(x["method"], x["path"], x["status"]) for x in lines] == [
        ("GET", "/api/health", 200),
        ("PUT", "/api/site-mode", 200),
        ("GET", "/api/policy", 401),
    ]
    assert lines[1]["content_length"] > 0 and lines[1]["body_sha256"] and "Authorization" in lines[1]["headers"]
    assert api.token not in settings.ledger.read_text()
