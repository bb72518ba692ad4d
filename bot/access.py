"""Who may use the bot, and where: optional allow-lists of channels, users and user groups.

The lists come from the environment (`TRIAGE_ALLOWED_CHANNELS`, `TRIAGE_ALLOWED_USERS`);
an unset list allows everyone. User groups are resolved through `usergroups.users.list`
and cached for a few minutes, so a burst of mentions costs one lookup, and a user added to
the on-call group is let in without restarting the bot. Direct messages are not channels:
only the user allow-list governs them.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import render

log = logging.getLogger(__name__)

CHANNELS_ENV = "TRIAGE_ALLOWED_CHANNELS"
USERS_ENV = "TRIAGE_ALLOWED_USERS"
GROUP_TTL_SECONDS = 300.0
RETRY_SECONDS = 15.0

# Accept what people paste: plain ids, <@U123|name>, <!subteam^S123|@oncall>, <#C123|name>.
_ID = re.compile(r"^<?[@#!]?(?:subteam\^)?(?P<id>[A-Z][A-Z0-9]{2,})(?:\|[^>]*)?>?$")


def _ids(value: str) -> list[str]:
    ids: list[str] = []
    for item in re.split(r"[\s,]+", value.strip()):
        if not item:
            continue
        match = _ID.match(item)
        if match is None:
            raise ValueError(f"{item!r} is not a Slack id (like C0123ABCD, U0123ABCD or S0123ABCD)")
        ids.append(match.group("id"))
    return ids


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """The allow-lists. Empty means "everyone" (or "everywhere")."""

    channels: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> AccessPolicy:
        """Parse the two variables; ids of user groups start with S, of users with U or W."""
        channels = _ids(environ.get(CHANNELS_ENV, ""))
        people = _ids(environ.get(USERS_ENV, ""))
        return cls(
            frozenset(channels),
            frozenset(p for p in people if not p.startswith("S")),
            frozenset(p for p in people if p.startswith("S")),
        )

    @property
    def restricts_users(self) -> bool:
        return bool(self.users or self.groups)

    def channel_allowed(self, channel: str) -> bool:
        return not self.channels or channel in self.channels or channel.startswith("D")


class AccessControl:
    """Answers "may this user act here?", resolving user groups through the Web API."""

    def __init__(self, policy: AccessPolicy, client: AsyncWebClient) -> None:
        self.policy = policy
        self._client = client
        self._members: dict[str, frozenset[str]] = {}
        self._fetched_at = 0.0
        self._refresh: asyncio.Task[None] | None = None

    def allowed_now(self, user: str, channel: str) -> bool | None:
        """The answer without waiting, or None when the group cache must be refreshed first.

        Listeners use this to decide in the same tick as the event arrives, so that a reply
        is applied in the order it was written.
        """
        if not self.policy.channel_allowed(channel):
            return False
        if not self.policy.restricts_users or user in self.policy.users:
            return True
        if any(user in self._members.get(g, frozenset()) for g in self.policy.groups):
            return True
        if self._fresh():
            return False
        return None

    async def refusal(self, user: str, channel: str) -> str | None:
        """None when allowed; otherwise the polite text to show the user, and only them."""
        if not self.policy.channel_allowed(channel):
            return render.refusal_channel(sorted(self.policy.channels))
        decided = self.allowed_now(user, channel)
        if decided is None:
            await self._refresh_groups()
            decided = self.allowed_now(user, channel)
        return None if decided else render.refusal_user(user)

    def _fresh(self) -> bool:
        return time.monotonic() - self._fetched_at < GROUP_TTL_SECONDS

    async def _refresh_groups(self) -> None:
        """One lookup at a time: concurrent callers wait for the same refresh."""
        if self._refresh is None or self._refresh.done():
            self._refresh = asyncio.create_task(self._fetch_groups())
        await asyncio.shield(self._refresh)

    async def _fetch_groups(self) -> None:
        members: dict[str, frozenset[str]] = {}
        failed = False
        for group in sorted(self.policy.groups):
            try:
                response = await self._client.usergroups_users_list(usergroup=group)
            except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
                error = exc.response.get("error") if isinstance(exc, SlackApiError) else exc
                log.warning("cannot list members of user group %s: %s", group, error)
                members[group] = self._members.get(group, frozenset())
                failed = True
                continue
            members[group] = frozenset(response.get("users") or ())
        self._members = members
        # After a failure, try again soon rather than refuse the group for the whole TTL.
        self._fetched_at = time.monotonic() - (GROUP_TTL_SECONDS - RETRY_SECONDS if failed else 0)
