"""Model retry: call the model again after a transient error, waiting longer each time.

Guarantee: a model error in ``retry_on`` is retried, up to ``max_retries`` times,
before the run sees it.

When to use: providers fail now and then (rate limits, timeouts, dropped connections);
one such error should not end an agent run that is otherwise fine.

A ``wrap_model_call`` may call ``handler`` more than once: each call runs the inner
layers and the model afresh. ``ModelRetry`` catches the errors listed in ``retry_on``,
waits ``base_delay * backoff_factor ** n`` seconds (at most ``max_delay``) and tries
again, up to ``max_retries`` times; the last error is re-raised. Interrupts
(``GraphBubbleUp``) are never retried. When a retried layer returns state updates, only
those of the attempt that succeeded are kept. ``sleep`` is injectable so tests (and
this demo) do not wait; the demo records the delays instead of sleeping.

How to adapt: retry only what is transient (``retry_on=(RateLimitError,
APITimeoutError)`` of your provider); add jitter (``delay * random.uniform(0.5, 1)``)
when many agents share a rate limit; instead of re-raising, return
``AIMessage("The model is unavailable, please try again later.")`` to end the turn
gracefully; write an ``awrap_model_call`` twin with ``asyncio.sleep`` for async agents
(this sync hook also works under ``ainvoke``: funcware runs it on a worker thread).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.errors import GraphBubbleUp

from funcware import AgentMiddleware, AgentState, ModelRequest, ModelResponse, create_agent
from funcware.testing import ScriptedChatModel


class ModelRetry(AgentMiddleware[AgentState[Any], Any]):
    """Retries failed model calls with exponential backoff."""

    reads = ("model.error",)
    writes = ("handler.retry",)

    def __init__(
        self,
        *,
        max_retries: int = 2,
        retry_on: tuple[type[Exception], ...] = (Exception,),
        base_delay: float = 1.0,
        backoff_factor: float = 2.0,
        max_delay: float = 60.0,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"ModelRetry(max_retries={max_retries}) must be 0 or more")
        self.max_retries = max_retries
        self.retry_on = retry_on
        self.base_delay = base_delay
        self.backoff_factor = backoff_factor
        self.max_delay = max_delay
        self.sleep = sleep

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first retry)."""
        return min(self.base_delay * self.backoff_factor**retry, self.max_delay)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        for retry in range(self.max_retries):
            try:
                return handler(request)
            except GraphBubbleUp:
                raise
            except self.retry_on:
                self.sleep(self.delay(retry))
        return handler(request)  # the last attempt: its error propagates


def demo() -> tuple[Any, dict[str, Any]]:
    """The model fails twice, then answers; the retry waits 0.5 s, then 1 s (recorded)."""
    model = ScriptedChatModel(
        responses=[
            ConnectionError("connection reset by peer"),
            TimeoutError("the provider took too long"),
            "Paris is the capital of France.",
        ]
    )
    waits: list[float] = []
    retry = ModelRetry(
        max_retries=3,
        retry_on=(ConnectionError, TimeoutError),
        base_delay=0.5,
        sleep=waits.append,
    )
    agent = create_agent(model, middleware=[retry])
    state = agent.invoke({"messages": [HumanMessage("What is the capital of France?")]})
    assert waits == [0.5, 1.0] and len(model.calls) == 3
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
