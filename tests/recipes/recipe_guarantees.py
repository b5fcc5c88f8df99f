"""Guarantee checks for the recipe composition matrix: one scenario and one predicate each.

A :class:`Member` is what one recipe (or one LangChain built-in) brings to a stack: a
``build(world)`` that makes fresh middleware, and optionally a guarantee check — a
:class:`Scenario` aimed at that guarantee and ``holds(run)``, which returns ``None`` when
the guarantee held, else one sentence saying how it broke.

Every case runs in a fresh :class:`World`: every agent model answers from one shared
script (so a layer that swaps the model does not derail the scenario), models named in
``down`` always raise, and tools and reviewers write a side-effect log. The reviewer
approves every call except refunds, which it rejects (but for the amounts a scenario names
in ``approve``).

``FUNCWARE_MATRIX_RECIPE=name=path/to/file.py`` swaps a recipe's module for a copy (to
show that the matrix catches a recipe gone wrong); see :func:`recipe_module`.
"""

from __future__ import annotations

import importlib.util
import logging
import logging.handlers
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import ModuleType
from typing import Annotated, Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from funcware import MiddlewareOrderError, MiddlewareOrderWarning, cookbook, create_agent
from funcware.testing import ScriptedChatModel

SWAP_VAR = "FUNCWARE_MATRIX_RECIPE"


_COPIES: dict[str, ModuleType] = {}


def recipe_module(name: str) -> ModuleType:
    """The cookbook module ``name``, or the copy ``$FUNCWARE_MATRIX_RECIPE`` names for it."""
    swap = os.environ.get(SWAP_VAR, "")
    if swap.partition("=")[0] != name:
        return cookbook.load(name)
    path = swap.partition("=")[2]
    if path not in _COPIES:
        spec = importlib.util.spec_from_file_location(f"matrix_copy_of_{name}", path)
        assert spec is not None and spec.loader is not None, f"{SWAP_VAR}: cannot load {path}"
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _COPIES[path] = module
    return _COPIES[path]


# -- the world of one case ------------------------------------------------------------


@dataclass
class World:
    """One case: the shared script, the models, the side-effect log, handles on middleware."""

    script: list[Any]
    down: set[str] = field(default_factory=set)
    up: frozenset[str] | None = None
    """When set, every agent model but these is down."""
    approve: frozenset[int] = frozenset()
    """Refund amounts the reviewer approves."""
    log: list[tuple[Any, ...]] = field(default_factory=list)
    models: dict[str, ScriptedChatModel] = field(default_factory=dict)
    answers: list[AIMessage] = field(default_factory=list)
    handles: dict[str, Any] = field(default_factory=dict)
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    cursor: int = 0

    def model(self, name: str) -> ScriptedChatModel:
        """An agent model: answers from the shared script, or always raises if ``down``."""
        model = ScriptedChatModel(responses=[], respond=partial(self._respond, name))
        self.models[name] = model
        return model

    def _respond(self, name: str, messages: list[BaseMessage]) -> AIMessage:
        if name in self.down or (self.up is not None and name not in self.up):
            raise ConnectionError(f"model {name!r} is down")
        item: Any = "Done."
        if self.cursor < len(self.script):
            item = self.script[self.cursor]
            self.cursor += 1
        if isinstance(item, BaseException):
            raise type(item)(*item.args)
        answer = item.model_copy(deep=True) if isinstance(item, AIMessage) else AIMessage(item)
        self.answers.append(answer)
        return answer

    def calls(self) -> list[tuple[str, list[BaseMessage], list[str]]]:
        """Every agent model call: (model name, messages without the system one, tools)."""
        return [
            (name, [m for m in c.messages if not isinstance(m, SystemMessage)], c.tool_names)
            for name, model in self.models.items()
            for c in model.calls
        ]

    def ran(self, name: str, call_id: str, args: dict[str, Any]) -> None:
        self.log.append(("tool", name, call_id, args))

    def executed(self) -> dict[str, str]:
        """Call id -> tool name, for every call whose tool ran (at least one attempt)."""
        return {event[2]: event[1] for event in self.log if event[0] == "tool"}

    def review(self, interrupts: Sequence[Any]) -> Any:
        """The reviewer's answer to the pending interrupts: reject refunds, approve the rest."""
        answers = {intr.id: self._decide(intr.value) for intr in interrupts}
        return next(iter(answers.values())) if len(answers) == 1 else answers

    def _decide(self, value: Any) -> Any:
        requests = value.get("review") or value.get("action_requests") or []
        decisions = []
        for request in requests:
            call_id = request.get("tool_call_id") or _key(request["name"], request["args"])
            approved = request["name"] != "refund" or request["args"]["amount"] in self.approve
            kind = "approve" if approved else "reject"
            self.log.append(("decision", call_id, kind))
            decisions.append(
                {"type": kind, "message": "No refunds today."}
                if kind == "reject"
                else {"type": kind}
            )
        return {"decisions": decisions}


