"""Docs that are generated stay current; the README's commands are what CI runs."""

from __future__ import annotations

from pathlib import Path

from server.openapi import markdown
from server.routes import route_apis

REPO = Path(__file__).resolve().parent.parent


def test_api_doc_lists_every_route_and_setting() -> None:
    assert (REPO / "docs" / "api.md").read_text("utf-8") == markdown(route_apis()), (
        "docs/api.md is stale: run `.venv/bin/python -m server.routes > docs/api.md`"
    )


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    ci = (REPO / ".ci" / "run").read_text("utf-8").strip().splitlines()
    commands = [line for line in ci if line and not line.startswith("#")]
    assert commands == ["exec ./scripts/test"]
    assert "\n./scripts/test\n" in readme and "\n./scripts/serve\n" in readme


def test_export_schema_doc_is_current() -> None:
    from server.dataio import schema

    assert (REPO / "docs" / "export.schema.json").read_text("utf-8") == schema.document(), (
        'docs/export.schema.json is stale: run `.venv/bin/python -c "from server.dataio import schema; '
        "print(schema.document(), end='')\" > docs/export.schema.json`"
    )
