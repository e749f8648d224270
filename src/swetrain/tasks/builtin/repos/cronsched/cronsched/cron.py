"""Five-field cron expressions: minute hour day-of-month month day-of-week."""
from __future__ import annotations

from datetime import datetime, timedelta

MONTHS = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
FIELDS = [("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day", 1, 31, {}), ("month", 1, 12, MONTHS), ("weekday", 0, 6, DAYS)]
ALIASES = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *"}


class CronError(ValueError):
    """An invalid cron expression."""


def _value(text: str, lo: int, hi: int, names: dict[str, int], field: str) -> int:
    key = text.lower()
    if key in names:
        return names[key]
    if not text.isdigit():
        raise CronError(f"{field}: {text!r} is not a number")
    value = int(text)
    if field == "weekday" and value == 7:
        value = 0
    if value < lo or value > hi:
        raise CronError(f"{field}: {value} outside {lo}-{hi}")
    return value


def parse_field(text: str, lo: int, hi: int, names: dict[str, int] | None = None, field: str = "field") -> set[int]:
    """Expand one cron field (``*``, ``a``, ``a-b``, ``*/n``, ``a-b/n``, lists with ``,``) into a set of values."""
    names = names or {}
    values: set[int] = set()
    for part in text.split(","):
        if not part:
            raise CronError(f"{field}: empty list item in {text!r}")
        base, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{field}: bad step {step_text!r}")
            step = int(step_text)
        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, b = base.split("-", 1)
            start, end = _value(a, lo, hi, names, field), _value(b, lo, hi, names, field)
            if start > end:
                raise CronError(f"{field}: range {base!r} is backwards")
        else:
            start = _value(base, lo, hi, names, field)
            end = hi if slash else start
        values.update(range(start, end + 1, step))
    return values


class CronExpr:
    """A parsed cron expression. When both day-of-month and day-of-week are restricted, a day
    matches if either matches (classic cron semantics)."""

    def __init__(self, expr: str) -> None:
        text = ALIASES.get(expr.strip().lower(), expr.strip())
        parts = text.split()
        if len(parts) != 5:
            raise CronError(f"expected 5 fields, got {len(parts)} in {expr!r}")
        self.expr = expr
        self.minutes, self.hours, self.days, self.months, self.weekdays = (
            parse_field(p, lo, hi, names, name) for p, (name, lo, hi, names) in zip(parts, FIELDS)
        )
        self.day_star = parts[2] == "*"
        self.weekday_star = parts[4] == "*"

    def _day_matches(self, dt: datetime) -> bool:
        weekday = (dt.weekday() + 1) % 7  # Python Monday=0 -> cron Sunday=0
        in_dom = dt.day in self.days
        in_dow = weekday in self.weekdays
        if self.day_star or self.weekday_star:
            return in_dom and in_dow
        return in_dom or in_dow

    def matches(self, dt: datetime) -> bool:
        """True when ``dt`` (seconds ignored) is a firing time."""
        return (
            dt.minute in self.minutes
            and dt.hour in self.hours
            and dt.month in self.months
            and self._day_matches(dt)
        )

    def next_after(self, dt: datetime, limit_days: int = 366 * 5) -> datetime:
        """First firing time strictly after ``dt`` (minute resolution)."""
        t = dt.replace(second=0, microsecond=0) + timedelta(minutes=1)
        end = dt + timedelta(days=limit_days)
        while t <= end:
            if t.month not in self.months:
                t = (t.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
                continue
            if not self._day_matches(t):
                t = t.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if t.hour not in self.hours:
                t = t.replace(minute=0) + timedelta(hours=1)
                continue
            if t.minute not in self.minutes:
                t += timedelta(minutes=1)
                continue
            return t
        raise CronError(f"no firing time within {limit_days} days for {self.expr!r}")

    def upcoming(self, dt: datetime, count: int) -> list[datetime]:
        """The next ``count`` firing times after ``dt``."""
        out = []
        for _ in range(count):
            dt = self.next_after(dt)
            out.append(dt)
        return out
