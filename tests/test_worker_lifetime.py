"""No orphan workers: a killed server leaves no process behind. A real server subprocess runs
an extraction (so its worker process and multiprocessing's resource tracker exist: the
positive control), is killed with SIGKILL, and within a few seconds none of its children
is still running."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from testkit import processes
from testkit.server_process import ServerProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

PAGE = (
    "<html><head><title>Walnuts</title></head><body><article>"
    + "<p>Walnuts keep well in a cool place.</p>" * 40
    + "</article></body></html>"
)


def start_with_worker(tmp_path: Path) -> tuple[ServerProcess, list[int]]:
    server = ServerProcess(tmp_path / "data").start()
    status, body = server.call(
        "POST", "/api/library/add_text", {"url": "https://example.com/walnuts", "title": "Walnuts", "html": PAGE}
    )
    assert status == 201, body
    assert server.proc is not None
    kids = processes.descendants(server.proc.pid)
    lines = [processes.cmdline(pid) for pid in kids]
    # positive control: the extraction worker (a spawned multiprocessing child) and the resource tracker exist
    assert any("spawn_main" in line for line in lines), lines
    assert any("resource_tracker" in line for line in lines), lines
    return server, kids


def test_a_killed_server_leaves_no_worker_behind(tmp_path: Path) -> None:
    server, kids = start_with_worker(tmp_path)
    server.kill9()
    deadline = time.monotonic() + 5
    while any(processes.alive(pid) for pid in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = {pid: processes.cmdline(pid) for pid in kids if processes.alive(pid)}
    assert left == {}, f"still running after the server was killed: {left}"


def test_control_a_running_server_keeps_its_worker(tmp_path: Path) -> None:
    """The observer would see a surviving worker: while the server lives, its children do."""
    server, kids = start_with_worker(tmp_path)
    try:
        time.sleep(1)
        assert all(processes.alive(pid) for pid in kids)
    finally:
        server.stop()
