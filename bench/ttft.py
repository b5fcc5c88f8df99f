"""Time to first token with stream guards: ``python bench/ttft.py [--runs N]``.

A fake model streams a 400-character answer in 4-character chunks, sleeping ``--delay``
milliseconds before each chunk (about 100 chunks, so about 100 ms for the whole message
at the default 1 ms). The agent streams with ``stream_mode="messages"``; each row is the
median over ``--runs`` runs of the time from calling ``stream()`` to the first chunk that
carries text, and to the last one. Rows:

- the hand-written LangGraph floor (one node calling the model) and LangChain 1.5's
  ``create_agent`` with an ``after_model`` guard, when ``langchain`` is installed;
- funcware with no guard, with a ``stream="pass"`` guard (must match no guard),
  ``stream="buffer"`` (first token = the whole message), and a ``SlidingWindow`` of 32 and
  of 128 characters (first token about 32/4 and 128/4 chunks late).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from funcware import SlidingWindow, after_model, create_agent

TEXT = ("The quick brown fox jumps over the lazy dog; " * 10)[:400]
CHUNK = 4


class SlowStreamingModel(BaseChatModel):
    """Streams ``TEXT`` ``CHUNK`` characters at a time, ``delay`` seconds before each."""

    delay: float = 0.001

    @property
    def _llm_type(self) -> str:
        return "slow-streaming"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        time.sleep(self.delay * -(-len(TEXT) // CHUNK))  # not streamed: as long, all at once
        return ChatResult(generations=[ChatGeneration(message=AIMessage(TEXT))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for start in range(0, len(TEXT), CHUNK):
            time.sleep(self.delay)
            yield ChatGenerationChunk(message=AIMessageChunk(content=TEXT[start : start + CHUNK]))

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _guard(stream: Any) -> Any:
    @after_model(stream=stream, name="guard")
    def guard(state: Any) -> None:
        return None

    return guard


def _funcware(stream: Any | None) -> Callable[[float], Any]:
    def build(delay: float) -> Any:
        middleware = [] if stream is None else [_guard(stream)]
        return create_agent(SlowStreamingModel(delay=delay), [], middleware=middleware)

    return build


def _floor(delay: float) -> Any:
    from langgraph.graph import END, START, MessagesState, StateGraph

    model = SlowStreamingModel(delay=delay)

    def call(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call)
    graph.add_edge(START, "model")
    graph.add_edge("model", END)
    return graph.compile()


def _langchain(delay: float) -> Any:
    from langchain.agents import create_agent as lc_create_agent
    from langchain.agents.middleware import after_model as lc_after_model

    @lc_after_model
    def guard(state: Any, runtime: Any) -> None:
        return None

    return lc_create_agent(SlowStreamingModel(delay=delay), [], middleware=[guard])


def _measure(agent: Any) -> tuple[float, float]:
    started = time.perf_counter()
    first = last = 0.0
    inputs = {"messages": [HumanMessage("go")]}
    for chunk, _ in agent.stream(inputs, stream_mode="messages"):
        if isinstance(chunk, AIMessageChunk) and chunk.text:
            last = time.perf_counter() - started
            first = first or last
    return first, last


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--delay", type=float, default=1.0, help="ms before each chunk")
    args = parser.parse_args()
    delay = args.delay / 1000
    rows: list[tuple[str, Callable[[float], Any]]] = [("LangGraph floor", _floor)]
    if importlib.util.find_spec("langchain") is not None:
        rows.append(("LangChain after_model guard", _langchain))
    rows += [
        ("funcware, no guard", _funcware(None)),
        ('funcware, stream="pass"', _funcware("pass")),
        ('funcware, stream="buffer"', _funcware("buffer")),
        ("funcware, SlidingWindow 32", _funcware(SlidingWindow(32, check=str.upper))),
        ("funcware, SlidingWindow 128", _funcware(SlidingWindow(128, check=str.upper))),
    ]
    chunks = -(-len(TEXT) // CHUNK)
    print(f"{chunks} chunks of {CHUNK} chars, {args.delay:g} ms before each; median of {args.runs}")
    print(f"{'agent':<30} {'first token':>12} {'last token':>12}")
    for label, build in rows:
        agent = build(delay)
        _measure(agent)  # warm up
        samples = [_measure(build(delay)) for _ in range(args.runs)]
        first = statistics.median(s[0] for s in samples)
        last = statistics.median(s[1] for s in samples)
        print(f"{label:<30} {first * 1000:>9.1f} ms {last * 1000:>9.1f} ms")


if __name__ == "__main__":
    main()
