"""No import cycle in server/: the modules form layers (the store below governance below the
features below the app). Every import that runs counts — at module level or inside a function;
only `if TYPE_CHECKING:` imports (which never run) are left out. A synthetic cycle proves the
check can fail."""

from __future__ import annotations

import ast
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
