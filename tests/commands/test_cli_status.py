"""`wherefrom status` exit codes: 0 healthy, 2 reported unhealthy, 1 could not tell."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import free_port


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "server", *args], capture_output=True, text=True, timeout=30)


def test_status_codes(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "d"
    # nothing listening: could not tell
    assert run_cli("status", "--port", str(port), "--data-dir", str(data)).returncode == 1
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--port", str(port), "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(100):
            if run_cli("status", "--port", str(port), "--data-dir", str(data)).returncode == 0:
                break
            time.sleep(0.1)
        ok = run_cli("status", "--port", str(port), "--data-dir", str(data))
        assert ok.returncode == 0 and f'"pid": {proc.pid}' in ok.stdout
        # a token that does not match: the server answers but cannot show its build -> could not tell
        other = tmp_path / "other"
        run_cli("pair", "--data-dir", str(other))
        assert run_cli("status", "--port", str(port), "--data-dir", str(other)).returncode == 1
        # unhealthy: the database file is replaced by garbage under the running server
        db = data / "wherefrom.db"
        for suffix in ("-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        db.write_bytes(b"this is not a database" * 100)
        assert run_cli("status", "--port", str(port), "--data-dir", str(data)).returncode == 2
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_pair_prints_the_same_token_each_time(tmp_path: Path) -> None:
    first = run_cli("pair", "--data-dir", str(tmp_path)).stdout.strip()
    second = run_cli("pair", "--data-dir", str(tmp_path)).stdout.strip()
    assert first == second and len(first) >= 43
