"""Types are checked, not decorative: mypy --strict over server/ and tsc --noEmit (checkJs) over
the extension, with the configuration in pyproject.toml and tsconfig.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import skip_unless_optional

REPO = Path(__file__).resolve().parent.parent


def test_mypy_strict_on_server() -> None:
    mypy = Path(sys.executable).parent / "mypy"
    if not mypy.exists():
        skip_unless_optional("mypy is not installed (./scripts/setup --test)")
    out = subprocess.run([str(mypy)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "no issues found" in out.stdout


def test_tsc_checks_the_extension() -> None:
    tsc = REPO / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or shutil.which("node") is None:
        skip_unless_optional("typescript is not installed (./scripts/setup --test runs npm ci)")
    out = subprocess.run([str(tsc), "-p", "tsconfig.json"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_tsc_would_see_a_type_error(tmp_path: Path) -> None:
    """The check can fail: the same configuration rejects a file with a wrong JSDoc type."""
    tsc = REPO / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or shutil.which("node") is None:
        skip_unless_optional("typescript is not installed (./scripts/setup --test runs npm ci)")
    bad = tmp_path / "bad.js"
    bad.write_text("/** @type {number} */\nexport const n = 'not a number';\n", "utf-8")
    config = tmp_path / "tsconfig.json"
    config.write_text(
        '{"extends": "%s", "include": ["bad.js"], "compilerOptions": {"types": []}}' % (REPO / "tsconfig.json"),
        "utf-8",
    )
    out = subprocess.run([str(tsc), "-p", str(config)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and "TS2322" in out.stdout, out.stdout


def test_tsc_checks_message_names_and_payload_fields(tmp_path: Path) -> None:
    """The message protocol is typed end to end (extension/types.d.ts WfMessage): a wrong message
    name, an unknown payload field and a wrong field type are each a tsc error; the right message
    is not (the positive control)."""
    tsc = REPO / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or shutil.which("node") is None:
        skip_unless_optional("typescript is not installed (./scripts/setup --test runs npm ci)")
    (tmp_path / "messages.js").write_text(
        "/** @type {WfMessage} */\nexport const good = { type: 'panel:search', payload: { q: 'x', limit: 5 } };\n"
        "/** @type {WfMessage} */\nexport const name = { type: 'panel:serch', payload: { q: 'x' } };\n"
        "/** @type {WfMessage} */\nexport const field = { type: 'panel:search', payload: { query: 'x' } };\n"
        "/** @type {WfMessage} */\nexport const mode = { type: 'panel:set-rule', payload: { host: 'a', mode: '-' } };\n"
        "/** @param {WfPanelMessage} m */\n"
        "export function tab(m) { return m.type === 'panel:save-note' ? m.payload.text : m.payload.txt; }\n",
        "utf-8",
    )
    config = tmp_path / "tsconfig.json"
    settings = {
        "extends": str(REPO / "tsconfig.json"),
        "include": ["messages.js", str(REPO / "extension" / "types.d.ts")],
        "compilerOptions": {"types": []},
    }
    config.write_text(json.dumps(settings), "utf-8")
    out = subprocess.run([str(tsc), "-p", str(config)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    errors = [line for line in out.stdout.splitlines() if line.startswith("messages.js(")]
    lines = sorted({int(e.split("(")[1].split(",")[0]) for e in errors})
    assert lines == [4, 6, 8, 10], out.stdout
