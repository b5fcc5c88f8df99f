"""Human approval: pause before sensitive tool calls until a person approves, edits or rejects.

Guarantee: no call to a listed tool runs before a human decision (unless its ``when``
condition is false).

When to use: tools with side effects that cannot be undone — sending e-mail, moving
money, deleting data — where a person must sign off on each call the model proposes.

An ``after_model`` hook finds the model's latest answer — the last ``AIMessage``, not
``messages[-1]``: a hook that ran before it may have appended messages after it — and the
calls of that answer that no ``ToolMessage`` answers yet (a limit's refusal, another
reviewer's rejection); those are the calls the agent is about to run. If any of them needs
approval it calls langgraph's ``interrupt()`` with one review request per call: the run
stops and ``invoke`` returns the state with an ``__interrupt__`` entry holding the requests.
The caller shows them to a person and resumes the same thread with
``agent.invoke(Command(resume={"decisions": [...]}), config)``: the hook runs again,
``interrupt()`` now returns the decisions, and the hook rewrites the answer —

- ``{"type": "approve"}`` keeps the call as it is;
- ``{"type": "edit", "args": {...}}`` keeps the call with the reviewer's arguments;
- ``{"type": "reject", "message": "..."}`` keeps the call but answers it with an error
  ``ToolMessage`` right away, so the tool never runs and the model learns why.

``when={"refund": lambda call: call["args"]["amount"] > 100}`` asks only about the calls
for which the condition is true; the others run without a pause. A condition receives the
``ToolCall`` (``name``, ``args``, ``id``) and returns a bool (anything else is refused and
nothing runs); tools without one always ask.

It fails closed. The pause carries a typed ``response_schema``: a resume it does not
understand (a typo in a type, a missing key, a wrong count) raises before langgraph saves
it, nothing runs, and the same approval can be answered again. A decision may name its call
(``"tool_call_id": "..."``); one that names another call — a resume meant for another
approval, or sent twice — is refused the same way. Answer a pause by its id,
``Command(resume={pause.id: {...}})``, and the agent refuses an answer to a pause already
answered; a resume on a thread with nothing pending is refused too. An edit keeps the tool
(a decision naming another tool is refused), so no call escapes its own tool's policy.

``ReviewToolResults({"lookup"})``, in this file too, holds a tool's result instead: the
model sees it only after a person shows, replaces or withholds it.

The rewritten ``AIMessage`` keeps its id, so ``add_messages`` replaces it in place; the
agent then runs only the calls still unanswered. Pausing needs a checkpointer (the paused
run is saved there) and a ``thread_id`` in the config to find it again.

How to adapt: use a persistent checkpointer (SQLite, Postgres) so approvals may take
days; put ``allowed`` decisions per tool in the request so the UI offers only those;
approve read-only tools automatically by leaving them out of ``needs_approval``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
from pydantic import AfterValidator, ConfigDict, Field, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from funcware import AgentMiddleware, AgentState, create_agent
from funcware.testing import ScriptedChatModel


class ReviewRequest(TypedDict):
    """What the reviewer is shown for one tool call."""

    tool_call_id: str
    name: str
    args: dict[str, Any]


@with_config(ConfigDict(extra="forbid"))
class Approve(TypedDict):
    """Run the call as the model proposed it."""

    type: Literal["approve"]
    tool_call_id: NotRequired[str]
    """If given, the id of the call this decision is for (a mismatch is refused)."""


@with_config(ConfigDict(extra="forbid"))
class Edit(TypedDict):
    """Run the call with the reviewer's arguments (the tool stays the same)."""

    type: Literal["edit"]
    args: dict[str, Any]
    tool_call_id: NotRequired[str]


@with_config(ConfigDict(extra="forbid"))
class Reject(TypedDict):
    """Do not run the call; answer it with an error ``ToolMessage`` carrying ``message``."""

    type: Literal["reject"]
    message: NotRequired[str]
    tool_call_id: NotRequired[str]


Decision = Annotated[Approve | Edit | Reject, Field(discriminator="type")]
"""The reviewer's answer for one tool call, in the order of the requests."""


