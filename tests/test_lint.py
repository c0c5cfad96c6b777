"""The code passes ruff with the project's explicit rule list (pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import skip_unless_optional

REPO = Path(__file__).resolve().parent.parent
PATHS = ("server", "tests", "bench", "e2e", "testkit", "scripts/gen_sites")


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        skip_unless_optional("ruff is not installed")
    out = subprocess.run(
        [ruff, "check", "--output-format", "concise", *PATHS],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_owns_the_layout() -> None:
    """`ruff format` decides the layout (and the line length, 120); E501 above catches the strings
    it cannot wrap."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        skip_unless_optional("ruff is not installed")
    out = subprocess.run(
        [ruff, "format", "--check", *PATHS],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
