"""Ages render at the fact's granularity: instants in minutes/hours/days, days in days only."""

from __future__ import annotations

import datetime as dt
from unittest.mock import ANY

import pytest

from server.ages import DAY, INSTANT, age, iso
from tests.conftest import Api

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 29, 12, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    "seconds_ago,label",
    [
        (0, "just now"),
        (59, "just now"),
        (60, "1m"),
        (12 * 60, "12m"),
        (3599, "59m"),
        (3 * 3600, "3h"),
        (23 * 3600 + 3599, "23h"),
        (2 * 86400, "2d"),
        (59 * 86400, "59d"),
        (90 * 86400, "3mo"),
        (800 * 86400, "2y"),
    ],
)
def test_instant_labels(seconds_ago: int, label: str) -> None:
    assert age(NOW - seconds_ago, INSTANT, now=NOW) == {"label": label, "granularity": "instant", "at": ANY}


def test_future_instant_is_just_now() -> None:
    assert age(NOW + 3600, INSTANT, now=NOW)["label"] == "just now"


@pytest.mark.parametrize(
    "day,label",
    [
        (dt.date(2026, 11, 29), "today"),
        (dt.date(2026, 11, 28), "yesterday"),
        (dt.date(2026, 11, 26), "3d"),
        (dt.date(2026, 12, 1), "today"),
    ],
)
def test_day_labels(day: dt.date, label: str) -> None:
    for hour in (0, 12, 23):  # wherever in the day the value was stored
        valid_at = dt.datetime(day.year, day.month, day.day, hour, tzinfo=UTC).timestamp()
        assert age(valid_at, DAY, now=NOW, tz=UTC) == {"label": label, "granularity": "day", "at": ANY}


def test_a_day_fact_written_30_minutes_ago_never_reads_18h() -> None:
    """The field report's defect: a daily-log fact at local midnight, read at 18:30."""
    now = dt.datetime(2026, 11, 29, 18, 30, tzinfo=UTC).timestamp()
    midnight = dt.datetime(2026, 11, 29, 0, 0, tzinfo=UTC).timestamp()
    assert age(midnight, DAY, now=now, tz=UTC) == {"label": "today", "granularity": "day", "at": ANY}
    assert age(midnight, INSTANT, now=now)["label"] == "18h"  # what the instant renderer would say
    written = now - 30 * 60
    assert age(written, DAY, now=now, tz=UTC)["label"] == "today"


def test_day_boundary_is_in_the_given_zone() -> None:
    tz = dt.timezone(dt.timedelta(hours=-8))
    now = dt.datetime(2026, 11, 29, 1, 0, tzinfo=tz).timestamp()
    late_yesterday = dt.datetime(2026, 11, 28, 23, 0, tzinfo=tz).timestamp()
    assert age(late_yesterday, DAY, now=now, tz=tz)["label"] == "yesterday"
    assert age(late_yesterday, INSTANT, now=now)["label"] == "2h"


async def test_day_note_end_to_end_reads_today_not_hours(api: Api) -> None:
    today = dt.date.today().isoformat()
    status, body = await api.post(
        "/api/notes",
        {"url": "https://log.example/2026", "title": "log", "text": "from the daily log", "valid_day": today},
    )
    assert status == 201
    _, s = await api.get("/api/search", params={"q": "daily log"})
    assert s["results"][0]["age"] == {"label": "today", "granularity": "day", "at": ANY}
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    await api.post(
        "/api/notes", {"url": "https://log.example/2026", "title": "log", "text": "older entry", "valid_day": yesterday}
    )
    _, s = await api.get("/api/search", params={"q": "older entry"})
    assert s["results"][0]["age"] == {"label": "yesterday", "granularity": "day", "at": ANY}


def test_every_age_carries_its_iso_date_beside_the_label() -> None:
    instant = age(NOW - 3 * 86400, INSTANT, now=NOW)
    assert instant["label"] == "3d" and instant["at"] == iso(NOW - 3 * 86400)
    assert dt.datetime.fromisoformat(instant["at"].replace("Z", "+00:00")).timestamp() == int(NOW - 3 * 86400)
    day = age(NOW, DAY, now=NOW, tz=UTC)
    assert day["at"] == dt.datetime.fromtimestamp(NOW, UTC).date().isoformat()
