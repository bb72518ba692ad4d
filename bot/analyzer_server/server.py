"""`triage analyzer-server`: the offline analyzer as an OpenAI-compatible endpoint.

`POST /v1/chat/completions` (tools, parallel tool calls, `tool_choice`) and `GET
/v1/models`. Pointing any OpenAI client at it drives Triage's whole LLM path (prompt, tool
schemas, the openai client, retries, budgets) with no tokens and no network, and the
same conversation always gets the same answer. It refuses with 400 what the real API
refuses (rules.py), so a client that works against it is not relying on leniency.

It can also play a small model: `context_tokens` is the window it declares (a longer
prompt is refused, as vLLM does), and `text_only` refuses `tools` as an endpoint without
tool calling does (Ollama's words), so that a client talks to it in the text ReAct format,
which it reads and answers in kind (wire.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from aiohttp import web

from bot.analyzer_server.rules import Refusal, check_chat_request, prompt_tokens
from bot.analyzer_server.wire import completion_body, conversation, request_from_chat
from engines.analyzer.model import decide
from engines.analyzer.reflect import reflect
from engines.budgets import context_window
from engines.model import ModelReply
from engines.text_transcript import is_text_conversation

log = logging.getLogger(__name__)

MODEL_ID = "triage-analyzer"
MAX_BODY_BYTES = 32 * 1024 * 1024
WINDOW = web.AppKey("window", int)
TEXT_ONLY = web.AppKey("text_only", bool)


def answer(body: dict[str, Any]) -> ModelReply:
    """The analyzer's turn for one validated request: pure CPU, run off the event loop.

    A request with no tools to call (Reflexion asking for a reflection) gets the analyzer's
    own reflection on the conversation it was sent.
    """
    request = request_from_chat(body)
    if not request.tools:
        return ModelReply(reflect(conversation(body)[0]))
    return decide(request)


async def _chat(request: web.Request) -> web.Response:
    try:
        body = json.loads(await request.read())
    except ValueError:
        return _refuse(Refusal("We could not parse the JSON body of your request."))
    model = body.get("model") if isinstance(body, dict) else None
    if isinstance(model, str) and model != MODEL_ID:
        return web.json_response({"error": {
            "message": f"The model `{model}` does not exist or you do not have access to it.",
            "type": "invalid_request_error", "param": None, "code": "model_not_found"}},
            status=404)
    if body.get("stream") if isinstance(body, dict) else False:
        return _refuse(Refusal("stream is not supported by triage-analyzer", "stream"))
    if request.app[TEXT_ONLY] and isinstance(body, dict) and body.get("tools"):
        return _refuse(Refusal(f"{MODEL_ID} does not support tools", "tools"))
    tokens = prompt_tokens(body) if isinstance(body, dict) else 0
    refusal = check_chat_request(body, context_tokens=request.app[WINDOW],
                                 count=lambda _: tokens)
    if refusal is not None:
        log.info("refused: %s", refusal.message)
        return _refuse(refusal)
    started = time.perf_counter()
    reply = await asyncio.to_thread(answer, body)
    log.debug("answered in %.0f ms", (time.perf_counter() - started) * 1000)
    text = is_text_conversation(body["messages"]) and not body.get("tools")
    return web.json_response(completion_body(reply, MODEL_ID, tokens, text=text))


async def _models(_: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [
        {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "triage"}]})


def _refuse(refusal: Refusal) -> web.Response:
    return web.json_response(refusal.body(), status=400)


def build_app(context_tokens: int | None = None, *, text_only: bool = False) -> web.Application:
    """`context_tokens`: the window declared (default: `TRIAGE_CONTEXT_TOKENS` or the
    analyzer's known window, engines.budgets)."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[WINDOW] = context_tokens or context_window(MODEL_ID)
    app[TEXT_ONLY] = text_only
    app.router.add_post("/v1/chat/completions", _chat)
    app.router.add_get("/v1/models", _models)
    return app


async def serve(host: str, port: int, *, ready: asyncio.Event | None = None,
                context_tokens: int | None = None, text_only: bool = False) -> None:
    """Serve until cancelled; says where it listens once it does."""
    runner = web.AppRunner(build_app(context_tokens, text_only=text_only), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0] if runner.addresses else (host, port)
    print(f"triage-analyzer listening on http://{bound[0]}:{bound[1]}/v1", flush=True)
    if ready is not None:
        ready.set()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
