"""The offline analyzer model (`--model analyzer`): diagnoses without an LLM.

See model.py for how a turn is decided, detectors/ for the causes it knows, reflect.py for
the reflection a retry starts from, and rejections.py for how the sentence that rejects a
diagnosis (engines.diagnosis.REJECTION_PHRASE) is read back.
"""

from engines.analyzer.model import AnalyzerModel
from engines.analyzer.reflect import reflect

__all__ = ["AnalyzerModel", "reflect"]
