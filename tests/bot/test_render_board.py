"""The hypothesis board's message within Slack's limits: blocks, button values, size."""

from __future__ import annotations

from bot import render_board
from bot._blocks import MAX_BLOCKS, fits
from engines.diagnosis import Culprit
from engines.hypotheses import Hypothesis


def _h(name: str, state: str = "open", score: float = 0.5) -> Hypothesis:
    return Hypothesis.of("crash_loop", Culprit(kind="Deployment", namespace="shop", name=name),
                         score=score, state=state)  # type: ignore[arg-type]


def _values(blocks: list[dict[str, object]]) -> list[str]:
    return [str(e["value"]) for b in blocks for e in b.get("elements", [])  # type: ignore[attr-defined]
            if isinstance(e, dict) and "value" in e]


def test_only_open_hypotheses_get_buttons_with_unique_action_ids() -> None:
    board = [_h("a", "confirmed", 0.9), _h("b", "open", 0.4), _h("c", "refuted", 0.1)]
    message = render_board.board_message("inv1", board, 3)
    actions = [e["action_id"] for b in message.blocks for e in b.get("elements", [])
               if "action_id" in e]
    assert len(actions) == 2 and len(set(actions)) == 2
    assert _values(message.blocks) == ["inv1|" + board[1].id] * 2
    assert message.text == "Hypotheses (step 3): 1 open, 1 confirmed, 1 refuted"
    ended = render_board.board_message("inv1", board, 3, buttons=False)
    assert not _values(ended.blocks) and "open" in ended.text


def test_a_large_board_stays_under_fifty_blocks_and_says_what_it_left_out() -> None:
    board = [_h(f"svc-{i}", score=i / 100) for i in range(60)]
    message = render_board.board_message("inv1", board, 1)
    assert len(message.blocks) <= MAX_BLOCKS and fits(message)
    assert "45 more" in str(message.blocks[-1])


def test_a_long_id_is_sent_as_a_digest_and_found_again() -> None:
    long = _h("x" * 2100)
    value = render_board.value_of("inv1", long.id)
    assert len(value) <= render_board.MAX_VALUE
    investigation_id, key = render_board.parse_value(value)
    assert investigation_id == "inv1" and key.startswith("#")
    assert render_board.find([_h("other"), long], key) is long
    assert render_board.parse_value("garbage") == ("", "")


def test_names_too_long_for_one_message_fall_back_to_the_lines_alone() -> None:
    board = [_h("n" * 200 + str(i)) for i in range(15)]
    message = render_board.board_message("inv1", board, 2)
    assert fits(message) and not _values(message.blocks)  # no buttons, but every line
    assert all("n" * 200 + str(i) in str(message.blocks) for i in range(15))
