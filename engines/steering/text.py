"""Slack's markup taken out of a reply, and the reply cut into clauses.

Slack sends `<@U123>` for a mention, `<#C123|incidents>` for a channel, `<url|label>` for a
link, `*bold*`, `_italics_`, `~strike~`, code spans and emoji as `:name:`. None of that is
an instruction; the words, the code spans' contents (often a namespace or a tool) and who is
addressed are.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#C[A-Z0-9]+(?:\|([^>]*))?>")
_LINK = re.compile(r"<(?:https?|mailto):[^|>]*(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)[^>]*>")
_EMOJI = re.compile(r":[a-z][a-z0-9_+\-']*:")
_STRUCK = re.compile(r"(?<![\w~])~[^~\n]+~(?![\w~])")  # struck-through words were taken back
_FENCE = re.compile(r"```(.*?)```", re.S)
_MARKUP = re.compile(r"(?<![\w])[*_~]+|[*_~]+(?![\w])")
_QUOTE_LINE = re.compile(r"^\s*(>|&gt;).*$", re.M)
_SYMBOLS = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]")
_CLAUSE_BREAK = re.compile(
    r"[.;!?\n]+(?=\s|$)|[;\n]|,\s*|\s+(?:-{1,2}|—|–)\s+|"
    r"\s+(?:and then|and also|and|then|also|plus|but|y|e|und|et|aber|pero|mais|mas|sondern|sino)"
    r"\s+",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A reply's plain words, and whether it talks to someone other than the bot."""

    text: str
    to_someone_else: bool
    to_bot: bool


def prepare(raw: str, bot_user_id: str | None = None) -> Prepared:
    """Plain lowercase words of a reply. A reply that opens by mentioning a human (and
    never the bot) is addressed to that human."""
    text = unicodedata.normalize("NFKC", raw).replace("’", "'").replace("‘", "'")
    text = _QUOTE_LINE.sub(" ", text)  # a quoted line is what someone else said
    bot_ids = {bot_user_id} if bot_user_id else set()
    mentioned = [m.group(1) for m in _USER.finditer(text)]
    to_bot = any(m in bot_ids for m in mentioned)
    first = _USER.match(text.strip())
    to_someone_else = bool(first) and not to_bot and first is not None \
        and first.group(1) not in bot_ids
    text = _USER.sub(" ", text)
    text = _CHANNEL.sub(lambda m: f" #{m.group(1) or 'channel'} ", text)
    text = _LINK.sub(lambda m: f" {m.group(1) or 'link'} ", text)
    text = _SPECIAL.sub(" ", text)
    text = _FENCE.sub(lambda m: f" {m.group(1)} ", text)
    text = text.replace("`", " ")
    text = _EMOJI.sub(" ", text)
    text = _STRUCK.sub(" ", text)
    text = _SYMBOLS.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return Prepared(" ".join(text.lower().split()), to_someone_else, to_bot)


def clauses(text: str) -> list[str]:
    """The reply cut where one instruction may end and another begin; a clause that was
    asked keeps its question mark."""
    found: list[str] = []
    start = 0
    for match in (*_CLAUSE_BREAK.finditer(text), None):
        end = match.start() if match else len(text)
        piece = text[start:end].strip(" '\"()[]¿¡")
        if piece:
            asked = match is not None and "?" in match.group(0)
            found.append(piece + "?" if asked and not piece.endswith("?") else piece)
        if match:
            start = match.end()
    return found
