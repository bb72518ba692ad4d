"""Rules first, a model when they are unsure: the one reading bot, CLI and bench share."""

from __future__ import annotations

from engines.model import Model
from engines.steering.model_reader import read_with_model
from engines.steering.rules import Reading, read_reply
from engines.steering.vocabulary import Vocabulary


async def understand(text: str, vocab: Vocabulary, model: Model | None = None, *,
                     author: str = "", reply: str = "",
                     bot_user_id: str | None = None) -> Reading:
    """The rules' reading, or the model's when the rules are unsure and a model is given.

    A reply addressed to another human is never sent to the model: it is not for the bot.
    """
    rules = read_reply(text, vocab, author=author, reply=reply, bot_user_id=bot_user_id)
    if rules.confident or model is None or rules.to_someone_else:
        return rules
    return await read_with_model(model, text, vocab, rules, author=author, reply=reply)