def resume_schema(count: int, ids: Sequence[str] | None = None) -> type:
    """The shape a resume must have to answer ``count`` review requests:
    ``{"decisions": [...]}`` with exactly ``count`` well-formed decisions; where a decision
    names its call (``tool_call_id``), it must be the call at its position in ``ids``.

    Given to ``interrupt(..., response_schema=...)``: clients see it as JSON Schema, and
    langgraph validates the resume against it *before* saving it, so a malformed or
    misdirected resume raises, approves nothing and leaves the same approval open to be
    answered again.
    """
    decisions = Annotated[list[Decision], Field(min_length=count, max_length=count)]
    typed: type = TypedDict("ReviewResume", {"decisions": decisions})  # type: ignore[name-match]
    schema: type = with_config(ConfigDict(extra="forbid"))(typed)
    if ids is None:
        return schema
    expected = list(ids)

    def addressed_to_these_calls(resume: Any) -> Any:
        for position, (decision, call_id) in enumerate(
            zip(resume["decisions"], expected, strict=True)
        ):
            named = decision.get("tool_call_id", call_id)
            if named != call_id:
                raise ValueError(
                    f"decision {position} is for tool call {named!r}, but the call under "
                    f"review at that position is {call_id!r} (pending: {expected}); it was "
                    "meant for another approval, or for one already answered"
                )
        return resume

    return Annotated[schema, AfterValidator(addressed_to_these_calls)]  # type: ignore[return-value]


Condition = Callable[[ToolCall], bool]
"""Whether one proposed call needs a human decision."""


def pending_calls(messages: Sequence[AnyMessage]) -> tuple[AIMessage | None, list[ToolCall]]:
    """The model's latest answer (the last ``AIMessage``) and its calls no ``ToolMessage``
    answers yet: the calls the agent will run, whatever other hooks appended after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return message, [c for c in message.tool_calls if c["id"] not in answered]
    return None, []


CALL_DECISIONS = (
    "{'type': 'approve'}, {'type': 'edit', 'args': {...}} or {'type': 'reject', 'message': '...'}"
)
"""The decisions a review of tool calls takes, for error messages."""


def refusal(error: ValidationError, names: Sequence[str], shapes: str = CALL_DECISIONS) -> str:
    """Why a resume was refused, in LangChain's words first, then what to send instead."""
    problems = "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or 'resume'}: {issue['msg']}"
        for issue in error.errors()
    )
    return (
        f"Unexpected human decision: {error.errors()[0].get('input')!r}. {problems}. "
        f"Expected {{'decisions': [...]}} with one decision per review request "
        f"({list(names)}), each {shapes}. Nothing was run; resume the thread again with "
        "valid decisions."
    )


class ApproveToolCalls(AgentMiddleware[AgentState]):
    """Interrupts the run for a human decision on each pending call to a tool in
    ``needs_approval`` whose ``when`` condition (if any) is true.

    Guarantee: no call to a listed tool runs before a human decision, and a resume it
    does not understand, or one whose decisions name other calls (``tool_call_id``),
    decides nothing (it raises ``ValueError`` naming the problem and the approval stays
    open to be answered again). An edit keeps the tool: a decision naming another tool is
    refused, so no call escapes the policy of the tool it would become.
    """

    reads = ("state.messages", "messages.latest")
    writes = ("state.messages", "messages.rewrite", "messages.answer", "interrupt")

    def __init__(
        self, needs_approval: Collection[str], *, when: Mapping[str, Condition] | None = None
    ) -> None:
        if isinstance(needs_approval, str) or not all(
            isinstance(name, str) for name in needs_approval
        ):
            raise TypeError(
                f"ApproveToolCalls: needs_approval is {needs_approval!r}; give a collection "
                "of tool names, e.g. {'refund'} (a bare string would be read as its letters)."
            )
        self.needs_approval = frozenset(needs_approval)
        self.when = dict(when or {})
        stray = sorted(set(self.when) - self.needs_approval)
        if stray:
            raise ValueError(
                f"ApproveToolCalls: when= has conditions for {stray}, which are not in "
                f"needs_approval {sorted(self.needs_approval)}; add them there, or drop the "
                "conditions (a tool outside needs_approval never asks)."
            )
        for name, condition in self.when.items():
            if not callable(condition):
                raise TypeError(
                    f"ApproveToolCalls: when[{name!r}] is {condition!r}; give a function "
                    "that takes the ToolCall and returns True when a human must decide."
                )

    def needs_review(self, call: ToolCall) -> bool:
        """Whether ``call`` waits for a human decision. A condition that answers anything
        but ``True`` or ``False`` is refused (``TypeError``): the call does not run."""
        if call["name"] not in self.needs_approval:
            return False
        condition = self.when.get(call["name"])
        if condition is None:
            return True
        answer = condition(call)
        if not isinstance(answer, bool):
            raise TypeError(
                f"ApproveToolCalls: when[{call['name']!r}] returned {answer!r} for tool call "
                f"{call['id']!r}; a condition must return True (ask a human) or False (run "
                "without asking). Nothing was run."
            )
        return answer

    def after_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:
        answer, unanswered = pending_calls(state["messages"])
        pending = [call for call in unanswered if self.needs_review(call)]
        if answer is None or not pending:
            return None
        requests = [
            ReviewRequest(tool_call_id=call["id"] or "", name=call["name"], args=call["args"])
            for call in pending
        ]
        # The first time through, interrupt() stops the run here. On resume the hook runs
        # again from the top (so nothing above may have side effects) and interrupt()
        # returns the value given to Command(resume=...).
        # A resume that does not match resume_schema raises here, before anything is
        # approved and before langgraph saves it: the approval stays open (fail closed).
        try:
            schema = resume_schema(len(pending), [r["tool_call_id"] for r in requests])
            resume = interrupt({"review": requests}, response_schema=schema)
        except ValidationError as error:
            raise ValueError(refusal(error, [call["name"] for call in pending])) from error
        decisions: list[Decision] = resume["decisions"]
        by_id = {call["id"]: decision for call, decision in zip(pending, decisions, strict=True)}

        calls: list[ToolCall] = []
        rejections: list[ToolMessage] = []
        for call in answer.tool_calls:
            decision = by_id.get(call["id"])
            if decision is None or decision["type"] == "approve":
                pass  # not under review, or approved: the call runs as proposed
            elif decision["type"] == "edit":
                call = ToolCall(
                    name=call["name"], args=decision["args"], id=call["id"], type="tool_call"
                )
            elif decision["type"] == "reject":
                reason = decision.get("message", "The reviewer rejected this call.")
                rejections.append(
                    ToolMessage(
                        content=f"Rejected by a reviewer: {reason}",
                        name=call["name"],
                        tool_call_id=call["id"] or "",
                        status="error",
                    )
                )
            calls.append(call)
        reviewed = answer.model_copy(update={"tool_calls": calls})  # same id: replaced in place
        return {"messages": [reviewed, *rejections]}


