"""Evidence a human can read: where a quote occurs in an observation, and the whole line or
value around it.

A quote is only worth showing if someone can read it: `ImagePullBackOff', first_seen: '2026`
is a fragment, `message: 'Error: ImagePullBackOff'` is evidence. Observations are YAML
(tools/compress.py): block lines of `key: value`, leaf collections in flow style
(`{reason: Failed, count: 3}`, `['a', 'b']`), and lines longer than 160 columns wrapped onto
more indented lines. So a quote is matched across any whitespace (a wrap is whitespace to
YAML, and to the Reflexion evaluator) and, failing that, in any case; and widening makes of
it the largest whole unit around it that fits a length bound:

1. the logical line (its wraps joined by one space, as YAML reads them);
2. else, in the flow collection that holds the quote, the first items with the ones it
   touches (a row's first items name it), or only the ones it touches; going into nested
   collections the same way;
3. else the innermost of those, trimmed at spaces around the quote with `…` marking each
   cut, which `occurs` (and so the evaluator) still accepts.

A quote that is already whole (one of those units, or a trimmed one whose ends fall between
words) is kept as it is, so widening twice changes nothing. Whatever is returned is the
observation's own text, never the quote's spelling of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engines.diagnosis import Diagnosis, Evidence

MAX_QUOTE = 200
"""The longest quote the engine shows; the analyzer picks shorter ones (MAX_QUOTE there)."""
ELLIPSIS = "…"
PREFIX_ITEMS = 2
"""An item among the first of a flow collection is shown, if it fits, with the collection's
first PREFIX_ITEMS + 1 items: a row's first items name it (`name: cart-1, namespace: shop,
status: Terminating`); the fields farther on say nothing of the one quoted."""
_MARKS = (ELLIPSIS, "...")
_WRAP = re.compile(r"[ \t]*\n[ \t]*")
_WORD = re.compile(r"\w")
_OPENERS = {"{": "}", "[": "]"}
_SCALAR_STARTS = frozenset(":,{[")


# --- where a quote occurs ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Located:
    """Where a quote occurs: [start, end) of the text, and whether it was found only once the
    `…` marks at its ends (a trimmed line) were set aside."""

    start: int
    end: int
    cut_left: bool = False
    cut_right: bool = False


def core(quote: str) -> tuple[str, bool, bool]:
    """The quote without the ellipses at its ends, and whether it had one on each side."""
    text, left, right = quote.strip(), False, False
    changed = True
    while changed:
        changed = False
        for mark in _MARKS:
            if text.startswith(mark):
                text, left, changed = text[len(mark):].lstrip(), True, True
            if text.endswith(mark):
                text, right, changed = text[: -len(mark)].rstrip(), True, True
    return text, left, right


def _search(text: str, quote: str) -> tuple[int, int] | None:
    words = quote.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(word) for word in words)
    for flags in (0, re.IGNORECASE):
        if match := re.search(pattern, text, flags):
            return match.start(), match.end()
    return None


def locate(text: str, quote: str) -> Located | None:
    """Where `quote` occurs in `text`: as written, across any whitespace, then in any case;
    then without the `…` (or `...`) marking where a long line was cut. None: nowhere."""
    if found := _search(text, quote):
        return Located(*found)
    inner, left, right = core(quote)
    if (left or right) and (found := _search(text, inner)):
        return Located(*found, cut_left=left, cut_right=right)
    return None


def occurs(quote: str, text: str) -> bool:
    """Whether a quote is the observation's text (what the evaluator accepts)."""
    return locate(text, quote) is not None


# --- the shape of an observation's text ---------------------------------------------------


@dataclass(slots=True)
class _Collection:
    """A flow collection, `{...}` or `[...]`: its brackets and its items' spans."""

    start: int
    end: int = -1
    items: list[tuple[int, int]] = field(default_factory=list)
    item_start: int = -1


@dataclass(slots=True)
class _Line:
    """A logical line: its physical lines (a wrap continues one), where its content starts
    (after the indentation and any `- `), and the flow collections in it."""

    start: int
    end: int
    content: int
    indent: int
    content_column: int
    collections: list[_Collection] = field(default_factory=list)
    # The scanner's state at the end of what was read so far.
    quote: str = ""
    open: list[_Collection] = field(default_factory=list)
    last: str = ""  # the last character read outside quotes that is not a space
    key_seen: bool = False  # a `key: ` at depth 0: the line is a mapping's entry
    value_kind: str = ""  # what follows that key: "" nothing yet, "plain" or "other"
    first_kind: str = ""  # what the content starts with: "plain", or "other" (quote, bracket)

    def scan(self, text: str, start: int, end: int) -> None:
        """Read text[start:end] (one physical line) into the line's structure."""
        index = start
        while index < end:
            char = text[index]
            if self.quote:
                index = self._in_quote(text, index)
                continue
            if char.isspace():
                index += 1
                continue
            innermost = self.open[-1] if self.open else None
            closing = innermost is not None and char == _OPENERS[text[innermost.start]]
            if innermost is not None and innermost.item_start < 0 and not closing \
                    and char != ",":
                innermost.item_start = index
            at_scalar_start = self.last == "" or self.last in _SCALAR_STARTS
            if not self.first_kind:
                self.first_kind = "other" if char in "'\"{[" and at_scalar_start else "plain"
            if char in "'\"" and at_scalar_start:
                self.quote = char
                self._value("other")
            elif char in _OPENERS and at_scalar_start:
                self._value("other")
                self.open.append(_Collection(index))
            elif innermost is not None and closing:
                self.open.pop()
                _close_item(innermost, text, index)
                innermost.end = index + 1
                self.collections.append(innermost)
            elif innermost is not None and char == ",":
                _close_item(innermost, text, index)
            elif char == ":" and innermost is None and not self.key_seen and (
                    index + 1 == end or text[index + 1].isspace()):
                self.key_seen = True
            else:
                self._value("plain")
            self.last = char
            index += 1

    def _in_quote(self, text: str, index: int) -> int:
        """Past one character (or escape) of a quoted scalar; the index to read next."""
        char = text[index]
        if char == "\\" and self.quote == '"':
            return index + 2
        if char == self.quote:
            if self.quote == "'" and text[index + 1 : index + 2] == "'":
                return index + 2  # '' is a quote inside a single-quoted scalar
            self.quote, self.last = "", char
        return index + 1

    def _value(self, kind: str) -> None:
        if self.key_seen and not self.value_kind and not self.open:
            self.value_kind = kind

    def continues(self, text: str, start: int, end: int) -> bool:
        """Whether the physical line text[start:end] continues this one (a YAML wrap)."""
        line = text[start:end]
        if not line.strip():
            return bool(self.quote)  # an empty line inside a quoted scalar is a line break
        indent = len(line) - len(line.lstrip(" "))
        if indent <= self.indent:
            return False
        if self.quote or self.open:
            return True
        if self.key_seen:  # `key: plain words` wrapped below the key, or `key: |` block
            return self.value_kind == "plain" and indent > self.content_column
        return self.first_kind == "plain" and indent >= self.content_column  # `- words`


def _close_item(collection: _Collection, text: str, index: int) -> None:
    """End the collection's current item before `index` (a comma or its closing bracket)."""
    if collection.item_start >= 0:
        end = index
        while end > collection.item_start and text[end - 1].isspace():
            end -= 1
        collection.items.append((collection.item_start, end))
    collection.item_start = -1


def _lines(text: str) -> list[_Line]:
    """The logical lines of an observation, in order. Tabs are not YAML indentation, so a
    tab-indented stack trace stays one line a frame."""
    lines: list[_Line] = []
    position = 0
    for physical in text.split("\n"):
        start, end = position, position + len(physical)
        position = end + 1
        if lines and lines[-1].continues(text, start, end):
            lines[-1].end = end
            lines[-1].scan(text, start, end)
            continue
        indent = len(physical) - len(physical.lstrip(" "))
        body = physical.lstrip()
        while body.startswith("- "):
            body = body[2:].lstrip()
        column = len(physical) - len(body)
        line = _Line(start, end, start + column, indent, column)
        line.scan(text, start + column, end)
        lines.append(line)
    for line in lines:  # a collection never closed was not YAML: its items mean nothing
        line.open.clear()
    return lines


# --- widening ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Widened:
    """A quote made whole: the text to show, where it sits, and whether it was found at all
    (when not, `quote` is the one given, unchanged)."""

    quote: str
    found: bool
    start: int = -1
    end: int = -1


def _joined(text: str) -> str:
    """Text as YAML reads it: each line wrap (with its indentation) one space."""
    return _WRAP.sub(" ", text)


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) grown so that neither end falls inside a word."""
    while start > 0 and _WORD.match(text[start - 1]) and _WORD.match(text[start]):
        start -= 1
    while end < len(text) and _WORD.match(text[end - 1]) and _WORD.match(text[end]):
        end += 1
    return start, end


def _units(line: _Line, text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The whole units around [start, end) of one logical line, the largest first."""
    units = [(line.content, _rstrip(text, line.content, line.end))]
    for collection in sorted(line.collections, key=lambda c: c.start):
        if not (collection.start < start and end < collection.end) or not collection.items:
            continue
        touched = [i for i, (a, b) in enumerate(collection.items) if a < end and start < b]
        if not touched:
            continue
        first, last = touched[0], touched[-1]
        runs = [(collection.items[first][0], collection.items[last][1])]
        if first <= PREFIX_ITEMS:  # with the first items of the row, which name it
            head = min(len(collection.items) - 1, max(last, PREFIX_ITEMS))
            runs.insert(0, (collection.items[0][0], collection.items[head][1]))
        for unit in runs:
            if unit[0] <= start and end <= unit[1] and unit not in units:
                units.append(unit)
    return units


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _trim(unit: str, start: int, end: int, limit: int) -> str:
    """unit[start:end] with as much of `unit` around it as fits in `limit` characters, cut
    between words, with `…` marking each cut."""
    if len(unit) <= limit:
        return unit
    room = max(limit - 4, 1)  # "… " and " …"
    if end - start > room:  # the quote alone is too long: its head
        cut = unit.rfind(" ", start + 1, start + room + 1)
        end = cut if cut > start else start + room
    if end + 2 <= limit:
        low, high = 0, limit - 2
    elif len(unit) - start + 2 <= limit:
        low, high = len(unit) - (limit - 2), len(unit)
    else:
        spare = room - (end - start)
        low, high = start - spare * 2 // 3, end + spare - spare * 2 // 3
    if low <= 0:
        left = 0
    else:
        space = unit.find(" ", low - 1, start)
        left = space + 1 if space >= 0 else start
    if high >= len(unit):
        right = len(unit)
    else:
        space = unit.rfind(" ", end, high + 1)
        right = space if space >= 0 else end
    body = unit[left:right].strip()
    return ("… " if left > 0 else "") + body + (" …" if right < len(unit) else "")


def widen(text: str, quote: str, max_chars: int = MAX_QUOTE) -> Widened:
    """The whole line or value of `text` that `quote` sits in, at most `max_chars` long.

    Not found: the quote unchanged and `found` False, for the caller to flag.
    """
    located = locate(text, quote)
    if located is None:
        return Widened(quote, False)
    return widen_span(text, located, max_chars)


def widen_span(text: str, located: Located, max_chars: int = MAX_QUOTE, *,
               keep_whole: bool = True) -> Widened:
    """The whole line or value of `text` around a span of it. With `keep_whole`, a span that
    is a whole unit already stays as it is (a quote someone chose); without, it becomes the
    largest that fits (around a needle the analyzer found)."""
    start, end = _whole_words(text, located.start, located.end)
    lines = [line for line in _lines(text) if line.start <= end and start <= line.end]
    if len(lines) > 1:
        return _several_lines(text, lines, max_chars)
    line = lines[0]
    start, end = max(start, line.content), min(end, line.end)
    units = _units(line, text, start, end)
    body = _joined(text[start:end])
    if keep_whole and (start, end) in units and len(body) <= max_chars:
        return Widened(body, True, start, end)
    trimmed = located.cut_left or located.cut_right
    if keep_whole and trimmed and (start, end) == (located.start, located.end):
        # cut at both ends between words, and the cuts marked: a long line trimmed already
        shown = ("… " if located.cut_left else "") + body + (" …" if located.cut_right else "")
        if len(shown) <= max_chars:
            return Widened(shown, True, start, end)
    for unit_start, unit_end in units:
        body = _joined(text[unit_start:unit_end])
        if len(body) <= max_chars:
            return Widened(body, True, unit_start, unit_end)
    unit_start, unit_end = units[-1]
    unit = _joined(text[unit_start:unit_end])
    inner_start = len(_joined(text[unit_start:start]))
    inner_end = len(_joined(text[unit_start:end]))
    return Widened(_trim(unit, inner_start, inner_end, max_chars), True, unit_start, unit_end)


def _several_lines(text: str, lines: Sequence[_Line], max_chars: int) -> Widened:
    """A quote over several logical lines: those lines, whole, one a line (cut at a space
    with `…` past `max_chars`)."""
    shown = "\n".join(
        _joined(text[line.start + line.indent:_rstrip(text, line.start, line.end)])
        for line in lines
    )
    if len(shown) > max_chars:
        cut = shown.rfind(" ", 0, max_chars - 1)
        shown = shown[: cut if cut > 0 else max_chars - 2].rstrip() + " …"
    return Widened(shown, True, lines[0].start + lines[0].indent, lines[-1].end)


# --- a diagnosis's evidence ---------------------------------------------------------------


def place(item: Evidence, observations: Sequence[tuple[int, str, str]],
          max_chars: int = MAX_QUOTE) -> Evidence:
    """One quote, widened in the newest observation that holds it (of its tool first, then of
    any: the tool shown is the one whose output it is), with that observation's step; or
    unchanged and marked not found."""
    newest = list(reversed(observations))
    ordered = [o for o in newest if o[1] == item.tool] + [o for o in newest if o[1] != item.tool]
    for step, tool, text in ordered:
        widened = widen(text, item.quote, max_chars)
        if widened.found:
            return Evidence(tool=tool, quote=widened.quote, step=step, found=True)
    return item.model_copy(update={"step": None, "found": False})


def placed(diagnosis: Diagnosis, observations: Sequence[tuple[int, str, str]],
           max_chars: int = MAX_QUOTE) -> Diagnosis:
    """The diagnosis with every quote made whole and placed: `observations` are the run's
    (step, tool, text), in the order they came."""
    evidence = [place(item, observations, max_chars) for item in diagnosis.evidence]
    return diagnosis.model_copy(update={"evidence": evidence})
