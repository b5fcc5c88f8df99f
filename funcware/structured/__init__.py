"""Structured output at run time: ``create_agent(response_format=...)``.

A feature on the core's seams, used only by an agent given a ``response_format``:

- ``plan``: the format's strategy is worked out; its output tools are answered by the
  model step (never run by the tool node) and end the run;
- ``model_call``: the request's format is bound (tools or the provider's native mode)
  and the model's answer parsed into ``structured_response``; a wrap layer that retries
  after a ``StructuredOutputError`` keeps the feedback it appended. An agent built
  without a format loads none of this unless a wrap layer sets one on a request;
- ``compiled``: the response's classes may be loaded from checkpoints in langgraph's
  strict deserialization mode.

The strategies and errors are public in :mod:`funcware.structured_output` (LangChain's
names); the run-time logic is :mod:`funcware.structured.runtime`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funcware.compose.steps.model_call import Delegate, ModelCall

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.seams import Build
    from funcware.compose.steps.runs import AgentGraph
    from funcware.hooks.types import ModelRequest, ModelResponse
    from funcware.structured.runtime import StructuredOutput

__all__ = ["StructuredOutputs"]


class _Structured(Delegate):
    """A model strategy that binds the request's response format and parses the answer.

    On an agent built without a ``response_format`` it stays out of the way until a wrap
    layer sets one on a request (``ProviderStrategy``, say): only then is the structured
    output machinery loaded.
    """

    def __init__(self, inner: ModelCall, output: StructuredOutput | None) -> None:
        super().__init__(inner)
        self.output = output
        if output is not None:
            from funcware.structured.errors import StructuredOutputError

            self.response_format = output.initial
            self.answer_tools = output.tool_names
            self.retry_errors = (*inner.retry_errors, StructuredOutputError)

    def bind(self, request: ModelRequest[Any], layers: str) -> tuple[Any, object]:
        if request.response_format is not None:
            if self.output is None:
                from funcware.structured.runtime import StructuredOutput

                self.output = StructuredOutput()
            call = self.output.plan_call(request, layers)
            if call is not None:
                return self.output.bind(request.model, call), call
        return self.inner.bind(request, layers)

    def respond(self, output: AIMessage, bound_for: object) -> ModelResponse[Any]:
        if bound_for is None or self.output is None:
            return self.inner.respond(output, bound_for)
        from funcware.hooks.types import ModelResponse
        from funcware.structured.runtime import Call

        if not isinstance(bound_for, Call):
            return self.inner.respond(output, bound_for)
        messages, structured = self.output.handle(output, bound_for.strategy)
        return ModelResponse(result=messages, structured_response=structured)

    def ran_out(self, request: ModelRequest[Any], bound_for: object) -> str:
        from langchain_core.messages import AIMessage

        from funcware.structured.runtime import Call, describe_format
        from funcware.structured.strategies import ToolStrategy

        last = request.messages[-1] if request.messages else None
        asked_again = isinstance(last, AIMessage) and not last.tool_calls
        if (
            asked_again
            and isinstance(bound_for, Call)
            and isinstance(bound_for.strategy, ToolStrategy)
        ):
            return (
                f" With {describe_format(bound_for.strategy)} the agent calls the model "
                "again until it calls a structured-output tool: a text answer (e.g. JSON "
                "meant for ProviderStrategy) is not taken as the structured response. "
                "Give a wrapped model a profile with structured_output=True, or answer "
                "with the tool call."
            )
        return self.inner.ran_out(request, bound_for)


class StructuredOutputs:
    """The plug-in: structured output for agents given a ``response_format``."""

    name = "structured"

    def plan(self, plan: AgentPlan, build: Build) -> None:
        """Work out the format's strategy; its output tools end the run."""
        response_format = build.options.get("response_format")
        if response_format is None:
            return
        from funcware.structured.runtime import StructuredOutput

        output = StructuredOutput(response_format)
        build.data["structured"] = output
        plan.response_format = output.initial
        plan.answer_tools = output.tool_names

    def model_call(self, call: ModelCall, build: Build) -> ModelCall:
        """Bind and parse the response format, when there is one (or, for the core's late
        formats, whenever one is asked for); a build without one keeps ``call``."""
        output = build.data.get("structured")
        if output is None and "response_format" not in build.options:
            return call  # a format a wrap layer sets: the core's late_formats asks again
        return _Structured(call, output)

    def compiled(self, graph: AgentGraph, build: Build) -> None:
        """Let the response's classes load from checkpoints in strict mode."""
        output = build.data.get("structured")
        if output is None:
            return
        from funcware.structured.serde import allow_in_checkpoints

        allow_in_checkpoints(graph, output.schema_types())