@with_config(ConfigDict(extra="forbid"))
class ShowResult(TypedDict):
    """Let the model see the tool's result as it is."""

    type: Literal["approve"]
    tool_call_id: NotRequired[str]


@with_config(ConfigDict(extra="forbid"))
class ReplaceResult(TypedDict):
    """Let the model see ``content`` instead of the tool's result."""

    type: Literal["edit"]
    content: str
    tool_call_id: NotRequired[str]


@with_config(ConfigDict(extra="forbid"))
class WithholdResult(TypedDict):
    """Withhold the result: the model sees an error saying so, with ``message``."""

    type: Literal["reject"]
    message: NotRequired[str]
    tool_call_id: NotRequired[str]


ResultDecision = Annotated[ShowResult | ReplaceResult | WithholdResult, Field(discriminator="type")]
"""The reviewer's answer for one held result, in the order of the requests."""

REVIEWED = "funcware_result_reviewed"
"""The ``response_metadata`` flag on a result a reviewer has decided."""


def result_resume_schema(ids: Sequence[str]) -> type:
    """``{"decisions": [...]}``: one well-formed decision per held result, in order; where a
    decision names its call (``tool_call_id``), it must be the call at its position."""
    count, expected = len(ids), list(ids)
    decisions = Annotated[list[ResultDecision], Field(min_length=count, max_length=count)]
    typed: type = TypedDict("ResultReviewResume", {"decisions": decisions})  # type: ignore[name-match]
    schema: type = with_config(ConfigDict(extra="forbid"))(typed)

    def addressed_to_these_results(resume: Any) -> Any:
        for position, (decision, call_id) in enumerate(
            zip(resume["decisions"], expected, strict=True)
        ):
            if decision.get("tool_call_id", call_id) != call_id:
                raise ValueError(
                    f"decision {position} is for tool call {decision['tool_call_id']!r}, but "
                    f"the result held at that position is {call_id!r} (held: {expected})"
                )
        return resume

    return Annotated[schema, AfterValidator(addressed_to_these_results)]  # type: ignore[return-value]


