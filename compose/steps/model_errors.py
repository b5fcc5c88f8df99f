"""What went wrong in the model step, in words (loaded only when it goes wrong)."""

from __future__ import annotations

from typing import Any

from funcware.hooks.types import ModelRequest

__all__ = ["ran_out", "unknown_tools"]


def unknown_tools(unknown: list[str], executable: frozenset[str], layers: str) -> ValueError:
    """The error for tools a model wrap put on the request that no tool node can run."""
    return ValueError(  # LangChain's words first: code matches on them
        "Middleware added tools that the agent doesn't know how to execute.\n\n"
        f"Unknown tools: {unknown}\nRegistered tools: {sorted(executable)}\n\n"
        f"A wrap_model_call put them on the model request (the model wraps of this "
        f"agent: {layers}). Either register them when creating the agent "
        "(create_agent(tools=[...]) or a middleware's `tools` attribute), or handle "
        "their calls in a wrap_tool_call middleware."
    )


def ran_out(request: ModelRequest[Any], why: str) -> RuntimeError:
    """A model that raised ``StopIteration`` (langgraph would say only "generator raised ...")."""
    return RuntimeError(
        f"The model {type(request.model).__name__} raised StopIteration: it has no answer "
        f"left (a scripted or fake model given fewer answers than the run needs).{why}"
    )
