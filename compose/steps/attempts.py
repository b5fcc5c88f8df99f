"""One model step's calls, to keep the feedback a layer added before retrying.

A layer that catches one of the strategy's ``retry_errors`` (a structured-output error) and
calls ``handler`` again with messages appended in place to ``request.messages`` (a
validation retry) gets them kept in the state, before the answer, as LangChain keeps them.
Other edits of the request (in place without such an error, or through ``override``) stay
with that call. Loaded only for agents whose model call has ``retry_errors``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import AnyMessage

from funcware.hooks.types import ModelRequest, ModelResponse

__all__ = ["Attempts"]


class Attempts:
    """The calls of one model step: whether one failed, and the last successful request."""

    def __init__(self, messages: list[AnyMessage], errors: tuple[type[BaseException], ...]) -> None:
        self.messages = messages
        self.length = len(messages)
        self.errors = errors
        self.failed = False
        self.last: list[AnyMessage] | None = None

    def note(self, request: ModelRequest[Any], failed: bool) -> None:
        """Record one call's outcome."""
        if failed:
            self.failed = True
        else:
            self.last = request.messages

    def feedback(self) -> list[AnyMessage]:
        """What the successful retry appended to the step's own request list."""
        if not self.failed or self.last is not self.messages:
            return []
        return list(self.messages[self.length :])

    def noting(
        self, call: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Callable[[ModelRequest[Any]], ModelResponse[Any]]:
        """``call``, recording each call's outcome."""

        def noting(request: ModelRequest[Any]) -> ModelResponse[Any]:
            try:
                response = call(request)
            except self.errors:
                self.note(request, failed=True)
                raise
            self.note(request, failed=False)
            return response

        return noting

    def anoting(
        self, call: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]:
        """Async :meth:`noting`."""

        async def noting(request: ModelRequest[Any]) -> ModelResponse[Any]:
            try:
                response = await call(request)
            except self.errors:
                self.note(request, failed=True)
                raise
            self.note(request, failed=False)
            return response

        return noting
