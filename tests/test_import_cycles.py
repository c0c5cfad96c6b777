"""No import cycle in server/: the modules form layers (the store below governance below the
features below the app). Every import that runs counts — at module level or inside a function;
only `if TYPE_CHECKING:` imports (which never run) are left out. The top-level folders import
only downward (tests/ and e2e/ never each other) and the extension's contexts stay apart. A
synthetic bad module proves each check can fail."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "server"


def module_name(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _type_checking_only(node):
            assert isinstance(node, ast.If)
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """{module: the server modules it imports} (a `from pkg import name` that names a module
    counts as importing that module)."""
    modules = {module_name(p): p for p in sources}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        for node in _imports(ast.parse(sources[path])):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                if t in modules and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(found)


def server_sources() -> dict[str, str]:
    return {str(p.relative_to(SERVER.parent)): p.read_text("utf-8") for p in sorted(SERVER.rglob("*.py"))}


def test_server_has_no_import_cycle() -> None:
    graph = import_graph(server_sources())
    assert "server.appkeys" in graph["server.app"]  # the walk sees imports at all
    assert "server.app" not in graph["server.openapi"]  # app <-> openapi, once a cycle
    assert "server.idempotency" not in graph["server.store.db"]  # the storage layer stays below HTTP
    assert "server.commands.mcp" in graph["server.commands.main"]  # every command is a real import
    assert cycles(graph) == []


def name_string_imports(sources: dict[str, str]) -> list[str]:
    """The files that import a module named in a string (importlib.import_module, __import__)."""
    calls = ("import_module", "__import__")
    return [
        path
        for path, text in sources.items()
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call) and ast.unparse(node.func).rpartition(".")[2] in calls
    ]


def test_no_module_is_imported_by_a_name_string() -> None:
    """A module named in a string is invisible to mypy and to the cycle check above; every
    server import is a real one."""
    assert name_string_imports(server_sources()) == []
    wired = {"server/a.py": "import importlib\nfor m in ('server.b',):\n    importlib.import_module(m)\n"}
    assert name_string_imports(wired) == ["server/a.py"]


def test_the_check_finds_a_cycle() -> None:
    sources = {
        "server/__init__.py": "",
        "server/a.py": "from server import b\n",
        "server/b.py": "def later():\n    from server.c import thing\n",
        "server/c.py": "from . import a\n",
        "server/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from server import e\n",
        "server/e.py": "import server.d\n",
    }
    assert cycles(import_graph(sources)) == [["server.a", "server.b", "server.c"]]


# ---------------------------------------------------------------- folder boundaries
# Which top-level folder may import which (Python). tests/ and e2e/ never import each other: what
# they share is in testkit/; bench/ sits on top (it may use server/ and testkit/, nothing imports
# it); server/ imports no test code.
REPO = SERVER.parent
FOLDERS = ("server", "testkit", "tests", "e2e", "bench")
MAY_IMPORT = {
    "server": {"server"},
    "testkit": {"server", "testkit"},
    "tests": {"server", "testkit", "tests"},
    "e2e": {"server", "testkit", "e2e"},
    "bench": {"server", "testkit", "bench"},
}


def folder_violations(root: Path) -> list[str]:
    """`path: imports folder` for every import across a folder boundary that MAY_IMPORT forbids
    (imports that never run, under `if TYPE_CHECKING:`, included: the boundary is about design)."""
    out: list[str] = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = str(path.relative_to(root))
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top in MAY_IMPORT and top not in MAY_IMPORT[folder]:
                        out.append(f"{rel}: imports {top}")
    return out


def test_folders_import_only_downward() -> None:
    assert (REPO / "testkit" / "sites.py").is_file() and (REPO / "bench").is_dir()  # the walk sees them
    assert folder_violations(REPO) == []


def test_the_folder_check_can_fail(tmp_path: Path) -> None:
    bad = {
        "tests/test_a.py": "from e2e.conftest import thing\n",
        "e2e/test_b.py": "import tests.conftest\n",
        "bench/c.py": "from tests.conftest import Api\n",
        "server/d.py": "def later():\n    from testkit import sites\n",
        "testkit/e.py": "import bench.load\n",
        "tests/test_f.py": "from bench import load\n",
        "e2e/g.py": "from testkit.farm import Farm\nfrom server import app\nfrom . import conftest\n",  # allowed
    }
    for rel, text in bad.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    assert folder_violations(tmp_path) == [
        "server/d.py: imports testkit",
        "testkit/e.py: imports bench",
        "tests/test_a.py: imports e2e",
        "tests/test_f.py: imports bench",
        "e2e/test_b.py: imports tests",
        "bench/c.py: imports tests",
    ]


# ---------------------------------------------------------------- extension contexts
# The extension's code runs in three contexts that share nothing at run time but shared/: a page's
# content scripts, the background worker, the side panel. A module of one context imported (or
# loaded) by another would run where its globals and rights do not exist.
EXTENSION = REPO / "extension"
CONTEXTS = ("content", "background", "sidepanel", "shared")
MAY_LOAD = {
    "content": {"content", "shared", "vendor"},
    "background": {"background", "shared"},
    "sidepanel": {"sidepanel", "shared", "vendor"},
    "shared": {"shared", "vendor"},
}
_JS_IMPORT = re.compile(r"""(?:\bimport\s*(?:[\w*{}\s,$]+\sfrom\s*)?|\bimport\s*\(\s*)['"]([^'"]+)['"]""")
_HTML_SCRIPT = re.compile(r"""<script[^>]*\ssrc=['"]([^'"]+)['"]""")


def _context_of(target: Path, root: Path) -> str | None:
    try:
        return target.resolve().relative_to(root.resolve()).parts[0]
    except ValueError:
        return None


def context_violations(root: Path) -> list[str]:
    """`file: loads context/file` for every ES import, dynamic import, <script src> of a context's
    page and content/files.json entry (the content scripts' load list) that MAY_LOAD forbids."""
    out: list[str] = []

    def check(source: Path, ctx: str, target: Path) -> None:
        dest = _context_of(target, root)
        if dest is not None and dest not in MAY_LOAD[ctx]:
            rel = target.resolve().relative_to(root.resolve())
            out.append(f"{source.relative_to(root)}: loads {rel}")

    for ctx in CONTEXTS:
        for path in sorted((root / ctx).rglob("*")):
            if path.suffix in (".js", ".mjs"):
                for spec in _JS_IMPORT.findall(path.read_text("utf-8")):
                    if spec.startswith("."):
                        check(path, ctx, path.parent / spec)
            elif path.suffix == ".html":
                for spec in _HTML_SCRIPT.findall(path.read_text("utf-8")):
                    if "://" not in spec:
                        check(path, ctx, path.parent / spec)
    files = root / "content" / "files.json"
    if files.is_file():
        for entry in json.loads(files.read_text("utf-8")):
            check(files, "content", root / entry)
    return out


def test_extension_contexts_stay_apart() -> None:
    assert (EXTENSION / "content" / "files.json").is_file()
    assert context_violations(EXTENSION) == []


def test_the_context_check_can_fail(tmp_path: Path) -> None:
    bad = {
        "content/a.js": "import { api } from '../background/server.js';\n",
        "sidepanel/b.js": "const m = await import('../background/store.js');\n",
        "sidepanel/views/c.js": "import '../../background/main.js';\nimport { $ } from '../dom.js';\n",
        "shared/d.js": "import { ui } from '../sidepanel/state.js';\n",
        "sidepanel/index.html": '<script src="../background/icon.js"></script><script src="panel.js"></script>',
        "content/files.json": '["shared/protocol.js", "sidepanel/dom.js", "content/capture.js"]',
        "background/e.js": "import '../shared/protocol.js';\nimport * as x from './server.js';\n",  # allowed
    }
    for rel, text in bad.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    assert context_violations(tmp_path) == [
        "content/a.js: loads background/server.js",
        "sidepanel/b.js: loads background/store.js",
        "sidepanel/index.html: loads background/icon.js",
        "sidepanel/views/c.js: loads background/main.js",
        "shared/d.js: loads sidepanel/state.js",
        "content/files.json: loads sidepanel/dom.js",
    ]
