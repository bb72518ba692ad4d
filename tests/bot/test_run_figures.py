"""What a run cost reaches its record: the real `serve` on the test's loop, two reports of
the same incident, the second answered by the shared tool cache (bot/monitor.py)."""

from __future__ import annotations

import aiohttp

from bot.cli.serve import make_runner
from bot.wiring import scenario_setting
from tests.bot.harness import InProcessBot, ended, state_of
from tests.bot.models import Gates, build_test_model
from tests.fakes.slack_api import FakeSlack, SlackSender
from tools.cache import ToolCache

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


async def test_the_second_report_costs_no_backend_call_and_its_record_says_so() -> None:
    cache = ToolCache()
    gates = Gates()
    runner = make_runner(scenario_setting("checkout-oom"), build_test_model(gates),
                         cache=cache)
    async with FakeSlack() as slack:
        bot = InProcessBot(slack, runner=runner)
        async with bot, aiohttp.ClientSession() as session:
            sender = SlackSender(f"{bot.url}/slack/events", session)
            _sent, first = await sender.mention("CFIRST", "UALICE", REPORT)
            assert state_of(await ended(slack, "CFIRST", first)) == "done"
            _sent, second = await sender.mention("CSECOND", "UBOB", REPORT)
            assert state_of(await ended(slack, "CSECOND", second)) == "done"
            await bot.services_idle()  # every record written
        by_channel = {r.channel: r.id for r in bot.store.records()}
        figures = {channel: bot.store.figures[rid] for channel, rid in by_channel.items()}
    assert (figures["CFIRST"].tool_calls, figures["CFIRST"].cached_calls) == (2, 0)
    assert (figures["CSECOND"].tool_calls, figures["CSECOND"].cached_calls) == (2, 2)
    assert (cache.stats.misses, cache.stats.hits) == (2, 2)
