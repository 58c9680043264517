"""The times a question names, and the window they span: "02:10", "2026-11-28 14:05", "凌晨 2 点多", "晚上 8 点",
"下午四点半以后", "4:30 pm", "half past four", "11 o'clock", "this morning", "昨天下午".

Pure regular expressions, no I/O. Each named time is a span: an exact clock time is a point (the window pads it by
``WINDOW_PADDING``); a Chinese hour phrase is as wide as the phrase is vague ("2 点多" is 02:00–03:00, "8 点左右" is
07:30–08:30, "4 点半以后" is 16:30–17:30 after 下午). A part of the day named without any hour ("凌晨", "this
morning", "late afternoon") spans that part (``DAY_PARTS``), and only counts when no hour is named. A day word
("昨天", "yesterday", "上周五", "last Monday") or a bare date moves every time to that day; a day named without any
time spans the whole day. A time that is no clock time (25:00, 2026-13-45, 晚上 12 点) is skipped rather than
guessed. The vocabulary is ordinary Chinese and English, the same for every domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from evigate.rules.text.times.stamps import format_minute

WINDOW_PADDING = timedelta(minutes=15)
"""How far a window reaches either side of a single exact time."""
VAGUE_HOUR = timedelta(minutes=30)
"""How far "8 点" / "8 点左右" reaches either side of the hour."""

CLOCK_TIME = re.compile(
    r"(?:(20\d\d)[-/年](\d{1,2})[-/月](\d{1,2})日?\s*T?\s*)?(?<!\d)([01]?\d|2[0-3])\s*(?:[:：]|点)\s*([0-5]\d)"
    r"(?:\s*[:：]\s*([0-5]\d))?(?:\s*([ap])\.?m\b\.?)?",
    re.IGNORECASE,
)
_ZH_DIGITS = "零一二两三四五六七八九十"
_SHORT_PERIOD = r"(?<![最提很太较更趁尽稍])早|(?<![最很太较更稍傍])晚"
""""早八点", "晚8点半": the one-character parts of the day said before an hour; not the "早" of "最早 3 点" (at the
earliest) or the "晚" of "最晚 8 点" (at the latest), which name a bound, not a part of the day."""
ZH_HOUR = re.compile(
    rf"(?P<period>凌晨|清晨|早上|早晨|上午|中午|午后|下午|傍晚|晚上|今晚|昨晚|夜里|夜间|半夜|今早|{_SHORT_PERIOD})?\s*"
    r"(?P<near>快到|快要到|快|将近|接近|临近|约|大约|大概|差不多)?\s*"
    rf"(?<![\d{_ZH_DIGITS}])(?P<hour>\d{{1,2}}|[{_ZH_DIGITS}]{{1,3}})\s*[点時时]"
    rf"(?:\s*(?P<exact>半|(?:[0-5]?\d|[{_ZH_DIGITS}]{{1,3}})\s*分)|\s*(?P<vague>多|过|左右|前后|许|之前|以前|前))?"
    r"(?P<after>\s*(?:以后|之后|后|起|开始))?"
)
"""A Chinese hour: "下午快五点" (nearly 17:00), "凌晨 2 点多", "四点半以后", "十点前"."""
APPROACHING = frozenset({"快到", "快要到", "快", "将近", "接近", "临近"})
"""Words that put a time just before the hour they name: "快五点" is 16:30-17:00 after 下午."""
EN_HOUR = re.compile(r"(?<![\d:.])(1[0-2]|0?\d)\s*([ap])\.?m\b\.?", re.IGNORECASE)
_EN_HOURS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_EN_HOUR_NUMBER = rf"1[0-2]|0?[1-9]|{'|'.join(_EN_HOURS)}"
_MINUTE_WORDS = {"five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "twenty-five": 25, "thirty": 30, "forty-five": 45}
_EN_MINUTES = rf"[1-5]?\d|{'|'.join(sorted(_MINUTE_WORDS, key=len, reverse=True))}"
EN_SPOKEN = re.compile(
    rf"(?<![\w:.])(?:(?P<part>half|(?:a\s+)?quarter|(?P<minutes>{_EN_MINUTES})\s+minutes?)"
    r"\s+(?P<dir>past|after|to|before)\s+)?"
    rf"(?P<hour>{_EN_HOUR_NUMBER})(?:(?P<clock>\s*o['’]?\s?clock)|[\s-](?P<thirty>thirty|fifteen|forty-five))?"
    r"(?:\s*(?P<meridiem>[ap])\.?m\b\.?)?(?![\w:])",
    re.IGNORECASE,
)
"""An hour said in English words: "11 o'clock", "half past four", "a quarter to five", "four-thirty". A bare number
("four") is no time: only "o'clock", a "past"/"to" or a minute word makes it one."""
HOUR_BEFORE = re.compile(r"(?:到|从|在|直到|等到)\s*$")
"""Words before an hour that make it a time; "快", "约", "大概" … are read with the hour itself (``ZH_HOUR`` near)."""
HOUR_AFTER = re.compile(r"^\s*(?:一到|才|就|那会|那阵|那时|的时候|钟)")
"""Words that make a bare hour a time: "拖到快三点才跑完", "八点一到就卡死" name hours; "3 点建议" names points."""
AFTERNOON = frozenset({"午后", "下午", "傍晚", "晚上", "今晚", "昨晚", "夜里", "夜间", "晚"})
NIGHT = frozenset({"晚上", "今晚", "昨晚", "夜里", "夜间", "晚"})
"""Parts of the day that run past midnight: an hour before the night's end in them is a small hour ("昨晚两点" is
02:00; ``LAST_NIGHT_PART``)."""
AFTER = timedelta(hours=1)
"""How far "4 点半以后" / "4 点起" reaches after the named time."""

DAY_PARTS: tuple[tuple[str, int, int], ...] = (
    # (regex, first hour, end hour): longest phrases first; hours are local, end exclusive (24 = midnight)
    (r"small hours|early hours|wee hours|middle of the night|overnight|凌晨|半夜|深夜|夜里|夜间", 0, 6),
    (r"early (?:this |in the )?morning|清晨|一早|一大早|早上|早晨|今早", 5, 10),
    (r"mid-?morning", 9, 11),
    (r"late (?:this |in the )?morning", 10, 12),
    (r"(?:this |in the )?morning|上午|before (?:noon|lunch(?:time)?|midday)|(?:中午|午饭)(?:之)?前", 6, 12),
    (r"after lunch|early (?:this |in the )?afternoon|午后", 12, 15),
    (r"late (?:this |in the )?afternoon|傍晚", 15, 19),
    (r"lunch(?:time)?|midday|noon|中午|午间", 11, 14),
    (r"(?:this |in the )?afternoon|下午", 12, 18),
    (r"(?:this |in the )?evening|tonight|晚上|今晚|晚间", 18, 24),
)
_DAY_PART = re.compile("|".join(f"(?P<p{i}>{regex})" for i, (regex, _, _) in enumerate(DAY_PARTS)), re.IGNORECASE)
_WEEKDAYS_ZH = "一二三四五六日天"
_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY_WORD = re.compile(
    rf"(?P<word>前天|昨天|昨日|昨晚|昨夜|day before yesterday|yesterday|last night|后天|明天|明日|明早|明晚"
    rf"|day after tomorrow|tomorrow|(?:上周|上星期)(?P<last_zh>[{_WEEKDAYS_ZH}])"
    rf"|last (?P<last_en>{'|'.join(_WEEKDAYS_EN)})"
    rf"|(?:下周|下星期)(?P<next_zh>[{_WEEKDAYS_ZH}])|next (?P<next_en>{'|'.join(_WEEKDAYS_EN)}))",
    re.IGNORECASE,
)
"""A day named by a word: past ("昨天", "last Monday") or to come ("明天", "next Monday", which holds no data yet)."""
_DAY_OFFSETS = {"前天": -2, "day before yesterday": -2, "后天": 2, "day after tomorrow": 2, "明天": 1, "明日": 1,
                "明早": 1, "明晚": 1, "tomorrow": 1}
LAST_NIGHT_PART: tuple[str, int, int] = (r"昨晚|昨夜|last night", -6, 6)
"""(regex, first hour, end hour) of the night before today, hours from today's midnight: 18:00 yesterday to 06:00
today, like a part of the day in ``DAY_PARTS``."""
LAST_NIGHT = re.compile(LAST_NIGHT_PART[0], re.IGNORECASE)
"""The night before today: yesterday evening through the small hours of today."""
DATE = re.compile(r"(?<!\d)(20\d\d)[-/年](\d{1,2})[-/月](\d{1,2})日?(?!\d)")


@dataclass(frozen=True)
class NamedTime:
    """A time the question names: the moment itself and the span it stands for."""

    moment: datetime
    start: datetime
    end: datetime
    span_only: bool = False
    """A part of the day or a whole day ("this morning", "昨天"): a window, but no moment the question names."""
    ambiguous: bool = False
    """A Chinese hour of 1-11 said without a part of the day ("四点半", "八点一到"): 04:30 or 16:30. Read as
    written; ``alternative_window`` gives the reading twelve hours later for the evidence to choose."""
    not_before: datetime | None = None
    """The start of a day to come that a day word names ("明天 0:00"): a window padded around the time stays on that
    day, never reaching into today, whose records are no answer about a time that has not come yet."""

    def twelve_hours_later(self) -> NamedTime:
        shift = timedelta(hours=12)
        return NamedTime(self.moment + shift, self.start + shift, self.end + shift, self.span_only,
                         not_before=self.not_before)


def named_times(query: str, today: date) -> list[NamedTime]:
    """The times ``query`` names, in order of appearance; bare clock times fall on ``today`` (or on the day a day
    word or a bare date names)."""
    named_day = _named_day(query, today)
    day = named_day or today
    found: list[tuple[int, NamedTime]] = []
    taken: list[tuple[int, int]] = []
    for match in CLOCK_TIME.finditer(query):
        year, month, dom, hour, minute, second, meridiem = match.groups()
        try:
            base = datetime(int(year), int(month), int(dom)) if year else datetime(day.year, day.month, day.day)
            moment = base.replace(hour=_meridiem(int(hour), meridiem), minute=int(minute), second=int(second or 0))
        except ValueError:  # 2026-13-45 is not a date; skip it rather than guess
            continue
        found.append((match.start(), NamedTime(moment, moment, moment)))
        taken.append(match.span())
    period: str | None = None
    rejected = named_day is None  # a date that is no date ("2026-02-30"): no part of some day is guessed either
    for match in ZH_HOUR.finditer(query):
        period = match.group("period") or period  # "下午两点到两点半": the second time is in the afternoon too
        if any(start < match.end() and match.start() < end for start, end in taken):
            continue  # "2点10" is a clock time already
        said_as_time = _said_as_time(query, match)
        named = _zh_hour(match, day, period, said_as_time)
        if named is not None:
            found.append((match.start(), named))
            taken.append(match.span())
        elif period and _zh_number(match.group("hour")) is not None:
            rejected = True  # "晚上 12 点" is no time we can place: its "晚上" is not guessed into a window either
    for match in EN_SPOKEN.finditer(query):
        named = _en_spoken(match, day, _part_meridiem(query))
        if named is not None and not any(start < match.end() and match.start() < end for start, end in taken):
            found.append((match.start(), named))
            taken.append(match.span())
    for match in EN_HOUR.finditer(query):
        if not any(start < match.end() and match.start() < end for start, end in taken):
            moment = datetime(day.year, day.month, day.day, _meridiem(int(match.group(1)), match.group(2)))
            found.append((match.start(), NamedTime(moment, moment - VAGUE_HOUR, moment + VAGUE_HOUR)))
    if not found and not rejected:
        found = _day_parts(query, day)
    night = LAST_NIGHT.search(query)
    if not found and not rejected and night:
        # "last night" asked today is yesterday evening through this morning's small hours (the 02:10 batch job)
        _, first, last = LAST_NIGHT_PART
        start = datetime(today.year, today.month, today.day) + timedelta(hours=first)
        found = [(night.start(), NamedTime(start, start, start + timedelta(hours=last - first), True))]
    if not found and not rejected and day != today:
        start = datetime(day.year, day.month, day.day)
        found = [(0, NamedTime(start, start, start + timedelta(days=1), True))]  # "昨天" alone: the whole day
    if night:
        found = [(at, _after_midnight(named, today)) for at, named in found]
    if day > today:  # found by the property that a day to come is never read as today: "明天0:00" padded to 23:45
        floor = datetime(day.year, day.month, day.day)
        found = [(at, replace(named, not_before=floor)) for at, named in found]
    return [named for _, named in sorted(found, key=lambda pair: pair[0])]


def _after_midnight(named: NamedTime, today: date) -> NamedTime:
    """A small hour of "last night" ("last night at 2 am") is today's, not yesterday's: the night ran past midnight."""
    if named.moment.date() != today - timedelta(days=1) or named.moment.hour >= LAST_NIGHT_PART[2] or named.span_only:
        return named
    day = timedelta(days=1)
    return NamedTime(named.moment + day, named.start + day, named.end + day, named.span_only, named.ambiguous)


def _said_as_time(query: str, match: re.Match[str]) -> bool:
    """Whether a time word stands around a bare hour. "一点" is also "a bit" (做到一点, 慢一点就好): only "一点钟"."""
    after = query[match.end():match.end() + 4]
    if match.group("hour") == "一":
        return after.lstrip().startswith("钟")
    before = query[max(0, match.start() - 4):match.start()]
    return bool(match.group("near") or HOUR_BEFORE.search(before) or HOUR_AFTER.match(after))


def _part_meridiem(query: str) -> str | None:
    """"p" when the query names a part of the day after noon ("this afternoon", "tonight"), "a" for one before it
    ("this morning", "in the small hours"), else None."""
    parts = [DAY_PARTS[int(name[1:])] for match in _DAY_PART.finditer(query)
             for name, value in match.groupdict().items() if value]
    if any(first >= 12 for _, first, _ in parts):
        return "p"
    return "a" if any(end <= 12 for _, _, end in parts) else None


def _en_spoken(match: re.Match[str], day: date, part_meridiem: str | None) -> NamedTime | None:
    """The time of an ``EN_SPOKEN`` match, or None when it names no time (a bare number)."""
    part, minutes, direction, hour_text, clock, thirty, meridiem = (
        match.group(name) for name in ("part", "minutes", "dir", "hour", "clock", "thirty", "meridiem"))
    if not (part or clock or thirty):
        return None
    hour = int(hour_text) if hour_text.isdigit() else _EN_HOURS.index(hour_text.lower()) + 1
    minute = _MINUTE_WORDS.get((thirty or "").lower(), 0)
    if part:
        offset = 30 if part.lower() == "half" else 15 if "quarter" in part.lower() else _MINUTE_WORDS.get(
            minutes.lower(), int(minutes) if minutes.isdigit() else 0)
        if offset > 59:
            return None
        minute = offset if direction.lower() in ("past", "after") else 60 - offset
        hour = hour if direction.lower() in ("past", "after") else hour - 1
    said = meridiem or part_meridiem  # "half past four this afternoon"
    hour = _meridiem(hour, said) if said else hour
    ambiguous = not said and 1 <= hour <= 11
    moment = datetime(day.year, day.month, day.day, hour % 24, minute)
    if clock and not part:
        return NamedTime(moment, moment - VAGUE_HOUR, moment + VAGUE_HOUR, ambiguous=ambiguous)  # "11 o'clock"
    return NamedTime(moment, moment, moment, ambiguous=ambiguous)


def _meridiem(hour: int, meridiem: str | None) -> int:
    """24-hour clock of "4:30 pm" / "12 am"; an hour past 12 keeps its value (a 24-hour time with a stray suffix)."""
    if meridiem is None or hour > 12:
        return hour
    if meridiem.lower() == "p":
        return hour if hour == 12 else hour + 12
    return 0 if hour == 12 else hour


def _zh_number(text: str) -> int | None:
    """"4" → 4, "四" → 4, "十一" → 11, "二十" → 20; None for what is no number."""
    if text.isdigit():
        return int(text)
    digits = {char: index for index, char in enumerate("零一二三四五六七八九")} | {"两": 2}
    if "十" in text:
        tens, _, units = text.partition("十")
        value = (digits.get(tens, -100) if tens else 1) * 10 + (digits.get(units, -100) if units else 0)
    else:
        value = digits.get(text, -1) if len(text) == 1 else -1
    return value if value >= 0 else None


def _zh_hour(match: re.Match[str], today: date, period: str | None, said_as_time: bool = False) -> NamedTime | None:
    hour_text, exact, vague, after = (match.group(name) for name in ("hour", "exact", "vague", "after"))
    hour = _zh_number(hour_text)
    if hour is None or not (period or exact or vague or after or said_as_time):
        # a bare "3 点" may be "3 points" (3 点建议): only a period, a minute or a time word around it makes it a time
        return None
    if period in NIGHT and hour < LAST_NIGHT_PART[2]:
        pass  # "昨晚两点", "夜里 3 点": the small hours after midnight, not the afternoon
    elif period in AFTERNOON:
        if hour == 12:
            return None  # 晚上 12 点 is midnight of which day: not guessed
        hour += 12 if hour < 12 else 0
    elif period == "中午" and hour < 6:
        hour += 12  # 中午 1 点 is 13:00
    minute = 30 if exact == "半" else _zh_number(exact.rstrip("分").strip()) if exact else 0
    if hour > 23 or minute is None or minute > 59:
        return None
    moment = datetime(today.year, today.month, today.day, hour, minute)
    ambiguous = period is None and 1 <= hour <= 11
    if after:
        return NamedTime(moment, moment, moment + AFTER, ambiguous=ambiguous)  # "4 点半以后": within the hour after
    if exact:
        return NamedTime(moment, moment, moment, ambiguous=ambiguous)
    if vague in ("多", "过"):
        return NamedTime(moment, moment, moment + timedelta(hours=1), ambiguous=ambiguous)  # "2 点多"
    if vague in ("之前", "以前", "前"):
        return NamedTime(moment, moment - AFTER, moment, ambiguous=ambiguous)  # "十点前": within the hour before
    if match.group("near") in APPROACHING:
        return NamedTime(moment, moment - VAGUE_HOUR, moment, ambiguous=ambiguous)  # "快五点": just before five
    return NamedTime(moment, moment - VAGUE_HOUR, moment + VAGUE_HOUR, ambiguous=ambiguous)


def _day_parts(query: str, day: date) -> list[tuple[int, NamedTime]]:
    """Parts of the day the query names without any hour ("凌晨", "this morning"), as spans on ``day``."""
    found = []
    for match in _DAY_PART.finditer(query):
        index = int(next(name for name, value in match.groupdict().items() if value)[1:])
        _, first, last = DAY_PARTS[index]
        start = datetime(day.year, day.month, day.day) + timedelta(hours=first)
        found.append((match.start(), NamedTime(start, start, start + timedelta(hours=last - first), True)))
    return found


def _named_day(query: str, today: date) -> date | None:
    """The day a day word or a bare date names ("昨天", "last Monday", "明天", "2026-11-20"), else ``today``; None
    when the only date named is no date (2026-02-30)."""
    word = DAY_WORD.search(query)
    if word:
        text = word.group("word").lower()
        if text in _DAY_OFFSETS:
            return today + timedelta(days=_DAY_OFFSETS[text])
        past = word.group("last_zh") or word.group("last_en")
        coming = word.group("next_zh") or word.group("next_en")
        weekday = past or coming
        if weekday is None:
            return today - timedelta(days=1)
        index = _WEEKDAYS_ZH.index(weekday) if weekday in _WEEKDAYS_ZH else _WEEKDAYS_EN.index(weekday.lower())
        monday = today - timedelta(days=today.weekday()) + timedelta(days=-7 if past else 7)
        return monday + timedelta(days=min(index, 6))
    invalid = False
    for match in DATE.finditer(query):
        try:
            return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            invalid = True
    return None if invalid else today


def time_window(times: list[NamedTime]) -> str | None:
    """"START/END" covering every named time (a single exact time padded by ``WINDOW_PADDING``), or None."""
    if not times:
        return None
    start, end = min(t.start for t in times), max(t.end for t in times)
    if start == end:
        start, end = start - WINDOW_PADDING, end + WINDOW_PADDING
    floors = [t.not_before for t in times if t.not_before is not None]
    start = max([start, *floors])
    return f"{format_minute(start)}/{format_minute(end)}"  # what parse_window reads back


def alternative_window(times: list[NamedTime]) -> str | None:
    """The window of ``times`` with every ambiguous hour read twelve hours later ("四点半" as 16:30), or None when no
    hour is ambiguous. Which reading the user meant is for the evidence to say (the Planner's error census), not for a
    rule of thumb: "九点多支付失败" means the morning, "八点一到商品页就卡死" the evening."""
    if not any(t.ambiguous for t in times):
        return None
    return time_window([t.twelve_hours_later() if t.ambiguous else t for t in times])


def time_label(moment: datetime) -> str:
    """"YYYY-MM-DD HH:MM", with ":SS" when the seconds were named."""
    return format_minute(moment) + (f":{moment:%S}" if moment.second else "")
