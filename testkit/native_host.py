"""Talking to `wherefrom native-host` as Chrome does: a real subprocess, the caller's origin as
its argument, length-prefixed JSON (native byte order) on stdin and stdout. Also: stopping the
detached server a `start` left running (by the pid it announced in its data dir)."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from server.instance import read_runtime
from server.settings import PINNED_EXTENSION_ID
from testkit import processes

REPO = Path(__file__).resolve().parent.parent
OURS = f"chrome-extension://{PINNED_EXTENSION_ID}/"
OTHER = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"


def frame(value: Any) -> bytes:
    body = json.dumps(value).encode("utf-8")
    return struct.pack("=I", len(body)) + body


def unframe(raw: bytes) -> list[Any]:
    out = []
    while raw:
        (n,) = struct.unpack("=I", raw[:4])
        assert len(raw) >= 4 + n, f"a reply is cut short: {raw!r}"
        out.append(json.loads(raw[4 : 4 + n].decode("utf-8")))
        raw = raw[4 + n :]
    return out


def host_argv(data_dir: Path, port: int, origin: str | None = OURS) -> list[str]:
    argv = [sys.executable, "-m", "server", "native-host", "--data-dir", str(data_dir), "--port", str(port)]
    return argv + ([origin] if origin is not None else [])


def talk(
    data_dir: Path, port: int, stdin: bytes, origin: str | None = OURS, timeout: float = 60
) -> tuple[int, list[Any], str]:
    """Run the host once with `stdin` (then closed): (exit code, replies, stderr)."""
    proc = subprocess.run(  # noqa: S603 - our own interpreter and module
        host_argv(data_dir, port, origin), input=stdin, capture_output=True, timeout=timeout, cwd=REPO
    )
    return proc.returncode, unframe(proc.stdout), proc.stderr.decode("utf-8", "replace")


def stop_started_server(data_dir: Path, within: float = 15.0) -> None:
    """Stop the server a `start` left running on `data_dir` (SIGTERM, then SIGKILL) and wait."""
    pid = read_runtime(data_dir).get("pid")
    if not isinstance(pid, int) or not processes.alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + within
    while processes.alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline += within
        time.sleep(0.05)


def servers_on(data_dir: Path) -> list[int]:
    """Live `serve` processes whose command line names this data dir."""
    needle = f"--data-dir {data_dir}"
    return [
        int(p.name)
        for p in processes.PROC.iterdir()
        if p.name.isdigit()
        and processes.alive(int(p.name))
        and " serve " in (line := processes.cmdline(int(p.name)))
        and needle in line
    ]
