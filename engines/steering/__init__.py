"""How a human's reply in the thread is understood: typed constraints, a question, or
neither. `read_reply` is the deterministic reader; a configured model reads what it is
unsure of (`model_reader.read_with_model`)."""

from engines.steering.reader import understand
from engines.steering.rules import Reading, put_reply, read_reply
from engines.steering.vocabulary import Vocabulary

__all__ = ["Reading", "Vocabulary", "put_reply", "read_reply", "understand"]
