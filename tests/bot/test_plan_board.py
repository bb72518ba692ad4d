"""The streamed plan shows a search engine's board when one runs: the confirmed hypothesis
complete, refuted ones as errors with what refuted them, the expanded one in progress."""

from __future__ import annotations

from dataclasses import replace

from bot.render_stream import Plan
from engines.diagnosis import Culprit
from engines.hypotheses import Hypothesis

CHECKOUT = Culprit(kind="Deployment", namespace="shop", name="checkout")
CART = Culprit(kind="Deployment", namespace="shop", name="cart")
NODE = Culprit(kind="Node", name="ip-10-0-1-2")


def test_the_plan_follows_the_board() -> None:
    plan = Plan()
    board = (Hypothesis.of("oom_killed", CHECKOUT, score=0.8),
             Hypothesis.of("crash_loop", CART, score=0.5),
             Hypothesis.of("node_failure", NODE, score=0.2).refute("node Ready all along"))
    assert plan.board(board, expanding=(board[1].id,))
    status = {item.title: (item.status, item.note) for item in plan.items}
    assert status["crash loop in Deployment shop/cart"][0] == "in_progress"  # expanded
    assert status["oom killed in Deployment shop/checkout"][0] == "pending"
    assert status["node failure in Node ip-10-0-1-2"] == ("error", "node Ready all along")
    assert not plan.board(board, expanding=(board[1].id,))  # nothing changed: no update
    confirmed = replace(board[0], state="confirmed")
    assert plan.board((confirmed, board[1], board[2]))
    assert plan.leading == "oom killed in Deployment shop/checkout"
    assert plan.items[0].status == "complete"
