"""The real-page gate's one comparison (testkit/farm/real_pages.py) fails every kind of wrong capture.

A positive control for tests/extension/test_extractor.py::test_real_dom and the farm's real-page mode: wrong
turn count, roles, order or text is not exact; whitespace differences are; a second reading counts
only where e2e/real_pages_readings.json lists one for that page and turn; the expected-failure
list carries a reason and a date for every page it names.
"""

from __future__ import annotations

from testkit.farm import real_pages

TRANSCRIPT = [
    {"role": "user", "text": "Which  river is longest?"},
    {"role": "assistant", "text": "The Nile,\nby most measures."},
    {"role": "user", "text": "And in Europe?"},
    {"role": "assistant", "text": "The Volga."},
]
GOOD = [
    ("user", "Which river is longest?"),
    ("assistant", "The Nile, by most measures."),
    ("user", "And in Europe?"),
    ("assistant", "The Volga."),
]


def test_exact_capture_passes_whitespace_collapsed() -> None:
    cmp = real_pages.compare("a-page", TRANSCRIPT, [(r, t.replace(" ", "\u00a0 ")) for r, t in GOOD])
    assert cmp.exact and cmp.matched == 4 and cmp.first_diff == ""


def test_every_kind_of_wrong_capture_fails() -> None:
    wrong = {
        "missing turn": GOOD[:3],
        "extra turn": [*GOOD, ("assistant", "Anything else?")],
        "no turns": [],
        "wrong role": [GOOD[0], ("user", GOOD[1][1]), *GOOD[2:]],
        "wrong order": [GOOD[2], GOOD[3], GOOD[0], GOOD[1]],
        "wrong text": [*GOOD[:3], ("assistant", "The Volga. Copy")],
        "chip leaked": [GOOD[0], ("assistant", "The Nile, Anthropic +2 by most measures."), *GOOD[2:]],
    }
    for what, got in wrong.items():
        cmp = real_pages.compare("a-page", TRANSCRIPT, got)
        assert not cmp.exact, what
        assert cmp.first_diff, what


def test_a_reading_counts_only_where_listed() -> None:
    listed = real_pages.readings()
    page, entries = next(iter(listed.items()))
    entry = entries[0]
    transcript = [{"role": "user", "text": "q"}] * entry["turn"] + [
        {"role": "assistant", "text": "Body of the report."}
    ]
    alt = [(t["role"], t["text"]) for t in transcript[:-1]] + [
        ("assistant", entry["text_prefix"] + " Body of the report.")
    ]
    assert real_pages.compare(page, transcript, alt).exact
    assert real_pages.compare(page, transcript, alt).used_readings == [entry["turn"]]
    assert not real_pages.compare("another-page", transcript, alt).exact


def test_expected_failures_name_a_reason_and_a_date() -> None:
    pages = real_pages.expected_failures()
    assert all(e["reason"] and e["date"] for e in pages.values())
    assert real_pages.describe_expected_failures().startswith("real-page expected failures")
