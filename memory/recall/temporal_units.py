"""Calendar arithmetic for time expressions: days, weeks, months, years as half-open ranges."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

DAY = timedelta(days=1)
ADJACENT_DAYS = 0.5

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6,
}  # fmt: skip
# Northern-hemisphere meteorological seasons: (first month, number of months).
SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A half-open UTC interval [start, end) that an expression refers to."""

    start: datetime
    end: datetime

    def gap_days(self, other: TimeRange) -> float:
        """Days between the two ranges: 0 when they overlap, else the gap plus half a day.

        The half day keeps adjacent ranges (8 May and 9 May) apart: they touch but do not
        overlap.
        """
        if self.end <= other.start:
            return (other.start - self.end) / DAY + ADJACENT_DAYS
        if other.end <= self.start:
            return (self.start - other.end) / DAY + ADJACENT_DAYS
        return 0.0

    @property
    def days(self) -> float:
        """Length in days."""
        return (self.end - self.start) / DAY


def as_utc(moment: datetime) -> datetime:
    """A tz-aware UTC datetime (naive input is taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def day_range(moment: datetime, offset_days: int = 0) -> TimeRange:
    """The calendar day of `moment`, shifted by `offset_days`."""
    start = as_utc(moment).replace(hour=0, minute=0, second=0, microsecond=0)
    start += offset_days * DAY
    return TimeRange(start, start + DAY)


def week_range(moment: datetime, offset_weeks: int = 0) -> TimeRange:
    """The Monday-to-Sunday week of `moment`, shifted by `offset_weeks`."""
    day = day_range(moment).start
    start = day - day.weekday() * DAY + 7 * offset_weeks * DAY
    return TimeRange(start, start + 7 * DAY)


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    """(year, month) moved by `delta` months."""
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def month_range(year: int, month: int, count: int = 1) -> TimeRange:
    """`count` calendar months starting at year/month."""
    end_year, end_month = add_months(year, month, count)
    return TimeRange(
        datetime(year, month, 1, tzinfo=UTC), datetime(end_year, end_month, 1, tzinfo=UTC)
    )


def year_range(year: int) -> TimeRange:
    """The calendar year."""
    return TimeRange(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def relative_month(moment: datetime, offset: int) -> TimeRange:
    """The calendar month of `moment`, shifted by `offset` months."""
    ref = as_utc(moment)
    year, month = add_months(ref.year, ref.month, offset)
    return month_range(year, month)


def nearest_month(moment: datetime, month: int, count: int = 1) -> TimeRange:
    """The occurrence of `month` nearest to `moment` (a past May, or an upcoming June)."""
    ref = as_utc(moment)
    candidates = [month_range(ref.year + d, month, count) for d in (-1, 0, 1)]
    return min(candidates, key=lambda r: abs((r.start - ref) / DAY + r.days / 2))


def nearest_date(moment: datetime, month: int, day: int) -> TimeRange | None:
    """The date month/day nearest to `moment`, or None when it does not exist."""
    ref = as_utc(moment)
    options: list[TimeRange] = []
    for year in (ref.year - 1, ref.year, ref.year + 1):
        found = exact_date(year, month, day)
        if found is not None:
            options.append(found)
    return min(options, key=lambda r: abs((r.start - ref) / DAY)) if options else None


def exact_date(year: int, month: int, day: int) -> TimeRange | None:
    """The calendar day, or None for an impossible date (31 June)."""
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return TimeRange(start, start + DAY)


def weekday_range(moment: datetime, weekday: int, which: str) -> TimeRange:
    """'last'/'this'/'next' Friday relative to `moment`; 'last' is the most recent one before."""
    today = day_range(moment).start
    if which == "last":
        back = (today.weekday() - weekday) % 7 or 7
        return day_range(today, -back)
    if which == "next":
        ahead = (weekday - today.weekday()) % 7 or 7
        return day_range(today, ahead)
    return day_range(week_range(today).start, weekday)


def season_range(moment: datetime, season: str, offset_years: int) -> TimeRange:
    """'last summer' / 'this winter': the season in the year of `moment` shifted by years."""
    first, count = SEASONS[season]
    ref = as_utc(moment)
    year = ref.year + offset_years
    if offset_years == -1 and month_range(ref.year, first, count).end <= ref:
        year = ref.year  # in December, "last summer" is this year's summer
    return month_range(year, first, count)


def span_ago(moment: datetime, amount: int, unit: str) -> TimeRange:
    """'3 days ago', '2 weeks ago', 'a month ago', '4 years ago' as the unit-sized range."""
    ref = as_utc(moment)
    if unit == "day":
        return day_range(ref, -amount)
    if unit == "week":
        return week_range(ref, -amount)
    if unit == "month":
        return relative_month(ref, -amount)
    return year_range(ref.year - amount)
