"""The browser link starts the server when none runs: detached (it outlives the host), its output
in the data dir's log, never two servers on one data dir, never someone else's server taken for
ours — and the token goes to the pipe only."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from server.instance import read_runtime
from testkit.native_host import REPO, frame, servers_on, stop_started_server, talk
from testkit.server_process import ServerProcess
from tests.conftest import free_port


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    yield data
    stop_started_server(data)


def test_start_runs_one_detached_server_and_locate_finds_it(data_dir: Path) -> None:
    port = free_port()
    code, replies, err = talk(data_dir, port, frame({"type": "start"}))
    assert code == 0, err
    (reply,) = replies
    assert reply["ok"] and reply["running"] and reply["started"] is True
    assert reply["url"] == f"http://127.0.0.1:{port}"
    token = (data_dir / "token").read_text("ascii").strip()
    assert reply["token"] == token
    pid = read_runtime(data_dir)["pid"]
    assert servers_on(data_dir) == [pid]
    assert os.getsid(pid) == pid, "the server is not in a session of its own (Chrome ending the host would end it)"
    # the host has exited; the server still answers, and a new host finds it without starting another
    code, replies, err2 = talk(data_dir, port, frame({"type": "locate"}) + frame({"type": "start"}))
    assert code == 0
    assert replies[0] == {"ok": True, "running": True, "url": reply["url"], "token": token}
    assert replies[1]["started"] is False
    assert servers_on(data_dir) == [pid]
    # the token travelled on the pipe only: not on the host's stderr, not in the server's log
    log = (data_dir / "server.log").read_text("utf-8")
    assert "serving http://127.0.0.1" in log  # the log is the server's (positive control)
    for text in (err, err2, log):
        assert token not in text


def test_two_starts_at_once_give_one_server(data_dir: Path) -> None:
    port = free_port()
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: talk(data_dir, port, frame({"type": "start"})), range(2)))
    replies = [r[1][0] for r in runs]
    assert all(code == 0 for code, _, _ in runs), runs
    assert all(r["ok"] and r["running"] for r in replies), replies
    assert len({(r["url"], r["token"]) for r in replies}) == 1
    assert sorted(r["started"] for r in replies) == [False, True]
    assert servers_on(data_dir) == [read_runtime(data_dir)["pid"]]


def test_a_second_serve_on_the_same_data_dir_exits_without_binding(data_dir: Path) -> None:
    first = ServerProcess(data_dir).start()
    try:
        other_port = free_port()
        second = subprocess.run(  # noqa: S603
            [sys.executable, "-m", "server", "serve", "--port", str(other_port), "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        assert second.returncode == 1
        assert "already runs" in second.stderr and str(first.port) in second.stderr
        with socket.socket() as s:  # the second never listened
            assert s.connect_ex(("127.0.0.1", other_port)) != 0
        assert read_runtime(data_dir)["pid"] == first.proc.pid  # what the first announced still stands
    finally:
        first.stop()
    # once the first has gone, the data dir is free again (positive control)
    again = ServerProcess(data_dir).start()
    again.stop()


def test_a_port_answered_by_another_data_dirs_server_is_never_taken_for_ours(tmp_path: Path, data_dir: Path) -> None:
    foreign = ServerProcess(tmp_path / "foreign").start()
    try:
        (data_dir).mkdir(parents=True)
        (data_dir / "token").write_text(foreign.token + "\n", "ascii")  # even with a token it accepts
        code, replies, _ = talk(data_dir, foreign.port, frame({"type": "start"}))
        assert code == 0 and replies[0]["ok"] is False and replies[0]["error"]["code"] == "not_ours"
        assert servers_on(data_dir) == []
        code, replies, _ = talk(tmp_path / "foreign", foreign.port, frame({"type": "locate"}))  # control
        assert replies[0]["running"] is True and replies[0]["token"] == foreign.token
    finally:
        foreign.stop()
