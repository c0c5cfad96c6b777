"""Ages at the granularity of the fact: instants in minutes/hours/days, days in days; and the
ISO form of a stored time. Neither can raise: a time nobody can have meant (NaN, before 1970,
after 9999, as a hand-edited store or an old import may hold) is labelled "unknown date" and
formats as None. New times are refused outside [MIN_TIME, MAX_TIME] at the edge (the import's
schema, server/dataio/schema.py)."""

from __future__ import annotations

import datetime as dt
import time

INSTANT = "instant"
DAY = "day"
UNKNOWN = "unknown date"
MIN_TIME = 0.0  # 1970-01-01T00:00:00Z
MAX_TIME = 253_402_300_799.0  # 9999-12-31T23:59:59Z (a local date past 9999 reads as unknown)


def in_range(t: object) -> bool:
    """Is `t` a time a fact can carry: a finite number of Unix seconds in [MIN_TIME, MAX_TIME]?"""
    # NaN and the infinities fail the comparison; an int of any size compares exactly
    return isinstance(t, int | float) and not isinstance(t, bool) and MIN_TIME <= t <= MAX_TIME


def _local_day(t: float, zone: dt.tzinfo | None) -> dt.date | None:
    try:
        return dt.datetime.fromtimestamp(t, zone).date()
    except (OverflowError, OSError, ValueError):
        return None


def age(
    valid_at: float, granularity: str, *, now: float | None = None, tz: dt.tzinfo | None = None
) -> dict[str, str | None]:
    """{label, granularity, at}: the age as people read it ("3d") beside the ISO date (`iso`;
    None for a time out of range, labelled "unknown date")."""
    return {**_age(valid_at, granularity, now=now, tz=tz), "at": iso(valid_at, granularity, tz)}


def _age(valid_at: float, granularity: str, *, now: float | None = None, tz: dt.tzinfo | None = None) -> dict[str, str]:
    now = time.time() if now is None else now
    kind = DAY if granularity == DAY else INSTANT
    if not in_range(valid_at) or not in_range(now):
        return {"label": UNKNOWN, "granularity": kind}
    if kind == DAY:
        zone = tz or dt.datetime.now().astimezone().tzinfo
        then_day, now_day = _local_day(valid_at, zone), _local_day(now, zone)
        if then_day is None or now_day is None:
            return {"label": UNKNOWN, "granularity": DAY}
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


def iso(epoch: float | None, granularity: str = INSTANT, tz: dt.tzinfo | None = None) -> str | None:
    """The one ISO-8601 form of a stored time: an instant in UTC to the second
    (2026-12-01T21:30:00Z); a day-granular time as its (local) date only (2026-12-01); None when
    there is no time or it is out of range (never an error)."""
    if epoch is None or not in_range(epoch):
        return None
    try:
        if granularity == DAY:
            zone = tz or dt.datetime.now().astimezone().tzinfo
            return dt.datetime.fromtimestamp(epoch, zone).date().isoformat()
        return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def _days(days: int) -> str:
    if days < 60:
        return f"{days}d"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"
