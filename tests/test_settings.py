"""Settings are declared once (the Settings dataclass); argparse, the docs' table and the
settings a command line gives are all built from that declaration. And `./scripts/setup`
installs once for serve and test."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from server.commands.main import build_parser
from server.settings import DEFAULT_PORT, SETTINGS, Settings, default_data_dir

REPO = Path(__file__).resolve().parent.parent


def test_every_setting_is_a_serve_option_and_in_the_docs_table(capsys: pytest.CaptureFixture[str]) -> None:
    names = [f.name for f in dataclasses.fields(Settings)]
    assert list(SETTINGS) == names
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    help_text = capsys.readouterr().out
    for f in dataclasses.fields(Settings):
        assert f.metadata["help"].split(";")[0][:30] in " ".join(help_text.split()), f.name


def test_a_command_line_gives_the_settings_it_names() -> None:
    args = build_parser().parse_args(
        [
            "serve",
            "--port",
            "5123",
            "--host",
            "::1",
            "--data-dir",
            "/srv/wf-x",
            "--log-level",
            "debug",
            "--extension-id",
            "a" * 32,
            "--extension-id",
            "b" * 32,
            "--allow-private-fetch",
            "--ledger",
            "/srv/l.jsonl",
        ]
    )
    assert Settings.from_args(args) == Settings(
        port=5123,
        host="::1",
        data_dir=Path("/srv/wf-x"),
        log_level="debug",
        extension_ids=("a" * 32, "b" * 32),
        allow_private_fetch=True,
        ledger=Path("/srv/l.jsonl"),
    )


def test_an_empty_command_line_gives_the_declared_defaults() -> None:
    settings = Settings.from_args(build_parser().parse_args(["serve"]))
    assert settings == Settings()
    assert settings.port == DEFAULT_PORT and settings.data_dir == default_data_dir()
    assert settings.extension_ids == () and settings.ledger is None and not settings.allow_private_fetch
    # commands that take only some settings get the same parsing (status: --port/--data-dir)
    status = build_parser().parse_args(["status", "--port", "9"])
    assert Settings.from_args(status) == Settings(port=9)


def test_licence_is_an_spdx_string() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "MIT"


def _fake_repo(tmp_path: Path) -> tuple[Path, Path]:
    """scripts/setup in a copy of the repo's layout, with a .venv whose pip records its calls."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup", root / "scripts" / "setup")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    lock = REPO / "package-lock.json"
    if lock.exists():  # the npm half of setup --test has its own stamp; mark it done
        shutil.copy(lock, root / "package-lock.json")
        (root / "node_modules").mkdir()
        (root / "node_modules" / f".installed-{hashlib.sha1(lock.read_bytes()).hexdigest()[:12]}").touch()  # noqa: S324
    log = tmp_path / "pip.log"
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "pip"):
        exe = bin_dir / name
        exe.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n')
        exe.chmod(0o755)
    return root, log


def test_serve_after_test_does_not_reinstall(tmp_path: Path) -> None:
    root, log = _fake_repo(tmp_path)
    env = {**os.environ, "WHEREFROM_CHROMIUM": "/usr/bin/true"}
    subprocess.run([str(root / "scripts" / "setup"), "--test"], check=True, env=env, cwd=root)
    installs = [line for line in log.read_text().splitlines() if "install" in line and "-e" in line]
    assert installs == ["pip install -q -e .[test]"]  # positive control: the first run installs
    subprocess.run([str(root / "scripts" / "setup")], check=True, env=env, cwd=root)  # what serve runs
    subprocess.run([str(root / "scripts" / "setup"), "--test"], check=True, env=env, cwd=root)
    installs = [line for line in log.read_text().splitlines() if "install" in line and "-e" in line]
    assert installs == ["pip install -q -e .[test]"]


def test_a_plain_install_is_completed_by_a_test_install(tmp_path: Path) -> None:
    root, log = _fake_repo(tmp_path)
    env = {**os.environ, "WHEREFROM_CHROMIUM": "/usr/bin/true"}
    subprocess.run([str(root / "scripts" / "setup")], check=True, env=env, cwd=root)
    subprocess.run([str(root / "scripts" / "setup"), "--test"], check=True, env=env, cwd=root)
    installs = [line for line in log.read_text().splitlines() if "install" in line and "-e" in line]
    assert installs == ["pip install -q -e .", "pip install -q -e .[test]"]
