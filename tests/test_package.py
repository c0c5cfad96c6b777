"""`./scripts/package`: the extension as zips a person can load (the pinned `key` kept) or upload
to a store (no `key`), holding what the browser loads and nothing else, every file the manifest,
the pages and the modules name present, and one version: pyproject.toml's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path, PurePosixPath

import server

REPO = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["version"]
CHECKED_IN = json.loads((REPO / "extension" / "manifest.json").read_text("utf-8"))
IMPORT = re.compile(
    r"""(?:^|[;\s])(?:import|export)\s[^'"]*?['"](\.{1,2}/[^'"]+)['"]|import\(\s*['"](\.{1,2}/[^'"]+)['"]"""
)
GET_URL = re.compile(r"""getURL\(\s*['"]([^'"]+)['"]""")
HTML_REF = re.compile(r"""(?:src|href)="([^":#?]+)\"""")


def test_one_version_pyproject_the_manifest_and_the_server_agree() -> None:
    assert CHECKED_IN["version"] == VERSION
    assert server.__version__ == VERSION


def package(out: Path) -> tuple[zipfile.ZipFile, zipfile.ZipFile]:
    done = subprocess.run(  # noqa: S603
        [sys.executable, str(REPO / "scripts" / "package"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return (
        zipfile.ZipFile(out / f"wherefrom-extension-{VERSION}.zip"),
        zipfile.ZipFile(out / f"wherefrom-extension-{VERSION}-store.zip"),
    )


def referenced(zf: zipfile.ZipFile) -> set[str]:
    """Every file the manifest, files.json, the HTML pages and the JS modules name (zip paths)."""
    manifest = json.loads(zf.read("manifest.json"))
    refs = {manifest["background"]["service_worker"], manifest["side_panel"]["default_path"]}
    refs |= set(manifest["icons"].values()) | set(manifest["action"]["default_icon"].values())
    refs |= set(json.loads(zf.read("content/files.json")))
    for name in zf.namelist():
        text = zf.read(name).decode("utf-8", "replace") if name.endswith((".js", ".mjs", ".html")) else ""
        here = PurePosixPath(name).parent
        rels = [m for pair in IMPORT.findall(text) for m in pair if m] if name.endswith(("js",)) else []
        rels += HTML_REF.findall(text) if name.endswith(".html") else []
        for rel in rels:
            refs.add(str(PurePosixPath(*(here / rel).parts)).replace("/./", "/"))
        refs |= {r.lstrip("/") for r in GET_URL.findall(text)}
    return {normalise(r) for r in refs}


def normalise(path: str) -> str:
    parts: list[str] = []
    for p in path.split("/"):
        if p == "..":
            parts.pop()
        elif p not in ("", "."):
            parts.append(p)
    return "/".join(parts)


def test_the_zips_hold_what_the_browser_loads_and_nothing_else(tmp_path: Path) -> None:
    dev, store = package(tmp_path)
    for zf in (dev, store):
        names = zf.namelist()
        manifest = json.loads(zf.read("manifest.json"))
        assert manifest["version"] == VERSION
        missing = referenced(zf) - set(names)
        assert not missing, f"named but not packaged: {sorted(missing)}"
        assert len(referenced(zf)) > 40  # the scan found the modules (positive control)
        left_in = [n for n in names if re.search(r"(\.py|\.d\.ts|\.test\.\w+|schema\.json|VENDORED\.json)$|(^|/)\.", n)]
        assert not left_in, left_in
        for vendored in {n.split("/")[1] for n in names if n.startswith("vendor/")}:
            assert f"vendor/{vendored}/LICENSE" in names, f"{vendored} without its licence"
    assert json.loads(dev.read("manifest.json"))["key"] == CHECKED_IN["key"], (
        "the load-unpacked build keeps the pinned id"
    )
    assert "key" not in json.loads(store.read("manifest.json")), "a store upload refuses `key`"
    assert set(dev.namelist()) == set(store.namelist())


def test_packaging_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    first, _ = package(tmp_path / "a")
    second, _ = package(tmp_path / "b")
    assert Path(str(first.filename)).read_bytes() == Path(str(second.filename)).read_bytes()
