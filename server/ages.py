"""Ages at the granularity of the fact: instants in minutes/hours/days, days in days."""

from __future__ import annotations

import datetime as dt
import time

INSTANT = "instant"
DAY = "day"


def iso(epoch: float, granularity: str = INSTANT, tz: dt.tzinfo | None = None) -> str:
    """The one ISO-8601 form of a stored time: an instant in UTC to the second
    (2026-12-01T21:30:00Z); a day-granular time as its (local) date only (2026-12-01)."""
    if granularity == DAY:
        zone = tz or dt.datetime.now().astimezone().tzinfo
        return dt.datetime.fromtimestamp(epoch, zone).date().isoformat()
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def age(valid_at: float, granularity: str, *, now: float | None = None, tz: dt.tzinfo | None = None) -> dict[str, str]:
    """{label, granularity, at}: the age as people read it ("3d") beside the ISO date (`iso`)."""
    return {**_age(valid_at, granularity, now=now, tz=tz), "at": iso(valid_at, granularity, tz)}


def _age(valid_at: float, granularity: str, *, now: float | None = None, tz: dt.tzinfo | None = None) -> dict[str, str]:
    now = time.time() if now is None else now
    if granularity == DAY:
        zone = tz or dt.datetime.now().astimezone().tzinfo
        then_day = dt.datetime.fromtimestamp(valid_at, zone).date()
        now_day = dt.datetime.fromtimestamp(now, zone).date()
        days = (now_day - then_day).days
        label = "today" if days <= 0 else "yesterday" if days == 1 else _days(days)
        return {"label": label, "granularity": DAY}
    seconds = max(0.0, now - valid_at)
    if seconds < 60:
        label = "just now"
    elif seconds < 3600:
        label = f"{int(seconds // 60)}m"
    elif seconds < 86400:
        label = f"{int(seconds // 3600)}h"
    else:
        label = _days(int(seconds // 86400))
    return {"label": label, "granularity": INSTANT}


def _days(days: int) -> str:
    if days < 60:
        return f"{days}d"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"
