"""Running the real bot for tests: as a `triage serve` process, or in-process through the
same `serve` function, always against the loopback Slack of tests/fakes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from bot.access import AccessPolicy
from bot.app import SlackSettings
from bot.cli.serve import make_runner, serve
from bot.feedback import MemoryStore
from bot.investigations.steering import reader_for
from bot.services import Services
from bot.streaming import Mode
from bot.wiring import scenario_setting
from tests.bot.models import Gates, build_test_model
from tests.fakes.slack_api import SIGNING_SECRET, TOKEN, FakeSlack, Posted

ROOT = Path(__file__).resolve().parents[2]
_READY = re.compile(r"serving Slack in .*?http://[\d.]+:(?P<port>\d+)")
_STATE = re.compile(r"\((?P<state>running|paused|waiting for approval|done|stopped|failed), ")


class BotProcess:
    """`python -m tests.bot.serve_process serve …` with stderr drained and the port parsed."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[str] = []
        self.port = 0
        self.ready = asyncio.Event()
        self._drain = asyncio.create_task(self._read())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _read(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            text = line.decode(errors="replace").rstrip()
            self.lines.append(text)
            match = _READY.search(text)
            if match:
                self.port = int(match.group("port"))
                self.ready.set()

    def open_gate(self, name: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"open {name}\n".encode())

    async def stop(self) -> int:
        """SIGTERM, as a container runtime does; the exit code."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.process.wait(), 20)
        await self._drain
        return code

    def log(self) -> str:
        return "\n".join(self.lines[-60:])


@contextlib.asynccontextmanager
async def bot_process(slack: FakeSlack, *, env: Mapping[str, str] | None = None,
                      args: tuple[str, ...] = (), module: str = "tests.bot.serve_process"
                      ) -> AsyncIterator[BotProcess]:
    """`python -m MODULE serve …`: the tests' model by default; `module="bot.cli"` is the
    installed `triage` command itself."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("SLACK_", "TRIAGE_", "OPENAI_"))}
    # Today's messages unless a test asks for Slack's agent surfaces (tests/bot/test_stream*).
    environment |= {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                    "SLACK_API_URL": slack.url, "PYTHONUNBUFFERED": "1",
                    "TRIAGE_SLACK_STREAMING": "off", **(env or {})}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, "serve", "--host", "127.0.0.1",
        "--port", "0", "--scenario", "checkout-oom", *args,
        cwd=ROOT, env=environment, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    bot = BotProcess(process)
    try:
        waiter = asyncio.create_task(bot.ready.wait())
        died = asyncio.create_task(process.wait())
        await asyncio.wait({waiter, died}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        died.cancel()
        if not bot.ready.is_set():
            await asyncio.sleep(0)  # let the stderr reader take the last lines
            raise AssertionError(f"triage serve did not start:\n{bot.log()}")
        yield bot
    finally:
        if process.returncode is None:
            await bot.stop()


class InProcessBot:
    """`serve` on the test's own loop, with the test model and a store the test can read."""

    def __init__(self, slack: FakeSlack, *, policy: AccessPolicy | None = None,
                 runner: Any = None, streaming: Mode = "off") -> None:
        self.slack = slack
        self.streaming: Mode = streaming
        self.gates = Gates()
        self.store = MemoryStore()
        self.stop = asyncio.Event()
        self.port = 0
        self._announced = asyncio.Event()
        self._policy = policy
        self._runner = runner
        self._task: asyncio.Task[Services] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _announce(self, line: str) -> None:
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if match and not self.port:
            self.port = int(match.group(1))
            self._announced.set()

    async def __aenter__(self) -> InProcessBot:
        setting = scenario_setting("checkout-oom")
        runner = self._runner or make_runner(setting, build_test_model(self.gates))
        settings = SlackSettings(TOKEN, None, SIGNING_SECRET, self.slack.url)
        self._task = asyncio.create_task(serve(
            settings, runner, model_name="test-model", stop=self.stop, policy=self._policy,
            host="127.0.0.1", port=0, store=self.store, announce=self._announce,
            metrics=setting.sources.metrics, grace=5.0, reader=reader_for(setting.sources),
            streaming=self.streaming,
        ))
        waiter = asyncio.create_task(self._announced.wait())
        await asyncio.wait({waiter, self._task}, timeout=10,
                           return_when=asyncio.FIRST_COMPLETED)
        if self._task.done():
            self._task.result()
        assert self.port, "serve did not announce its port"
        return self

    async def services_idle(self) -> None:
        """Stop the bot and wait for it: every run ended, every record written."""
        self.stop.set()
        if self._task is not None:
            await asyncio.wait_for(self._task, 20)

    async def __aexit__(self, *exc: object) -> None:
        await self.services_idle()


# --- reading a thread -----------------------------------------------------------------


def status_message(slack: FakeSlack, channel: str, thread_ts: str) -> Posted | None:
    return next((m for m in slack.thread(channel, thread_ts)
                 if m.text.startswith("Investigating:")), None)


def state_of(message: Posted | None) -> str | None:
    match = _STATE.search(message.text) if message else None
    return match.group("state") if match else None


async def ended(slack: FakeSlack, channel: str, thread_ts: str, within: float = 20) -> Posted:
    """Wait until the thread is complete: its status shows the end, and the status edit is
    the thread's last call (the bot queues that edit after everything else, and a channel's
    messages leave in order)."""

    def done(fake: FakeSlack) -> Posted | None:
        status = status_message(fake, channel, thread_ts)
        if status is None or state_of(status) not in ("done", "stopped", "failed"):
            return None
        ours = {m.ts for m in fake.thread(channel, thread_ts)}
        last = next((c for c in reversed(fake.calls)
                     if c.status == 200 and c.method in ("chat.postMessage", "chat.update")
                     and c.args.get("channel") == channel
                     and (c.args.get("ts") in ours or c.args.get("thread_ts") == status.ts
                          or c.args.get("thread_ts") == thread_ts)), None)
        return status if last is not None and last.method == "chat.update" and \
            last.args.get("ts") == status.ts else None

    result: Posted = await slack.wait_for(done, within)
    return result


def posted_with(slack: FakeSlack, channel: str, thread_ts: str, needle: str) -> list[Posted]:
    return [m for m in slack.thread(channel, thread_ts) if needle in m.all_text]


def button(message: Posted, action_id: str) -> str:
    """The value of a button in a message."""
    for block in message.blocks:
        for element in block.get("elements", []):
            if element.get("action_id") == action_id:
                return str(element["value"])
    raise AssertionError(f"no {action_id} button in {message.all_text[:300]}")