class ReviewToolResults(AgentMiddleware[AgentState]):
    """Holds the results of the tools in ``tools`` for a human decision before the model
    sees them: show, replace (``{"type": "edit", "content": ...}``) or withhold.

    Guarantee: no result of a listed tool reaches the model before a human decision, and a
    resume it does not understand decides nothing (``ValueError``; the review stays open).

    A ``before_model`` hook finds the results of the current turn (the ``ToolMessage`` messages
    after the model's latest answer) that come from a listed tool and were not reviewed
    yet, and pauses with ``{"results": [{"tool_call_id", "name", "content"}, ...]}``. On
    resume each result is rewritten in place (same id) and flagged as reviewed, so it is
    never asked about again. Results still stream to the client as the tools finish: hold
    them there with the client's own filter if they must not be shown either.
    """

    reads = ("state.messages", "messages.latest")
    writes = ("state.messages", "messages.rewrite", "interrupt")

    def __init__(self, tools: Collection[str]) -> None:
        if isinstance(tools, str) or not all(isinstance(name, str) for name in tools):
            raise TypeError(
                f"ReviewToolResults: tools is {tools!r}; give a collection of tool names, "
                "e.g. {'lookup'} (a bare string would be read as its letters)."
            )
        self.results_of = frozenset(tools)

    def held(self, messages: Sequence[AnyMessage]) -> list[ToolMessage]:
        """This turn's results of listed tools that no reviewer has decided yet."""
        for index in range(len(messages) - 1, -1, -1):
            if isinstance(messages[index], AIMessage):
                return [
                    m
                    for m in messages[index + 1 :]
                    if isinstance(m, ToolMessage)
                    and m.name in self.results_of
                    and not m.response_metadata.get(REVIEWED)
                ]
        return []

    def before_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:
        held = self.held(state["messages"])
        if not held:
            return None
        requests = [
            {"tool_call_id": m.tool_call_id, "name": m.name, "content": m.content} for m in held
        ]
        try:
            schema = result_resume_schema([m.tool_call_id for m in held])
            resume = interrupt({"results": requests}, response_schema=schema)
        except ValidationError as error:
            shapes = (
                "{'type': 'approve'}, {'type': 'edit', 'content': '...'} or "
                "{'type': 'reject', 'message': '...'}"
            )
            names = [m.name or "" for m in held]
            raise ValueError(refusal(error, names, shapes)) from error
        reviewed: list[ToolMessage] = []
        for message, decision in zip(held, resume["decisions"], strict=True):
            flags = {**message.response_metadata, REVIEWED: decision["type"]}
            update: dict[str, Any] = {"response_metadata": flags}
            if decision["type"] == "edit":
                update["content"] = decision["content"]
            elif decision["type"] == "reject":
                reason = decision.get("message", "The reviewer withheld this result.")
                update |= {"content": f"Withheld by a reviewer: {reason}", "status": "error"}
            reviewed.append(message.model_copy(update=update))  # same id: replaced in place
        return {"messages": reviewed}


@tool
def send_email(to: str, subject: str) -> str:
    """Send an e-mail."""
    return f"E-mail '{subject}' sent to {to}."


@tool
def delete_file(path: str) -> str:
    """Delete a file for good."""
    return f"Deleted {path}."


@tool
def list_files(folder: str) -> str:
    """List the files in a folder (read-only, needs no approval)."""
    return f"{folder}: report.pdf, draft.txt"


THREAD: RunnableConfig = {"configurable": {"thread_id": "approval-demo"}}
"""The demo's thread: the checkpointer keeps the paused run under this id."""


def demo() -> tuple[Any, dict[str, Any]]:
    """Four calls: one needs no review; of the rest one is approved, one edited, one rejected;
    the unreviewed call's result is shown to the model once a person has looked at it."""
    proposal = AIMessage(
        "",
        tool_calls=[
            {"name": "list_files", "args": {"folder": "/shared"}, "id": "ls"},
            {"name": "send_email", "args": {"to": "lead@corp", "subject": "Q3"}, "id": "lead"},
            {"name": "send_email", "args": {"to": "all@corp", "subject": "Q3"}, "id": "all"},
            {"name": "delete_file", "args": {"path": "/shared/report.pdf"}, "id": "rm"},
        ],
    )
    model = ScriptedChatModel(
        responses=[proposal, "Q3 went to the lead and the board; the report was kept."]
    )
    agent = create_agent(
        model,
        [send_email, delete_file, list_files],
        middleware=[
            ApproveToolCalls(needs_approval={"send_email", "delete_file"}),
            ReviewToolResults({"list_files"}),  # the listing waits for a look, too
        ],
        checkpointer=InMemorySaver(),
    )
    paused = agent.invoke({"messages": [HumanMessage("Send Q3 out, then clean up.")]}, THREAD)
    (pause,) = paused["__interrupt__"]  # the run stopped: show pause.value to a person
    assert [r["tool_call_id"] for r in pause.value["review"]] == ["lead", "all", "rm"]

    decisions: list[Decision] = [
        {"type": "approve"},
        {"type": "edit", "args": {"to": "board@corp", "subject": "Q3"}},
        {"type": "reject", "message": "Keep the report until the audit."},
    ]
    held = agent.invoke(Command(resume={"decisions": decisions}), THREAD)
    (look,) = held["__interrupt__"]  # the tools ran; the listing waits before the model
    assert [r["tool_call_id"] for r in look.value["results"]] == ["ls"]
    shown: list[ResultDecision] = [{"type": "approve"}]
    state = agent.invoke(Command(resume={"decisions": shown}), THREAD)
    return agent, state


if __name__ == "__main__":
    for message in demo()[1]["messages"]:
        print(f"{message.type}: {message.text}")