def _key(name: str, args: dict[str, Any]) -> str:
    return f"{name}{sorted(args.items())}"


WORLD: list[World] = []
"""The current case's world (tools log into it)."""


def _world() -> World:
    return WORLD[-1]


@tool
def refund(amount: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Refund an amount of dollars to the customer."""
    _world().ran("refund", tool_call_id, {"amount": amount})
    return f"Refunded ${amount}."


@tool
def lookup_order(order_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Look an order up."""
    _world().ran("lookup_order", tool_call_id, {"order_id": order_id})
    return f"Order {order_id}: delivered."


@tool
def send_message(to: str, body: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Send a chat message to a colleague."""
    _world().ran("send_message", tool_call_id, {"to": to, "body": body})
    return f"Sent to {to}."


@tool
def lookup_customer(customer_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Fetch a customer's record."""
    _world().ran("lookup_customer", tool_call_id, {"customer_id": customer_id})
    return f"Customer {customer_id}: jane.doe@example.com, card 4111 1111 1111 1111."


@tool
def flaky(x: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """A service that is always unreachable."""
    _world().ran("flaky", tool_call_id, {"x": x})
    raise ConnectionError("flaky service unreachable")


@tool
def add(a: int, b: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> int:
    """Add two integers."""
    _world().ran("add", tool_call_id, {"a": a, "b": b})
    return a + b


def _tools() -> list[Any]:
    schema = recipe_module("schema_tool").WEATHER_SCHEMA
    return [refund, lookup_order, send_message, lookup_customer, flaky, add, schema]


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id}


def turn(*calls: dict[str, Any], text: str = "", **extra: Any) -> AIMessage:
    return AIMessage(text, tool_calls=list(calls), **extra)


# -- scenarios and runs ---------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """The shared script, the input and the models that are down, for one guarantee."""

    script: tuple[Any, ...]
    messages: tuple[BaseMessage, ...] = (HumanMessage("Please refund order A1."),)
    extra: tuple[tuple[str, Any], ...] = ()
    down: frozenset[str] = frozenset()
    up: frozenset[str] | None = None
    """When set, every agent model but these is down (``down`` is then unused)."""
    approve: frozenset[int] = frozenset()
    """Refund amounts the reviewer approves (it rejects every other refund)."""


@dataclass
class Run:
    """What a case produced: the final state, the error if it failed, the streamed text."""

    world: World
    state: dict[str, Any]
    error: BaseException | None
    streamed: str

    @property
    def messages(self) -> list[AnyMessage]:
        return list(self.state.get("messages", []))


@dataclass(frozen=True)
class Check:
    """A further guarantee of one of a member's middleware, with its own scenario."""

    scenario: Scenario
    holds: Callable[[Run], str | None]
    guarantee: str


@dataclass(frozen=True)
class Member:
    """A recipe or a built-in as one member of a stack, and its guarantee check (if any)."""

    name: str
    build: Callable[[World], list[Any]]
    scenario: Scenario | None = None
    holds: Callable[[Run], str | None] | None = None
    guarantee: str = ""
    more: tuple[Check, ...] = ()
    """Guarantees of the recipe's other middleware (each checked in every stack too)."""

    def checks(self) -> list[Check]:
        """Every guarantee check of this member: its recipe's, then the others."""
        first = [Check(self.scenario, self.holds, self.guarantee or "its guarantee")]
        return (first if self.scenario and self.holds else []) + list(self.more)


SUPPORT = Scenario(
    script=(
        turn(call("refund", "r1", amount=500), call("lookup_order", "l1", order_id="A1")),
        turn(call("lookup_order", "l2", order_id="A2")),
        "Your refund is under review.",
    )
)
"""A support turn: a $500 refund beside a lookup, then another lookup."""

OVER_LIMIT = Scenario(
    script=(
        turn(call("lookup_order", "l1", order_id="A1"), call("refund", "r9", amount=900)),
        "Your refund is under review.",
    ),
    approve=frozenset({900}),
)
"""A lookup, then a $900 refund the reviewer approves: a limit of one call refuses the
refund."""


def asked_only_about_calls_that_run(run: Run) -> str | None:
    """Every call the reviewer approved ran (no other middleware refused it afterwards)."""
    ran = {_key(e[1], e[3]) for e in run.world.log if e[0] == "tool"}
    ran |= set(run.world.executed())
    for event in run.world.log:
        if event[0] == "decision" and event[2] == "approve" and event[1] not in ran:
            return f"the reviewer approved {event[1]}, which never ran: it was refused after"
    return None


ASKED_ONLY_ABOUT_CALLS_THAT_RUN = Check(
    OVER_LIMIT, asked_only_about_calls_that_run, "the reviewer is asked only about calls that run"
)

THREE = (
    HumanMessage("Hello, I bought a lamp."),
    AIMessage("Thanks! How can I help?"),
    HumanMessage("It arrived broken; what now?"),
)
"""A conversation long enough that the length-based routers pick another model, for
fallbacks whose every model but the backup is down."""

CONTEXT_NAME = "Ada"


@dataclass
class Outcome:
    """One case: the order warnings or refusal at build, else the run."""

    names: dict[str, list[str]]
    """Per member, the names of the middleware it brought."""
    refused: str | None = None
    warnings: list[str] = field(default_factory=list)
    run: Run | None = None


def _all_names(middleware: Any) -> list[str]:
    """The name of ``middleware`` and, for a ``compose()``, of each of its members."""
    members = getattr(middleware, "members", ())
    return [middleware.name, *(n for m in members for n in _all_names(m))]


def run_case(members: Sequence[Member], scenario: Scenario) -> Outcome:
    """Build ``members`` in order (first outermost) and run ``scenario``."""
    world = World(
        script=list(scenario.script),
        down=set(scenario.down),
        up=scenario.up,
        approve=scenario.approve,
    )
    WORLD.append(world)
    try:
        primary = world.model("primary")
        built = {member.name: member.build(world) for member in members}
        names = {key: [n for m in value for n in _all_names(m)] for key, value in built.items()}
        middleware = [m for value in built.values() for m in value]
        context_type = recipe_module("prompt_from_context").UserContext
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                agent = create_agent(
                    primary,
                    _tools(),
                    middleware=middleware,
                    checkpointer=InMemorySaver(),
                    context_schema=context_type,
                )
            except MiddlewareOrderError as exc:
                return Outcome(names, refused=str(exc))
        found = [str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning)]
        run = drive(agent, world, scenario, context_type(CONTEXT_NAME))
        return Outcome(names, warnings=found, run=run)
    finally:
        for cleanup in world.cleanups:
            cleanup()
        WORLD.pop()


def drive(agent: Any, world: World, scenario: Scenario, context: Any) -> Run:
    """Stream the scenario; answer each pause as the reviewer would; collect what streamed."""
    config: RunnableConfig = {"configurable": {"thread_id": "case"}, "recursion_limit": 40}
    payload: Any = {"messages": list(scenario.messages), **dict(scenario.extra)}
    streamed: list[str] = []
    state: dict[str, Any] = {}
    error: BaseException | None = None
    try:
        for _ in range(6):
            pauses: Sequence[Any] = ()
            for mode, chunk in agent.stream(
                payload, config, stream_mode=["messages", "values"], context=context
            ):
                if mode == "messages":
                    message, _meta = chunk
                    if isinstance(message, (AIMessage, AIMessageChunk)) and message.text:
                        streamed.append(message.text)
                elif "__interrupt__" in chunk:
                    pauses = chunk["__interrupt__"]
                else:
                    state = chunk
            if not pauses:
                break
            payload = Command(resume=world.review(pauses))
    except Exception as exc:  # the guarantee checks decide whether a failure is allowed
        error = exc
    return Run(world, state, error, "".join(streamed))


# -- the guarantee checks ---------------------------------------------------------------


def approval_holds(run: Run) -> str | None:
    """No refund over $100 runs before a human approved it (the reviewer approves none)."""
    approved: set[str] = set()
    for event in run.world.log:
        if event[0] == "decision" and event[2] == "approve":
            approved.add(event[1])
        paid = event[0] == "tool" and event[1] == "refund" and event[3]["amount"] > 100
        if paid and event[2] not in approved and _key("refund", event[3]) not in approved:
            return f"refund {event[2]} (${event[3]['amount']}) ran without a human decision"
    return None


def at_most(limit: int) -> Callable[[Run], str | None]:
    def holds(run: Run) -> str | None:
        ran = run.world.executed()
        if len(ran) > limit:
            return f"{len(ran)} tool calls executed ({sorted(ran)}), over the limit of {limit}"
        return None

    return holds


def _text_of(message: AnyMessage) -> str:
    text = message.text
    if isinstance(message, AIMessage):
        text += " ".join(str(c["args"]) for c in message.tool_calls)
    return text


def no_blocked_content(run: Run) -> str | None:
    patterns = recipe_module("content_guard").BLOCKED
    leaks = [m.text for m in run.messages if isinstance(m, AIMessage)]
    leaks += [str(e[3]) for e in run.world.log if e[0] == "tool"]
    leaks.append(run.streamed)
    for text in leaks:
        if any(p.search(text) for p in patterns):
            return f"blocked content got through: {text[:80]!r}"
    return None


EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def no_raw_pii(run: Run) -> str | None:
    for name, messages, _tools in run.world.calls():
        for message in messages:
            if EMAIL.search(message.text):
                return f"model {name!r} received an e-mail address: {message.text[:80]!r}"
    for message in run.messages:
        if isinstance(message, (AIMessage, ToolMessage)) and EMAIL.search(message.text):
            return f"the state keeps a raw e-mail address: {message.text[:80]!r}"
    if EMAIL.search(run.streamed):
        return "a raw e-mail address streamed to the client"
    return None


def answers_masked(run: Run) -> str | None:
    for message in run.messages:
        if isinstance(message, AIMessage) and EMAIL.search(message.text):
            return f"an answer keeps an e-mail address: {message.text[:80]!r}"
    if EMAIL.search(run.streamed):
        return "an e-mail address streamed to the client"
    return None


def history_limited(run: Run) -> str | None:
    limit = recipe_module("message_limit").MAX_MESSAGES
    for name, messages, _tools in run.world.calls():
        if len(messages) >= limit:
            return f"model {name!r} was called with {len(messages)} messages (limit {limit})"
    return None


def counted(run: Run) -> str | None:
    answers = len(run.world.answers)
    if run.state.get("model_calls") != answers:
        return f"model_calls is {run.state.get('model_calls')}, but the model answered {answers}x"
    return None


def answered_after_retries(run: Run) -> str | None:
    if run.error is not None:
        return f"the run failed: {run.error!r}"
    if not any("Paris" in m.text for m in run.messages if isinstance(m, AIMessage)):
        return "no answer after the retries"
    return None


def did_not_fail(run: Run) -> str | None:
    return None if run.error is None else f"the run failed: {run.error!r}"


def fallback_answered(run: Run) -> str | None:
    """The run did not fail, and a model (not a layer hiding the error) answered."""
    if run.error is not None:
        return f"the run failed: {run.error!r}"
    return None if run.world.answers else "no model answered: the error was hidden"


def routed_by_length(run: Run) -> str | None:
    for name, messages, _tools in run.world.calls():
        if (len(messages) >= 3) != (name == "large"):
            return f"a call with {len(messages)} messages went to {name!r}"
    return None


def prompt_names_caller(run: Run) -> str | None:
    for model in run.world.models.values():
        for c in model.calls:
            if CONTEXT_NAME not in (c.system_prompt or ""):
                return f"a model call's system prompt does not name the caller: {c.system_prompt!r}"
    return None


def cache_block_last(run: Run) -> str | None:
    block = recipe_module("prompt_caching").cache_block(recipe_module("prompt_caching").REFERENCE)
    for model in run.world.models.values():
        for c in model.calls:
            system = c.messages[0] if c.messages and c.messages[0].type == "system" else None
            content = system.content if system is not None else ""
            marked = [b for b in content if isinstance(b, dict) and "cache_control" in b]
            if not isinstance(content, list) or content[-1:] != [block] or len(marked) != 1:
                return (
                    f"a model call's system message does not end with one cache block: {content!r}"
                )
    return None


def retried_once(run: Run) -> str | None:
    """After one connection error, the model was asked again (and answered)."""
    if not run.world.answers:
        return "after a connection error the model was not asked again (the error was hidden)"
    return None


def logged_in_pairs(run: Run) -> str | None:
    lines = [r.getMessage() for r in run.world.handles["log"].buffer]
    asked = sum(line.startswith("model call:") for line in lines)
    ended = sum(line.startswith(("model answered", "model call failed")) for line in lines)
    if asked != ended or (run.world.calls() and not asked):
        return f"{asked} request lines but {ended} outcome lines: {lines}"
    return None


def sandboxes_closed(run: Run) -> str | None:
    module = recipe_module("resilient_hooks")
    scope = run.world.handles["sandbox"]
    for n in range(1, scope.runs + 1):
        box = module.SANDBOXES[f"run-{n}"]
        if box.closed_with is None:
            return f"sandbox {box.key} was left open"
    return None


def served_by_hook(run: Run) -> str | None:
    for message in run.messages:
        if isinstance(message, ToolMessage) and "has no implementation" in message.text:
            return f"get_weather reached the tool node: {message.text[:60]!r}"
    return None


def offered_only_toolset(run: Run) -> str | None:
    wanted = recipe_module("tool_selection").TOOLSETS["math"]
    for name, _messages, tools in run.world.calls():
        if not set(tools) <= wanted:
            return f"model {name!r} was offered {sorted(tools)} outside the toolset"
    return None


def usage_summed(run: Run) -> str | None:
    expected = sum((a.usage_metadata or {}).get("total_tokens", 0) for a in run.world.answers)
    got = run.state.get("usage", {}).get("total_tokens")
    return None if got == expected else f"usage total is {got}, the answers used {expected}"


def outer_verdict(run: Run) -> str | None:
    if not run.world.answers:
        return None
    last = run.world.answers[-1].text.lower()
    expected = "approved" if "risk" in last else "needs a risk notice"
    got = run.state.get("verdict")
    return None if got == expected else f"verdict is {got!r}, the outer layer said {expected!r}"


def summarized(run: Run) -> str | None:
    for name, messages, _tools in run.world.calls():
        if len(messages) > 6:
            return f"model {name!r} received {len(messages)} messages, over max_messages=6"
        asked: set[str] = set()
        for message in messages:
            if isinstance(message, AIMessage):
                asked |= {c["id"] or "" for c in message.tool_calls}
            if isinstance(message, ToolMessage) and message.tool_call_id not in asked:
                return f"model {name!r} received a tool result without its call"
    return None


def retried_then_answered(run: Run, max_retries: int = 2) -> str | None:
    attempts: dict[str, int] = {}
    for event in run.world.log:
        if event[0] == "tool" and event[1] == "flaky":
            attempts[event[2]] = attempts.get(event[2], 0) + 1
    replies = {m.tool_call_id: m for m in run.messages if isinstance(m, ToolMessage)}
    for call_id, count in attempts.items():
        if count != max_retries + 1:
            expected = max_retries + 1
            return f"flaky call {call_id} ran {count} times, not max_retries + 1 = {expected}"
        if call_id not in replies or replies[call_id].status != "error":
            return f"flaky call {call_id} did not end as an error ToolMessage"
    return did_not_fail(run)


def started_once(run: Run) -> str | None:
    starts = [event[2] for event in run.world.log if event[0] == "tool"]
    if "r1" in starts:
        return "refund r1 was paid again though an earlier attempt had recorded its answer"
    twice = sorted({c for c in starts if starts.count(c) > 1})
    return f"the tool of calls {twice} started more than once" if twice else None


def monitored(run: Run) -> str | None:
    recorded = {r.call_id for r in run.world.handles["monitor"].records}
    missing = sorted(set(run.world.executed()) - recorded)
    return f"tool calls {missing} ran without a record" if missing else None


# -- the members -----------------------------------------------------------------------


def _logging(world: World) -> list[Any]:
    module = recipe_module("logging_around_model")
    records = logging.handlers.BufferingHandler(capacity=10_000)
    level = module.logger.level
    module.logger.addHandler(records)
    module.logger.setLevel(logging.INFO)
    world.handles["log"] = records

    def restore() -> None:
        module.logger.removeHandler(records)
        module.logger.setLevel(level)

    world.cleanups.append(restore)
    return [module.compose(module.retry_once, module.log_model_call)]


def _sandbox(world: World) -> list[Any]:
    module = recipe_module("resilient_hooks")
    scope = module.SandboxScope()
    world.handles["sandbox"] = scope
    return [module.moderate, scope, module.record_latency]


def _monitor(world: World) -> list[Any]:
    monitor = recipe_module("tool_monitoring").ToolMonitor()
    world.handles["monitor"] = monitor
    return [monitor]


def _once(world: World) -> list[Any]:
    """The ledger an earlier, failed-over attempt left: refund r1 was paid and recorded."""
    module = recipe_module("once_per_call")
    ledger = module.CallLedger.sqlite(":memory:").setup()
    ledger.start("case", "r1")
    ledger.finish(
        "case", "r1", {"content": "Refunded $500.", "name": "refund", "status": "success"}
    )
    return [module.OncePerToolCall(ledger, stable_ids=True)]  # scripted ids: no durability needed


def _routed(world: World) -> list[Any]:
    module = recipe_module("routed_fallback")
    small, large = world.model("routed_small"), world.model("routed_large")
    return [module.route_by_length(small, large, 5), module.fall_back_to(world.model("backup2"))]


def _summarizer(world: World) -> ScriptedChatModel:
    return ScriptedChatModel(responses=[], respond=lambda _: "The user wants a refund.")


def _no_sleep(_seconds: float) -> None:
    return None


USAGE = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}
EARLIER = (
    HumanMessage("Hello, I bought a lamp."),
    AIMessage("Thanks! How can I help?"),
    HumanMessage("It arrived broken."),
    AIMessage("Sorry to hear that. Shall I look the order up?"),
    HumanMessage("Yes, order A1 please."),
)

RECIPES: list[Member] = [
    Member(
        "human_approval",
        lambda w: [
            recipe_module("human_approval").ApproveToolCalls(
                {"refund"}, when={"refund": lambda c: c["args"]["amount"] > 100}
            )
        ],
        SUPPORT,
        approval_holds,
        "no call to a listed tool runs before a human decision",
        (ASKED_ONLY_ABOUT_CALLS_THAT_RUN,),
    ),
    Member(
        "tool_call_limit",
        lambda w: [recipe_module("tool_call_limit").ToolCallLimit(limit=1)],
        SUPPORT,
        at_most(1),
        "at most `limit` tool calls are executed per run",
    ),
    Member(
        "content_guard",
        lambda w: [recipe_module("content_guard").ContentGuard()],
        Scenario(
            (
                turn(
                    call("send_message", "m1", to="bob", body="The admin password is hunter2"),
                    text="Sure: the admin password is hunter2.",
                ),
            )
        ),
        no_blocked_content,
        "no blocked answer stays in the state, reaches a tool, or streams",
    ),
    Member(  # its other hook, mask_as_it_streams, only shows a stream policy (no guarantee)
        "guarded_stream",
        lambda w: [recipe_module("guarded_stream").mask_answer],
        Scenario(("Sure: write to jane.doe@example.com, she handles refunds.",)),
        answers_masked,
        "no e-mail address in an answer reaches the state or the stream",
    ),
    Member(
        "pii_redaction",
        lambda w: [recipe_module("pii_redaction").pii_redaction],
        Scenario(
            (
                turn(call("lookup_customer", "c1", customer_id="42")),
                "Your receipt goes to jane.doe@example.com.",
            ),
            messages=(HumanMessage("I'm jane.doe@example.com. Which plan am I on?"),),
        ),
        no_raw_pii,
        "no raw e-mail reaches the model, the stored tool results and answers, or the stream",
    ),
    Member(
        "message_limit",
        lambda w: [recipe_module("message_limit").message_limit],
        Scenario(tuple(turn(call("lookup_order", f"o{i}", order_id=f"A{i}")) for i in range(5))),
        history_limited,
        "no model call starts once the conversation holds MAX_MESSAGES messages",
    ),
    Member(
        "model_call_counter",
        lambda w: [recipe_module("model_call_counter").ModelCallCounter(limit=50)],
        Scenario(
            (
                turn(call("lookup_order", "l1", order_id="A1")),
                "Fine. By the way, the admin password is hunter2.",
            )
        ),
        counted,
        "model_calls equals the number of model answers",
    ),
    Member(
        "model_retry",
        lambda w: [
            recipe_module("model_retry").ModelRetry(
                max_retries=2, retry_on=(ConnectionError, TimeoutError), sleep=_no_sleep
            )
        ],
        Scenario((ConnectionError("reset"), TimeoutError("slow"), "Paris is the capital.")),
        answered_after_retries,
        "a model error in retry_on is retried up to max_retries times",
    ),
    Member(
        "model_fallback",
        lambda w: [recipe_module("model_fallback").ModelFallback(w.model("backup"))],
        Scenario(("(backup) Paris is the capital.",), THREE, up=frozenset({"backup"})),
        fallback_answered,
        "when the model raises, the fallback is asked before the run fails",
    ),
    Member(
        "routed_fallback",
        _routed,
        Scenario(("(backup) Owls eat mice.",), THREE, up=frozenset({"backup2"})),
        fallback_answered,
        "when the routed model raises, the backup answers",
    ),
    Member(
        "dynamic_model",
        lambda w: [
            recipe_module("dynamic_model").use_large_model_when_long(w.model("large"), threshold=3)
        ],
        Scenario((turn(call("lookup_order", "l1", order_id="A1")), "Delivered.")),
        routed_by_length,
        "calls with threshold or more messages go to the large model",
    ),
    Member(
        "prompt_from_context",
        lambda w: [recipe_module("prompt_from_context").prompt_from_context],
        Scenario((turn(call("lookup_order", "l1", order_id="A1")), "Delivered.")),
        prompt_names_caller,
        "every model call's system prompt names the caller",
    ),
    Member(
        "prompt_caching",
        lambda w: [recipe_module("prompt_caching").cache_reference],
        Scenario((turn(call("lookup_order", "l1", order_id="A1")), "Delivered.")),
        cache_block_last,
        "every system message ends with exactly one cache-marked block",
    ),
    Member(
        "logging_around_model",
        _logging,
        Scenario(
            (ConnectionError("reset"), turn(call("lookup_order", "l1", order_id="A1")), "Ok.")
        ),
        logged_in_pairs,
        "every model call that reaches the logger leaves a request and an outcome line",
        (
            Check(
                Scenario((ConnectionError("reset"), "Ok.")),
                retried_once,
                "retry_once asks the model a second time after a connection error",
            ),
        ),
    ),
    Member(
        "resilient_hooks",
        _sandbox,
        Scenario((RuntimeError("the model crashed"),)),
        sandboxes_closed,
        "the sandbox opened for a run is closed when the run ends, failed or not",
    ),
    Member(
        "schema_tool",
        lambda w: [recipe_module("schema_tool").serve_weather],
        Scenario((turn(call("get_weather", "w1", city="Paris")), "18 degrees.")),
        served_by_hook,
        "every get_weather call is answered by the hook",
    ),
    Member(
        "tool_selection",
        lambda w: [recipe_module("tool_selection").select_tools],
        Scenario((turn(call("add", "a1", a=2, b=3)), "5."), extra=(("toolset", "math"),)),
        offered_only_toolset,
        "with a toolset, every model call is offered only that group's tools",
    ),
    Member(
        "tool_monitoring",
        _monitor,
        Scenario(
            (turn(call("lookup_order", "l1", order_id="A1"), call("add", "a1", a=2, b="x")), "Ok.")
        ),
        monitored,
        "every tool call that runs leaves a record",
    ),
    Member(
        "tool_retry",
        lambda w: [
            recipe_module("tool_retry").ToolRetry(
                max_retries=2, retry_on=(ConnectionError,), sleep=_no_sleep
            )
        ],
        Scenario((turn(call("flaky", "f1", x=1)), "The service is down.")),
        retried_then_answered,
        "a failing tool runs max_retries + 1 times, then ends as one error ToolMessage",
    ),
    Member(
        "once_per_call",
        _once,
        Scenario(
            (
                turn(call("refund", "r1", amount=500), call("lookup_order", "l1", order_id="A1")),
                turn(call("lookup_order", "l2", order_id="A2")),
                "Done.",
            )
        ),
        started_once,
        "the tool of a call starts at most once per ledger, across failovers",
    ),
    Member(
        "usage_tracking",
        lambda w: [recipe_module("usage_tracking").UsageTracker()],
        Scenario(
            (
                turn(call("lookup_order", "l1", order_id="A1"), usage_metadata=USAGE),
                AIMessage("Delivered.", usage_metadata=USAGE),
            )
        ),
        usage_summed,
        "usage holds the sum of every answer's usage_metadata",
    ),
    Member(
        "outer_wins",
        lambda w: [recipe_module("outer_wins").review],
        Scenario(("Index funds suit long horizons; all investing carries risk.",)),
        outer_verdict,
        "the state keeps the outer layer's verdict",
    ),
    Member(
        "summarize_history",
        lambda w: [
            recipe_module("summarize_history").SummarizeHistory(
                _summarizer(w), max_messages=6, keep_last=2
            )
        ],
        Scenario(
            (turn(call("lookup_order", "l1", order_id="A1")), "Delivered, sorry!"),
            messages=EARLIER,
        ),
        summarized,
        "past max_messages the model gets a summary, never a tool result without its call",
    ),
]
"""Every cookbook recipe that acts on agent runs, with its guarantee check."""

EXCLUDED: dict[str, str] = {
    "structured_triage": (
        "its guarantee is about a structured response: the agent must be built with "
        "response_format=ToolStrategy(Triage | Escalation) and its own context schema, and "
        "a response format changes how every other scenario ends (the run stops at the "
        "first structured answer); it is tested alone in test_cookbook_state_and_message_recipes.py"
    ),
}
"""Recipes left out of the matrix, each with the reason."""


def builtins() -> list[Member]:
    """LangChain's built-ins as members (needs the ``langchain`` extra)."""
    from langchain.agents import middleware as lc

    return [
        Member(
            "HumanInTheLoopMiddleware",
            lambda w: [lc.HumanInTheLoopMiddleware({"refund": True})],
            SUPPORT,
            approval_holds,
            more=(ASKED_ONLY_ABOUT_CALLS_THAT_RUN,),
        ),
        Member(
            "ToolCallLimitMiddleware",
            lambda w: [lc.ToolCallLimitMiddleware(run_limit=1)],
            SUPPORT,
            at_most(1),
        ),
        Member(
            "ModelCallLimitMiddleware",
            lambda w: [lc.ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")],
            Scenario(
                tuple(turn(call("lookup_order", f"o{i}", order_id=f"A{i}")) for i in range(4))
            ),
            lambda run: (
                None
                if len(run.world.answers) <= 2
                else f"the model answered {len(run.world.answers)} times, over run_limit=2"
            ),
        ),
        Member(
            "ToolRetryMiddleware",
            lambda w: [  # one retry fewer than the recipe's: a retry hidden from the other shows
                lc.ToolRetryMiddleware(
                    max_retries=1, retry_on=(ConnectionError,), initial_delay=0, jitter=False
                )
            ],
            Scenario((turn(call("flaky", "f1", x=1)), "The service is down.")),
            partial(retried_then_answered, max_retries=1),
        ),
        Member(
            "ModelFallbackMiddleware",
            lambda w: [lc.ModelFallbackMiddleware(w.model("lc_backup"))],
            Scenario(("(backup) Paris is the capital.",), THREE, up=frozenset({"lc_backup"})),
            fallback_answered,
        ),
        # Bystanders: what they do is pinned by the interop tests; here they only share the
        # stack, and the recipe's guarantee must still hold. ModelRetryMiddleware (not among
        # the recipes) turns a last failure into an answer by default (here at once, with
        # no retry): inside a retry or a fallback it hides the error that one acts on.
        Member(
            "ModelRetryMiddleware",
            lambda w: [lc.ModelRetryMiddleware(max_retries=0, initial_delay=0, jitter=False)],
        ),
        Member("PIIMiddleware", lambda w: [lc.PIIMiddleware("email", strategy="redact")]),
        Member(
            "SummarizationMiddleware",
            lambda w: [
                lc.SummarizationMiddleware(
                    _summarizer(w), trigger=("messages", 6), keep=("messages", 2)
                )
            ],
        ),
    ]


RAN: dict[str, set[tuple[str, ...]]] = {
    "alone": set(),
    "pairs": set(),
    "builtin pairs": set(),
    "triples": set(),
}
"""The stacks the matrix ran, by kind (for the summary pytest prints)."""
WARNED: set[tuple[str, ...]] = set()
"""The stacks whose build warned or refused naming their members."""
BROKEN: set[tuple[str, ...]] = set()
"""The stacks in which some member's guarantee broke (warned or not)."""
CAUGHT: set[tuple[str, ...]] = set()
"""The warned stacks in which a guarantee a warning names really broke (true warnings)."""
MISSED: set[tuple[str, ...]] = set()
"""The stacks in which a guarantee broke that no warning named (misses)."""


def check_stack(members: Sequence[Member], kind: str) -> list[str]:
    """Run the scenario of every member that has one, in this stack, whatever the build
    said; what went wrong: a guarantee that broke with no warning naming it (a miss), or
    a warning none of whose named guarantees broke (a false warning)."""
    stack = tuple(m.name for m in members)
    RAN[kind].add(stack)
    broke: dict[str, str] = {}
    said: set[str] = set()
    names: dict[str, list[str]] = {}
    for aimed in members:
        for check in aimed.checks():
            outcome = run_case(members, check.scenario)
            names = outcome.names
            said.update([outcome.refused] if outcome.refused else outcome.warnings)
            broken = check.holds(outcome.run) if outcome.run is not None else None
            if broken is not None and aimed.name not in broke:
                broke[aimed.name] = f"{check.guarantee}: {broken}"
    problems = []
    if said:
        WARNED.add(stack)
    if broke:
        BROKEN.add(stack)
    label = " > ".join(stack)
    for text in sorted(said):
        named = [m.name for m in members if _names(text, names[m.name])]
        if len(named) < 2 and len(members) > 1:
            problems.append(f"[{label}] a warning names fewer than two members: {text}")
        elif not set(named) & set(broke):
            problems.append(f"[{label}] false warning: every guarantee it names held: {text}")
        else:
            CAUGHT.add(stack)
    for member in members:
        if member.name not in broke:
            continue
        others = [m for m in members if m is not member]
        if not any(
            _names(text, names[member.name]) and any(_names(text, names[m.name]) for m in others)
            for text in said
        ):
            MISSED.add(stack)
            problems.append(f"[{label}] {member.name} broke: {broke[member.name]}")
    return problems


def _names(text: str, names: Sequence[str]) -> bool:
    return any(repr(name) in text or f"{name} (" in text for name in names)
