"""Static typing check: ``mypy --strict tests/typing_check.py`` must accept this file.

Decorated functions keep their signatures, async ones stay awaitable, and decorated and
class middleware mix in one list. Importing or running this module only defines things.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    AutoStrategy,
    HookTimeoutError,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ProviderStrategy,
    SlidingWindow,
    StructuredOutputError,
    ToolCallRequest,
    ToolStrategy,
    TracePolicy,
    after_agent,
    after_model,
    before_agent,
    before_model,
    configure_trace_policy,
    dynamic_prompt,
    hook_config,
    internal_call_metadata,
    omit_payload,
    resolve_trace_policy,
    run_error,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import HookResult, run_hook


class MyState(AgentState[Any]):
    count: NotRequired[int]


@dataclass
class MyContext:
    user: str


@before_model
async def count_calls(state: MyState, runtime: Runtime[MyContext]) -> dict[str, Any] | None:
    return {"count": state.get("count", 0) + 1}


@hook_config(can_jump_to=["end"])
@after_model(can_jump_to=["model"], state_schema=MyState, name="stop_early")
def stop_early(state: MyState) -> dict[str, Any] | None:
    return {"jump_to": "end"} if state.get("count", 0) > 3 else None


@before_agent()
def greet(state: AgentState[Any], runtime: Runtime[None]) -> None:
    return None


@after_agent(name="finish")
async def finish(state: AgentState[Any]) -> None:
    return None


@wrap_model_call
async def retry(
    request: ModelRequest[None],
    handler: Callable[[ModelRequest[None]], Awaitable[ModelResponse[Any]]],
) -> ModelCallResult[Any]:
    try:
        return await handler(request)
    except ValueError:
        return await handler(request.override(tool_choice="none"))


@wrap_tool_call(name="guard")
def guard(
    request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
) -> ToolMessage | Command[Any]:
    return handler(request)


@dynamic_prompt
def prompt(request: ModelRequest[None]) -> str:
    return f"You are talking to {len(request.messages)} messages."


@dynamic_prompt(name="formal")
async def formal(request: ModelRequest[None]) -> SystemMessage:
    return SystemMessage("Be formal.")


class Counter(AgentMiddleware[MyState]):
    state_schema = MyState

    def before_model(self, state: MyState, runtime: Runtime[None]) -> dict[str, Any] | None:
        return {"count": state.get("count", 0) + 1}

    async def awrap_model_call(
        self,
        request: ModelRequest[None],
        handler: Callable[[ModelRequest[None]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        response = await handler(request)
        return AIMessage(content=str(len(response.result)))


class Contextual(AgentMiddleware[MyState, MyContext, Any]):
    @hook_config(can_jump_to=["end"])
    def after_model(self, state: MyState, runtime: Runtime[MyContext]) -> dict[str, Any] | None:
        return None if runtime.context.user else {"jump_to": "end"}


MIDDLEWARE: list[AgentMiddleware[Any, Any, Any]] = [
    count_calls,
    stop_early,
    greet,
    finish,
    retry,
    guard,
    prompt,
    formal,
    Counter(),
    Contextual(),
]


async def call_like_functions(
    state: MyState,
    runtime: Runtime[MyContext],
    request: ModelRequest[None],
    tool_request: ToolCallRequest,
) -> None:
    """Decorated functions are still called with their original arguments."""
    counted: dict[str, Any] | None = await count_calls(state, runtime)
    stopped: dict[str, Any] | None = stop_early(state)
    greet(state, Runtime(context=None))
    await finish(state)
    text: str = prompt(request)
    message: SystemMessage = await formal(request)
    tool_result: ToolMessage | Command[Any] = guard(
        tool_request, lambda r: ToolMessage("", tool_call_id="1")
    )
    name: str = stop_early.name
    del counted, stopped, text, message, tool_result, name

    # The signatures are kept, not erased: under --strict an unneeded ignore is an error.
    stop_early(request)  # type: ignore[arg-type]
    prompt(state)  # type: ignore[arg-type]
    wrong: int = await count_calls(state, runtime)  # type: ignore[assignment]
    del wrong


# -- deadlines, failure policies, always-run cleanup --------------------------------


@before_model(timeout=2.5, on_error="continue")
async def timed_observer(state: MyState) -> None:
    return None


@after_agent(always=True, timeout=1)
def close_pool(state: MyState, runtime: Runtime[MyContext]) -> None:
    error: BaseException | None = run_error()
    del error


@wrap_tool_call(timeout=30, on_error="raise", subagents="inherit")
def timed_tool(
    request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
) -> ToolMessage | Command[Any]:
    try:
        return handler(request)
    except HookTimeoutError as exc:
        limit: float = exc.timeout
        return ToolMessage(f"timed out after {limit}", tool_call_id="1")


class Audited(AgentMiddleware[MyState, MyContext]):
    on_error = "continue"

    @hook_config(timeout=0.5, always=True)
    def after_agent(self, state: MyState, runtime: Runtime[MyContext]) -> None:
        return None


RESILIENT: list[AgentMiddleware[Any, Any, Any]] = [
    timed_observer,
    close_pool,
    timed_tool,
    Audited(),
]
before_model(on_error="ignore")  # type: ignore[call-overload]
before_model(always=True)  # type: ignore[call-overload]


# -- structured output -------------------------------------------------------------


@dataclass
class Answer:
    text: str


answer_tools: ToolStrategy[Answer] = ToolStrategy(Answer, handle_errors=(ValueError,))
answer_native: ProviderStrategy[Answer] = ProviderStrategy(Answer, strict=True)
answer_auto: AutoStrategy[Answer] = AutoStrategy(Answer)


@wrap_model_call
def narrow_format(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    try:
        response = handler(request.override(response_format=answer_tools))
    except StructuredOutputError as exc:
        return ModelResponse(result=[exc.ai_message])
    structured: Answer | None = response.structured_response
    del structured
    return response


def read_answer(state: AgentState[Answer]) -> Answer | None:
    return state.get("structured_response")


# -- every option, typed once (hooks/options.py) ---------------------------------------


@wrap_model_call(stream="buffer", writes=["request.model"], stream_internal_calls=True)
def pick_model(
    request: ModelRequest[None], handler: Callable[[ModelRequest[None]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    return handler(request)


@after_model(stream=SlidingWindow(chars=20, check=str.strip), reads=["state.messages"])
def redact(state: MyState) -> None:
    return None


@after_agent(always=True, position="outermost", requires=[Counter])
def report(state: MyState) -> None:
    return None


@before_agent(stream_internal_calls=True, outside=["guard"], inside=[Audited])
def setup(state: MyState) -> None:
    return None


@wrap_tool_call(reads=["tool.args"], writes=["tool.result"], position="innermost")
def observe_tool(
    request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
) -> ToolMessage | Command[Any]:
    return handler(request)


@dynamic_prompt(reads=["state.messages"], requires=["pick_model"])
def declared_prompt(request: ModelRequest[None]) -> str:
    return "Be brief."


DECLARED: list[AgentMiddleware[Any, Any, Any]] = [
    pick_model,
    redact,
    report,
    setup,
    observe_tool,
    declared_prompt,
]


def rejected_options() -> None:
    """Each option only where it applies, with its type (an unneeded ignore is an error)."""
    wrap_model_call(stream="drop")  # type: ignore[call-overload]
    wrap_tool_call(stream="buffer")  # type: ignore[call-overload]
    before_model(stream="buffer")  # type: ignore[call-overload]
    after_model(position="middle")  # type: ignore[call-overload]
    dynamic_prompt(state_schema=MyState)  # type: ignore[call-overload]
    wrap_model_call(can_jump_to=["end"])  # type: ignore[call-overload]
    after_agent(always="yes")  # type: ignore[call-overload]


# -- tracing policy and internal calls (LangChain 1.5), run_hook's interrupts ------------


class Quiet(AgentMiddleware[MyState]):
    trace_policy = TracePolicy(process_inputs=omit_payload)


def tracing_setup(middleware: AgentMiddleware[Any, Any, Any]) -> TracePolicy | None:
    configure_trace_policy(TracePolicy(process_outputs=omit_payload))
    marker: dict[str, Any] = internal_call_metadata()
    assert marker
    return resolve_trace_policy(middleware)


def asked(middleware: AgentMiddleware[Any, Any, Any]) -> list[object]:
    result: HookResult = run_hook(middleware, "after_model", resume={"approved": True})
    return [pause.value for pause in result.interrupts]


# -- OpenTelemetry instrumentation (funcware.observe.instrument) ---------------------------


def traced_block(provider: Any) -> bool:
    from funcware.observe import instrument, uninstrument

    with instrument(provider, capture_content=False) as instrumentation:
        on: bool = instrumentation.active
    uninstrument()
    instrument(tracer_provider=None, capture_content="yes")  # type: ignore[arg-type]
    return on
