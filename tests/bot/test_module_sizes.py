"""Every module of bot/ stays readable in one sitting: under about 400 lines (STYLE.md).

A module past that has usually grown a second and a third job; split it along them rather
than raise the limit.
"""

from __future__ import annotations

from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
ABOUT_400 = 440  # the "about": a tenth over, no more


def test_no_bot_module_is_past_about_400_lines() -> None:
    sizes = {
        str(path.relative_to(BOT.parent)): len(path.read_text().splitlines())
        for path in BOT.rglob("*.py")
    }
    assert len(sizes) > 40, "every module of bot/ is measured"
    too_long = {name: lines for name, lines in sizes.items() if lines > ABOUT_400}
    assert not too_long, f"split these along their jobs: {too_long}"
