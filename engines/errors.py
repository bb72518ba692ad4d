"""One exception tree for run-level failures.

Recoverable problems (a tool that errs, a model reply that does not parse) go back to the
model as observations; only what ends a run raises, and always a `TriageError`, so the bot
and the command line can catch one type and say what went wrong in one line.
"""

from __future__ import annotations


class TriageError(Exception):
    """Base of every error Triage raises on purpose."""


class ConfigurationError(TriageError):
    """Settings are missing or contradict each other (unknown scenario, bad flag value)."""


class ScenarioError(TriageError):
    """A scenario cannot be found or does not follow the scenario format."""


class ModelError(TriageError):
    """The model endpoint failed in a way that retrying will not fix."""


class ModelAuthError(ModelError):
    """The endpoint refused the credentials: fail fast, retrying cannot help."""


class ModelUnavailableError(ModelError):
    """The endpoint stayed down, slow or rate limited after every retry."""


class ModelRequestsDisabledError(ModelError):
    """Requests to model endpoints off this machine are switched off
    (`engines.openai_model.ALLOW_MODEL_REQUESTS`), as the test suite does."""


class ModelBehaviorError(ModelError):
    """The model kept answering output that cannot be used, even after being told why."""


class BackendError(TriageError):
    """A data source (cluster, logs, metrics) failed; tools turn this into an observation."""


class BackendUnavailableError(BackendError):
    """A data source did not answer, or answered that it cannot now (unreachable, timed out,
    connection reset, 5xx, 429): the same request may well succeed in a moment, so the
    toolset retries it before the model sees it. `source` names the source that failed, as
    `Sources` names it ("cluster", "logs", "metrics"), so that a source that stays down can
    be read another way."""

    def __init__(self, message: str, *, source: str) -> None:
        super().__init__(message)
        self.source = source


class BackendQueryError(BackendError):
    """The backend refused the request itself (a 400: a query it cannot parse, a field
    selector it does not support): retrying cannot help, fixing the arguments can."""


class ToolError(TriageError):
    """A tool failed for good; the message is what the model is shown."""


class ToolRetryError(ToolError):
    """The call was wrong in a way the model can fix (bad arguments): the message is the hint."""


class ApprovalDeniedError(ToolError):
    """A tool that changes something was not approved by a human."""


class ConstraintViolationError(ToolError):
    """A call breaks a constraint a human set (an excluded namespace, a banned tool)."""
