"""Ages at the granularity of the fact: instants in minutes/hours/days, days in days."""

from __future__ import annotations

import datetime as dt
import time

INSTANT = "instant"
DAY = "day"


def age(valid_at: float, granularity: str, *, now: float | None = None, tz: dt.tzinfo | None = None) -> dict[str, str]:
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
