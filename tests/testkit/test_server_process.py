"""The lab talks only to the process it started: the identity check refuses a stranger."""

from __future__ import annotations

from pathlib import Path

from testkit.server_process import ServerProcess, identity_problem


def test_identity_check_refuses_another_pid_or_another_database(tmp_path: Path) -> None:
    ours = {"build": {"pid": 4242}, "db": {"path": str(tmp_path / "data" / "wherefrom.db")}}
    assert identity_problem(ours, 4242, tmp_path) is None
    assert "pid 4242, not our subprocess 1" in (identity_problem(ours, 1, tmp_path) or "")
    elsewhere = {"build": {"pid": 4242}, "db": {"path": "/var/lib/other/wherefrom.db"}}
    assert "not under" in (identity_problem(elsewhere, 4242, tmp_path) or "")


def test_a_started_server_is_ours(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data").start()
    try:
        status, health = server.call("GET", "/api/health")
        assert status == 200 and identity_problem(health, server.proc.pid, tmp_path / "data") is None  # type: ignore[union-attr]
    finally:
        server.stop()
