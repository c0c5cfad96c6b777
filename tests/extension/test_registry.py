"""The chat-site registry (extension/sites/registry.json): schema, form, evidence, generated files."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.registry import pattern_host

REPO = Path(__file__).resolve().parents[2]
SITES_DIR = REPO / "extension" / "sites"
RAW = (SITES_DIR / "registry.json").read_text(encoding="utf-8")
REGISTRY = json.loads(RAW)
SCHEMA = json.loads((SITES_DIR / "registry.schema.json").read_text(encoding="utf-8"))
GEN = REPO / "scripts" / "gen_sites"

# The 22 sites of DESIGN.md (the spec; the farm reads its list from the registry itself)
SITE_IDS = {
    *("chatgpt", "claude", "gemini", "perplexity", "copilot", "deepseek", "grok", "mistral", "poe", "huggingchat"),
    *("meta", "qwen", "kimi", "manus", "notebooklm", "openrouter", "characterai", "you", "pi", "phind", "zai"),
    "aistudio",
}


def load_gen() -> Any:
    loader = importlib.machinery.SourceFileLoader("gen_sites", str(GEN))
    spec = importlib.util.spec_from_loader("gen_sites", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- a small JSON Schema check
# The subset of JSON Schema 2020-12 that registry.schema.json uses (no dependency needed).

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return validate(value, SCHEMA["$defs"][name], path)
    errors: list[str] = []
    t = schema.get("type")
    if t is not None:
        ok = isinstance(value, TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
        if not ok:
            return [f"{path}: expected {t}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: too short")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int) and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: below {schema['minimum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                errors += validate(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        if len(value) < schema.get("minProperties", 0):
            errors.append(f"{path}: fewer than {schema['minProperties']} properties")
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing {key}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                errors += validate(item, props[key], f"{path}.{key}")
            elif extra is False:
                errors.append(f"{path}: unexpected {key}")
            elif isinstance(extra, dict):
                errors += validate(item, extra, f"{path}.{key}")
    if "anyOf" in schema and not any(not validate(value, s, path) for s in schema["anyOf"]):
        errors.append(f"{path}: matches none of anyOf")
    if "oneOf" in schema and sum(not validate(value, s, path) for s in schema["oneOf"]) != 1:
        errors.append(f"{path}: must match exactly one of oneOf")
    if "not" in schema and not validate(value, schema["not"], path):
        errors.append(f"{path}: matches a forbidden form")
    return errors


def test_schema_validator_catches_errors() -> None:
    bad = json.loads(RAW)
    bad["sites"][0]["layouts"][0]["lazy"] = "sometimes"
    del bad["sites"][1]["composer"]
    chatgpt = next(s for s in bad["sites"] if s["id"] == "chatgpt")
    next(lay for lay in chatgpt["layouts"] if "turn" in lay)["user"] = "x"  # both forms at once
    errors = validate(bad, SCHEMA)
    assert any("lazy" in e for e in errors)
    assert any("missing composer" in e for e in errors)
    assert any("oneOf" in e for e in errors)


def test_registry_matches_its_schema() -> None:
    assert validate(REGISTRY, SCHEMA) == []


# --------------------------------------------------------------------------- form


def test_all_22_sites_sorted_by_id() -> None:
    ids = [s["id"] for s in REGISTRY["sites"]]
    assert set(ids) == SITE_IDS and len(ids) == 22
    assert ids == sorted(ids)


def test_registry_is_canonically_formatted() -> None:
    """registry.json round-trips through the formatter (scripts/gen_sites --format)."""
    assert RAW == load_gen().canonical(json.loads(RAW))


def test_layout_ids_unique_and_hosts_covered() -> None:
    for site in REGISTRY["sites"]:
        ids = [lay["id"] for lay in site["layouts"]]
        assert len(ids) == len(set(ids)), site["id"]
        pattern_hosts = {pattern_host(p) for p in site["matches"]}
        assert pattern_hosts == set(site["hosts"]), f"{site['id']}: hosts and match patterns disagree"
        if "conversation" in site:
            re.compile(site["conversation"])


def test_shared_hosts_are_path_restricted() -> None:
    """huggingface.co and openrouter.ai host more than chat: capture only their chat pages."""
    by_id = {s["id"]: s for s in REGISTRY["sites"]}
    assert by_id["huggingchat"]["matches"] == ["https://huggingface.co/chat*"]
    assert by_id["openrouter"]["matches"] == ["https://openrouter.ai/chat*"]
    host_count: dict[str, int] = {}
    for site in REGISTRY["sites"]:
        for host in site["hosts"]:
            host_count[host] = host_count.get(host, 0) + 1
    assert all(n == 1 for n in host_count.values()), host_count


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    return []


def test_no_selector_uses_fixture_test_hooks() -> None:
    """data-wf-* attributes exist only in fixtures for tests; the real sites do not have them."""
    assert not [s for s in strings(REGISTRY) if "data-wf" in s or "__wf" in s]


def test_every_alternative_has_positive_evidence_on_a_fixture() -> None:
    """Every layout alternative and page-data reader matches at least one fixture of its own site
    (saved real pages are extra evidence, checked by tests/extension/test_extractor.py when present)."""
    for site in REGISTRY["sites"]:
        for alt in site["layouts"] + site.get("page_data", []) + site.get("panels", []):
            fixtures = [e for e in alt["evidence"] if "fixture" in e]
            positive = [e for e in fixtures if e["count"] > 0]
            assert positive, f"{site['id']}/{alt['id']} has no fixture it matches"
            for ev in fixtures:
                assert ev["fixture"].startswith(f"fixtures/sites/{site['id']}/")
                assert (REPO / ev["fixture"]).is_file(), f"{ev['fixture']} does not exist"


def test_content_files_listed_in_order() -> None:
    files = json.loads((REPO / "extension" / "content" / "files.json").read_text(encoding="utf-8"))
    assert files[0] == "shared/protocol.js"
    assert files[-1] == "content/capture.js", "capture.js freezes the namespace and starts: last"
    assert files.index("content/registry.generated.js") < files.index("content/extractor.js")
    for rel in files[1:]:
        assert (REPO / "extension" / rel).is_file(), rel


# --------------------------------------------------------------------------- generated files


def test_generated_files_are_fresh() -> None:
    """manifest host_permissions, registry.generated.js and the README table come from the registry."""
    run = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, str(GEN), "--check"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr + run.stdout


def test_manifest_keeps_other_host_permissions() -> None:
    gen = load_gen()
    manifest = json.dumps(
        {"host_permissions": ["http://127.0.0.1/*", "https://chatgpt.com/*", "https://example.org/*"]}
    )
    perms = json.loads(gen.manifest_text(REGISTRY, manifest))["host_permissions"]
    assert perms[:2] == ["http://127.0.0.1/*", "https://example.org/*"]
    assert perms.count("https://chatgpt.com/*") == 1
    assert "https://huggingface.co/chat*" in perms


def test_check_mode_fails_on_stale_output(tmp_path: Path) -> None:
    gen = load_gen()
    js = gen.generated_js(REGISTRY)
    assert "ns.registry = freeze(" in js
    changed = json.loads(RAW)
    changed["sites"][0]["name"] = "Renamed"
    assert gen.generated_js(changed) != js
    table = gen.sites_table(REGISTRY)
    assert table.count("\n") == 24  # header, rule, 22 sites
    readme = f"intro\n{gen.START}\nold\n{gen.END}\nrest\n"
    assert gen.readme_text(REGISTRY, readme) == f"intro\n{gen.START}\n{table}{gen.END}\nrest\n"


@pytest.mark.parametrize("site", REGISTRY["sites"], ids=lambda s: s["id"])
def test_lazy_layouts_name_a_scroller(site: dict[str, Any]) -> None:
    for layout in site["layouts"]:
        if layout["lazy"] != "none":
            assert layout.get("scroller"), f"{site['id']}/{layout['id']} is {layout['lazy']} without a scroller"
