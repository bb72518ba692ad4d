"""Time windows in replies ("last 30 minutes", "since 2pm", "between 14:00 and 14:30"),
in the canonical form the constraint carries: `last 30m`, `since 14:00`, `14:00-14:30`."""

from __future__ import annotations

import re

_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "un": 1, "una": 1, "eine": 1, "einer": 1,
                 "une": 1, "uma": 1, "um": 1, "two": 2, "dos": 2, "zwei": 2, "deux": 2,
                 "duas": 2, "three": 3, "tres": 3, "drei": 3, "trois": 3, "três": 3,
                 "five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "thirty": 30,
                 "half an": 0.5, "half a": 0.5, "media": 0.5, "meia": 0.5, "halbe": 0.5,
                 "half": 0.5, "demi": 0.5}
_LAST = re.compile(
    r"\b(?:last|past|previous|prior|within the last|in the last|últim[oa]s|letzten|"
    r"dernières|derniers|dernière|dernier|últim[oa]s?|ultim[oa]s?|letzte[n]?)\s+"
    r"(?P<n>\d+|half an?|an?|one|two|three|five|ten|fifteen|twenty|thirty|un[ao]?|dos|tres|"
    r"três|zwei|drei|deux|trois|duas|eine[rn]?|media|meia|halbe|demi)?\s*"
    r"(?P<unit>minutes?|mins?|m|hours?|hrs?|h|minutos?|horas?|minuten|stunden?|heures?|"
    r"hora)\b",
    re.I,
)
_CLOCK = (r"(?P<{n}h>\d{{1,2}})(?:(?::|h)(?P<{n}m>\d{{2}}))?\s*"
          r"(?P<{n}ap>am|pm|h\b|uhr\b|heures?\b|horas?\b)?")
_SINCE = re.compile(
    r"\b(?:since|from|after|desde(?: las| as)?|seit|ab|depuis|a partir de(?: las| as)?)\s+"
    + _CLOCK.format(n="a") + r"(?:\s*(?:utc|z|cet|gmt))?(?!\s*(?:to|until|till|-|and|y|und|"
    r"et|e|a|bis|hasta|até|à)\s*\d)",
    re.I,
)
_ONWARDS = re.compile(_CLOCK.format(n="a") + r"\s*(?:onwards?|and later|on)\b", re.I)
_RANGE = re.compile(
    r"\b(?:between|from|entre(?: las| as)?|zwischen|de|von)?\s*" + _CLOCK.format(n="a")
    + r"\s*(?:-|–|to|until|till|and|y|und|et|e|a|à|bis|hasta|até)\s*(?:las\s+|as\s+)?"
    + _CLOCK.format(n="b"),
    re.I,
)


def _clock(hour: str, minute: str | None, meridiem: str | None) -> str | None:
    h, m = int(hour), int(minute or 0)
    if meridiem and meridiem.lower() == "pm" and h < 12:
        h += 12
    if meridiem and meridiem.lower() not in ("am", "pm"):
        meridiem = "h"  # "14 Uhr", "14h": a 24-hour clock
    if meridiem and meridiem.lower() == "am" and h == 12:
        h = 0
    if h > 23 or m > 59:
        return None
    if minute is None and not meridiem:
        return None  # a bare number is not a time
    return f"{h:02d}:{m:02d}"


def find_window(text: str) -> tuple[str, tuple[int, int]] | None:
    """The canonical window a clause asks for and where it was said, or None."""
    if match := _RANGE.search(text):
        start = _clock(match["ah"], match["am"], match["aap"])
        end = _clock(match["bh"], match["bm"], match["bap"] or match["aap"])
        if start and end and (":" in match.group(0) or match["aap"] or match["bap"]):
            return f"{start}-{end}", match.span()
    if match := _SINCE.search(text):
        start = _clock(match["ah"], match["am"], match["aap"])
        if start:
            return f"since {start}", match.span()
    if (match := _ONWARDS.search(text)) and (start := _clock(match["ah"], match["am"],
                                                             match["aap"])):
        return f"since {start}", match.span()
    if match := _LAST.search(text):
        said = (match["n"] or "1").lower()
        count = float(said) if said.isdigit() else float(_NUMBER_WORDS.get(said, 1))
        minutes = count * (60 if match["unit"].lower().startswith(("h", "st")) else 1)
        if minutes >= 60 and minutes % 60 == 0:
            return f"last {int(minutes // 60)}h", match.span()
        return f"last {int(minutes)}m", match.span()
    return None
