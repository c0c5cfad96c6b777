"""The export's file-name rule: shared vectors (fixtures/slug-cases.json) and properties."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from server.dataio.slugs import MAX_BYTES, file_name, safe_component

CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "slug-cases.json").read_text("utf-8"))
RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.I)


def test_component_vectors() -> None:
    for case in CASES["components"]:
        assert safe_component(case["input"]) == case["expect"], case


def test_file_name_vectors() -> None:
    for case in CASES["file_names"]:
        assert file_name(case["title"], case["identity"]) == case["expect"], case


def assert_safe(name: str) -> None:
    assert name and name not in (".", "..")
    assert not re.search(r'[<>:"/\\|?*\x00-\x1f\x7f]', name), name
    assert not name.endswith((".", " ")), name
    assert not RESERVED.match(name), name
    assert len(name.encode("utf-8")) <= 255, name
    assert name == name.lower()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_every_component_is_safe_everywhere(text: str) -> None:
    name = safe_component(text)
    assert_safe(name)
    assert len(name.encode("utf-8")) <= MAX_BYTES
    assert safe_component(name) == name  # stable: a safe name stays as it is


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(min_size=1, max_size=50), st.text(min_size=1, max_size=50))
def test_file_names_are_safe_and_distinct_items_differ(title: str, a: str, b: str) -> None:
    na, nb = file_name(title, a), file_name(title, b)
    assert_safe(na)
    assert na == file_name(title, a)  # the same on every run
    if a != b:
        assert na != nb


def test_the_check_fails_on_unsafe_names() -> None:
    """Positive control: the safety check itself rejects each kind of bad name."""
    for bad in ("CON", "nul.md", "a:b", "dots.", "space ", "x" * 256, "Upper"):
        try:
            assert_safe(bad)
        except AssertionError:
            continue
        raise AssertionError(f"assert_safe accepted {bad!r}")
