"""The real-page gate: one comparison of a capture with a saved real page's transcript.

Used by tests/extension/test_extractor.py (content scripts injected into a page) and
e2e/test_farm_real_pages.py (the extension in Chromium, read back from the server). A page whose
host the registry claims must be captured exactly: same turn count, roles, order and
whitespace-collapsed text. A transcript's notes may allow a second reading of a turn; such
readings are listed in e2e/real_pages_readings.json (quoted from the notes), never made by
loosening the comparison. A page may fail only when e2e/real_pages_expected_failures.json lists
it with a reason and a date.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.sites import collapse

HERE = Path(__file__).resolve().parents[2] / "e2e"  # the farm's data files live with the farm
READINGS = HERE / "real_pages_readings.json"
EXPECTED_FAILURES = HERE / "real_pages_expected_failures.json"

Turn = tuple[str, str]


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    pages = data.get("pages")
    assert isinstance(pages, dict), f"{path}: 'pages' must be an object"
    return pages


def readings() -> dict[str, list[dict[str, Any]]]:
    return _load(READINGS)


def expected_failures() -> dict[str, dict[str, str]]:
    """{page: {reason, date}}; every entry must carry both."""
    pages = _load(EXPECTED_FAILURES)
    for name, entry in pages.items():
        assert isinstance(entry, dict) and entry.get("reason") and entry.get("date"), (
            f"{EXPECTED_FAILURES.name}: {name} needs a reason and a date"
        )
    return pages


def describe_expected_failures() -> str:
    pages = expected_failures()
    if not pages:
        return "real-page expected failures: none"
    lines = [f"real-page expected failures ({len(pages)}):"]
    lines += [f"  {n}: {e['reason']} (listed {e['date']})" for n, e in sorted(pages.items())]
    return "\n".join(lines)


@dataclass
class Comparison:
    """How a capture compares with a transcript."""

    expected: int
    captured: int
    matched: int
    exact: bool
    first_diff: str = ""
    used_readings: list[int] = field(default_factory=list)


def allowed_texts(page: str, index: int, text: str) -> list[str]:
    """The transcript's text for a turn, then the readings the notes allow for it."""
    out = [collapse(text)]
    for r in readings().get(page, []):
        if r.get("turn") != index:
            continue
        if "text" in r:
            out.append(collapse(r["text"]))
        if "text_prefix" in r:
            out.append(collapse(r["text_prefix"] + " " + text))
    return out


def compare(page: str, transcript: list[dict[str, Any]], got: list[Turn]) -> Comparison:
    """Compare captured (role, collapsed text) turns with the transcript's turns."""
    matched = 0
    used: list[int] = []
    diff = ""
    for i, want in enumerate(transcript):
        ok_texts = allowed_texts(page, i, want["text"])
        g = got[i] if i < len(got) else None
        if g is not None and g[0] == want["role"] and collapse(g[1]) in ok_texts:
            matched += 1
            if collapse(g[1]) != ok_texts[0]:
                used.append(i)
        elif not diff:
            diff = (
                f"turn {i}: got {g[0]} {collapse(g[1])[:160]!r} / want {want['role']} {ok_texts[0][:160]!r}"
                if g is not None
                else f"turn {i}: missing (want {want['role']} {ok_texts[0][:160]!r})"
            )
    if not diff and len(got) != len(transcript):
        diff = f"got {len(got)} turns, want {len(transcript)}"
    exact = matched == len(transcript) == len(got)
    return Comparison(len(transcript), len(got), matched, exact, diff, used)
