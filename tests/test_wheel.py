"""The installable build: `python -m build` gives a wheel whose `wherefrom` works from a fresh
virtualenv outside the checkout — `serve`, `status`, `search` against it, and the browser link's
launcher running that venv's Python — with every data file of the package inside the wheel.

Slow (a build and an install of the dependencies; pip may answer from its cache). Prints the
wheel's size and its install time: the figures of the first five minutes.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from testkit.native_host import OURS, frame, unframe
from tests.conftest import free_port

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def run(*argv: str | Path, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)  # noqa: S603


def data_files_of_the_package() -> set[str]:
    """Every file git tracks under server/ that is not Python source: what must ship as data."""
    listed = subprocess.run(["git", "ls-files", "server"], cwd=REPO, capture_output=True, text=True, check=True)  # noqa: S607
    return {p for p in listed.stdout.split() if not p.endswith(".py")}


def test_the_wheel_installs_into_a_fresh_venv_and_serves(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"  # nothing of the checkout on the path
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    built = run(sys.executable, "-m", "build", "--wheel", "--outdir", tmp_path / "dist", REPO, cwd=REPO, env=env)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("wherefrom-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = data_files_of_the_package() - names
    assert not missing, f"package data left out of the wheel: {sorted(missing)}"
    assert any(n.startswith("server/store/migrations/") for n in names)  # positive control
    assert not any(n.startswith(("tests/", "e2e/", "extension/", "fixtures/")) for n in names)

    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", venv, cwd=outside, env=env).returncode == 0
    t0 = time.monotonic()
    installed = run(venv / "bin" / "pip", "install", "-q", wheel, cwd=outside, env=env)
    install_s = time.monotonic() - t0
    assert installed.returncode == 0, installed.stderr[-3000:]
    wherefrom = venv / "bin" / "wherefrom"

    port, data = free_port(), tmp_path / "data"
    common = ["--port", str(port), "--data-dir", str(data)]
    log = (tmp_path / "serve.log").open("wb")
    serve = subprocess.Popen([str(wherefrom), "serve", *common], cwd=outside, env=env, stdout=log, stderr=log)  # noqa: S603
    try:
        deadline = time.monotonic() + 60
        while (status := run(wherefrom, "status", *common, cwd=outside, env=env, timeout=30)).returncode != 0:
            assert serve.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.2)
        health = json.loads(status.stdout[: status.stdout.rindex("}") + 1])
        assert health["build"]["pid"] == serve.pid
        code = Path(health["build"]["code_path"])
        assert venv in code.parents, f"served from {code}, not from the wheel"
        # a note through the API, then found by `wherefrom search`
        token = (data / "token").read_text("ascii").strip()
        note = {"url": "https://wheel.example/page", "title": "Wheel page", "text": "a quokka installed from a wheel"}
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/notes",
            data=json.dumps(note).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - loopback
            assert resp.status in (200, 201)
        found = run(wherefrom, "search", "quokka", "--json", *common, cwd=outside, env=env, timeout=60)
        assert found.returncode == 0, found.stderr
        assert [r["url"] for r in json.loads(found.stdout)["results"]] == [note["url"]]
        # the browser link's launcher runs this venv's Python
        link = run(
            wherefrom,
            "install-browser-link",
            "--browser",
            "chromium",
            "--user-data-dir",
            tmp_path / "profile",
            *common,
            cwd=outside,
            env=env,
        )
        assert link.returncode == 0, link.stderr
        launcher = tmp_path / "profile" / "NativeMessagingHosts" / "wherefrom-native-host"
        assert str(venv / "bin" / "python") in launcher.read_text("utf-8")
        answer = subprocess.run(
            [str(launcher), OURS],
            input=frame({"type": "locate"}),
            capture_output=True,
            timeout=60,  # noqa: S603
            cwd=outside,
            env=env,
        )
        (reply,) = unframe(answer.stdout)
        assert reply["running"] is True and reply["token"] == token
        assert struct.unpack("=I", answer.stdout[:4])[0] == len(answer.stdout) - 4
    finally:
        serve.terminate()
        serve.wait(30)
        log.close()
    size_kb = wheel.stat().st_size / 1024
    print(f"\nwheel {wheel.name}: {size_kb:.0f} KB; pip install into a fresh venv: {install_s:.1f} s")
