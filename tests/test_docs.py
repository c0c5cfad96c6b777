"""Docs that are generated stay current; the README's commands are what CI runs; every path the docs
and comments name exists; rules are named, never referred to by an issue number."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
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


# ---------------------------------------------------------------- named paths exist
# A repository path named in the README, docs/ or a comment or docstring of our code is a claim a
# reader follows: it must exist. Paths start at the repository root; inside extension/ they may
# also start at extension/ (`shared/sites.js`), as the extension's own comments name them.
ROOTS = ("server", "extension", "tests", "e2e", "testkit", "bench", "docs", "fixtures", "scripts", ".github")
EXT_ROOTS = ("background", "content", "sidepanel", "shared", "sites", "vendor", "icons")
_ALTERNATIVES = "|".join(re.escape(r) for r in (*ROOTS, *EXT_ROOTS))
_PATH = re.compile(rf"(?<![\w./@~-])((?:{_ALTERNATIVES})/[\w.-]+(?:/[\w.-]+)*)")
_FILE = re.compile(r"\.(?:py|js|mjs|json|md|html|css|sql|toml|yml|yaml|ts|txt)$|^scripts/\w+$")
# paths that only exist after a run or a build, never in the repository
_MADE = ("e2e/report/", "bench/out/", "extension/vendor/", "vendor/")


def named_paths(text: str) -> set[str]:
    """The repository file paths a text names (a directory only when it ends the sentence as one)."""
    found = set()
    for m in _PATH.finditer(text):
        path = m.group(1).rstrip(".")
        if _FILE.search(path) and not path.startswith(_MADE) and "NNNN" not in path:  # NNNN: a placeholder
            found.add(path)
    return found


def _comments_py(source: str) -> str:
    """A Python file's docstrings and comments (its code is checked by running it)."""
    tree = ast.parse(source)
    parts = [
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    parts += [tok.string for tok in tokens if tok.type == tokenize.COMMENT]
    return "\n".join(parts)


_JS_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\\'\"])//[^\n]*", re.S)


def doc_texts() -> dict[str, str]:
    """{file: the prose in it} over the README, docs/ and our Python and JS sources."""
    out = {"README.md": (REPO / "README.md").read_text("utf-8")}
    out |= {str(p.relative_to(REPO)): p.read_text("utf-8") for p in sorted((REPO / "docs").glob("*.md"))}
    for folder in ("server", "tests", "e2e", "testkit", "bench", "scripts"):
        for p in sorted((REPO / folder).rglob("*.py")):
            out[str(p.relative_to(REPO))] = _comments_py(p.read_text("utf-8"))
    for p in sorted([*(REPO / "extension").rglob("*.js"), *(REPO / "tests" / "js").rglob("*.mjs")]):
        rel = str(p.relative_to(REPO))
        if rel.startswith("extension/vendor/") or rel.endswith(".generated.js"):
            continue
        out[rel] = "\n".join(_JS_COMMENT.findall(p.read_text("utf-8")))
    return out


def missing_paths(texts: dict[str, str], repo: Path) -> list[str]:
    out = []
    for name, text in texts.items():
        for path in sorted(named_paths(text)):
            if not ((repo / path).exists() or (repo / "extension" / path).exists()):
                out.append(f"{name}: {path}")
    return out


def test_every_named_path_exists() -> None:
    texts = doc_texts()
    assert "server/urls.py" in named_paths(texts["docs/architecture.md"])  # the walk reads the docs
    assert "shared/protocol.js" in named_paths(texts["extension/background/messages.js"])  # and comments
    assert missing_paths(texts, REPO) == []


def test_a_missing_path_is_found(tmp_path: Path) -> None:
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "urls.py").write_text("", "utf-8")
    texts = {"a.md": "`server/urls.py` and server/gone.py, shared/nothing.js. Not e2e/report/health.json."}
    assert missing_paths(texts, tmp_path) == ["a.md: server/gone.py", "a.md: shared/nothing.js"]


# ---------------------------------------------------------------- rules are named, not numbered
_ISSUE_REF = re.compile(r"(?<![a-z])issues?(?:\s+#?|_)\d+|\bitem\s+\d+\s+of\s+issue", re.I)


def issue_references(texts: dict[str, str]) -> list[str]:
    return [f"{name}: {m.group(0)}" for name, text in texts.items() for m in _ISSUE_REF.finditer(text)]


def test_no_issue_numbers_in_code_or_docs() -> None:
    """A rule referred to as `issue 15 item 2` means nothing to a reader: name the rule instead."""
    texts = {name: path.read_text("utf-8") for name, path in _all_sources().items()}
    assert issue_references(texts) == []
    examples = {"a.py": "# issue 15 item 2: x", "b.md": "see Issue #12", "c.py": "def test_issue_3():"}
    assert issue_references(examples) == [
        "a.py: issue 15",
        "b.md: Issue #12",
        "c.py: issue_3",
    ]


def _all_sources() -> dict[str, Path]:
    """Our text files: everything but what is vendored, installed, generated or a run's output."""
    prune = {".git", ".venv", "node_modules", "vendor", "report", "out", "wherefrom.egg-info"}
    suffixes = {".py", ".js", ".mjs", ".md", ".json", ".html", ".css", ".sql", ".toml", ".yml", ""}
    out = {}
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in prune and not d.startswith(".") or d == ".github"]
        for f in files:
            p = Path(folder) / f
            rel = str(p.relative_to(REPO))
            if p.suffix in suffixes and (p.suffix or rel.startswith("scripts/")) and rel not in _NOT_PROSE:
                out[rel] = p
    return out


# the changelog quotes history; this file holds the examples the check is proven on
_NOT_PROSE = {"CHANGELOG.md", "tests/test_docs.py"}
