"""Durations as a person writes them (`90d`, `12h`, `2w`): retention's age and the
trash's grace period read them the same way."""

from __future__ import annotations

import re
from datetime import timedelta

from ..errors import InvalidInput

_DURATION = re.compile(r"^([1-9][0-9]{0,6})([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: the longest retention one can ask for (a typo of a year count stays refusable)
MAX = timedelta(days=36500)


def parse(text: str, where: str = "--older-than") -> timedelta:
    """`90d`, `12h`, `30s`, `2w`, `15m` -> a timedelta; anything else refused."""
    m = _DURATION.match(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise InvalidInput(where, f"{text!r} is not a duration like 90d, 12h, 30m, 30s or 2w")
    span = timedelta(seconds=int(m[1]) * _UNIT[m[2]])
    if span > MAX:
        raise InvalidInput(where, "is longer than 100 years")
    return span
