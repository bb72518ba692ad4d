"""The offline analyzer model (`--model analyzer`): diagnoses without an LLM.

See model.py for how a turn is decided, detectors/ for the causes it knows, reflect.py for
the reflection a retry starts from, and rejections.py for the sentence that rejects a
diagnosis.
"""

from engines.analyzer.model import AnalyzerModel
from engines.analyzer.reflect import reflect
from engines.analyzer.rejections import REJECTION_PHRASE, rejection_message

__all__ = ["REJECTION_PHRASE", "AnalyzerModel", "reflect", "rejection_message"]
