"""Parity with LangChain itself: parameters, imports, graphs, injection and error words.

Each check builds the same thing with LangChain's ``create_agent`` and funcware's and
compares what LangChain does with what funcware does.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.runtime import Runtime
from langgraph.types import Command
from support import require_langchain

import funcware
import funcware.messages
import funcware.tools
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_middleware = require_langchain("langchain.agents.middleware")
lc_messages = require_langchain("langchain.messages")
lc_tools = require_langchain("langchain.tools")
lc_tool_node = require_langchain("langchain.tools.tool_node")
lc_chat_models = require_langchain("langchain.chat_models")


# -- 8. imports port by a rename ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (funcware.messages, lc_messages),
        (funcware.tools, lc_tools),
        (funcware.tools, lc_tool_node),
    ],
    ids=["messages", "tools", "tools.tool_node"],
)
def test_funcware_modules_export_langchains_names_as_the_same_objects(
    ours: Any, theirs: Any
) -> None:
    missing = sorted(set(theirs.__all__) - set(ours.__all__))
    assert missing == []
    for name in theirs.__all__:
        assert getattr(ours, name) is getattr(theirs, name), name


def test_funcware_tools_exports_nothing_langchain_does_not() -> None:
    assert set(funcware.tools.__all__) == {*lc_tools.__all__, *lc_tool_node.__all__}
    assert set(funcware.messages.__all__) == set(lc_messages.__all__)


# -- 5. create_agent's parameters ---------------------------------------------------------------


def test_create_agent_has_langchains_parameters_kinds_and_defaults() -> None:
    ours = inspect.signature(funcware.create_agent).parameters
    theirs = inspect.signature(lc_agents.create_agent).parameters
    # LangChain's, in its order, then funcware's own keywords
    assert list(ours)[: len(theirs)] == list(theirs)
    assert list(ours)[len(theirs) :] == ["order", "effects", "tool_pairing", "node_policies"]
    for name, parameter in theirs.items():
        assert ours[name].kind == parameter.kind, name
        assert ours[name].default == parameter.default, name


def test_a_model_name_is_resolved_by_langchains_init_chat_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    model = ScriptedChatModel(responses=["hello"])

    def init_chat_model(name: str, **kwargs: Any) -> Any:
        asked.append(name)
        return model

    monkeypatch.setattr(lc_chat_models, "init_chat_model", init_chat_model)
    agent = funcware.create_agent("acme:model-1")

    assert asked == ["acme:model-1"]
    assert agent.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].content == "hello"


def test_an_unknown_provider_fails_with_langchains_error() -> None:
    with pytest.raises(ValueError) as theirs:
        lc_agents.create_agent("no-such-provider:model")
    with pytest.raises(ValueError) as ours:
        funcware.create_agent("no-such-provider:model")
    assert str(ours.value) == str(theirs.value)


def test_the_run_metadata_matches_langchains() -> None:
    for name in (None, "helper"):
        theirs = lc_agents.create_agent(ScriptedChatModel(responses=[]), name=name)
        ours = funcware.create_agent(ScriptedChatModel(responses=[]), name=name)
        assert ours.config is not None and theirs.config is not None
        assert ours.config["metadata"] == theirs.config["metadata"]
        assert ours.config["recursion_limit"] == theirs.config["recursion_limit"]


# -- 2. LangChain middleware hooks get injectables by name -------------------------------------


class ConfigReader(lc_middleware.AgentMiddleware):  # type: ignore[misc, name-defined]
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def before_agent(
        self, state: Any, runtime: Runtime[Any], config: RunnableConfig
    ) -> dict[str, Any] | None:
        self.seen.append(config["configurable"]["who"])
        return None

    async def abefore_agent(
        self, state: Any, runtime: Runtime[Any], config: RunnableConfig
    ) -> dict[str, Any] | None:
        self.seen.append("async " + config["configurable"]["who"])
        return None


@pytest.mark.parametrize("flavour", ["sync", "async"])
async def test_a_langchain_hook_taking_config_gets_it_in_both_agents(flavour: str) -> None:
    results = []
    for create in (lc_agents.create_agent, funcware.create_agent):
        reader = ConfigReader()
        agent = create(ScriptedChatModel(responses=["ok"]), middleware=[reader])
        config: RunnableConfig = {"configurable": {"who": "ada"}}
        if flavour == "sync":
            agent.invoke({"messages": [HumanMessage("hi")]}, config)
        else:
            await agent.ainvoke({"messages": [HumanMessage("hi")]}, config)
        results.append(reader.seen)
    assert results[0] == results[1] == (["ada"] if flavour == "sync" else ["async ada"])


# -- 6. graphs and tool order ---------------------------------------------------------------


@tool
def agent_tool(x: str) -> str:
    """The agent's tool."""
    return x


@tool
def brought_tool(x: str) -> str:
    """A middleware's tool."""
    return x


def _stack(lib: Any, spec: list[tuple[str, list[str] | None]]) -> list[Any]:
    stack = []
    for index, (hook, jumps) in enumerate(spec):
        name = f"m{index}"
        if hook == "wrap_model_call":
            stack.append(lib.wrap_model_call(name=name)(lambda request, handler: handler(request)))
            continue

        def hook_function(state: Any, runtime: Any) -> None:
            return None

        options: dict[str, Any] = {"name": name}
        if jumps:
            options["can_jump_to"] = jumps
        stack.append(getattr(lib, hook)(**options)(hook_function))
    return stack


def _shape(graph: Any) -> tuple[list[str], list[tuple[str, str, bool]]]:
    return sorted(graph.nodes), sorted((e.source, e.target, e.conditional) for e in graph.edges)


STACKS = [
    [],
    [("before_model", None)],
    [("after_model", None)],
    [("wrap_model_call", None)],
    [("before_agent", ["end"]), ("after_agent", None)],
    [("after_model", ["model", "end"]), ("before_model", None), ("after_agent", ["model"])],
    [("before_agent", ["tools"]), ("after_model", ["tools", "end"])],
    [("before_model", None), ("before_model", ["end"]), ("after_model", None)],
    [("after_agent", ["end"]), ("after_agent", None), ("wrap_model_call", None)],
]


GRAPH_CASES = [
    pytest.param(spec, with_tools, id=f"{'+'.join(h for h, _ in spec) or 'empty'}-{with_tools}")
    for spec in STACKS
    for with_tools in (True, False)
    # a jump to tools needs tools (both libraries refuse it otherwise)
    if with_tools or not any("tools" in (jumps or []) for _, jumps in spec)
]


@pytest.mark.parametrize(("spec", "with_tools"), GRAPH_CASES)
def test_the_graph_has_langchains_nodes_and_edges(
    spec: list[tuple[str, list[str] | None]], with_tools: bool
) -> None:
    tools = [agent_tool] if with_tools else []
    theirs = lc_agents.create_agent(
        ScriptedChatModel(responses=[]), tools, middleware=_stack(lc_middleware, spec)
    )
    ours = funcware.create_agent(
        ScriptedChatModel(responses=[]), tools, middleware=_stack(funcware, spec)
    )
    assert _shape(ours.get_graph()) == _shape(theirs.get_graph())


def test_middleware_tools_are_bound_in_langchains_order() -> None:
    class Brings(lc_middleware.AgentMiddleware):  # type: ignore[misc, name-defined]
        tools = [brought_tool]  # noqa: RUF012

    bound = []
    for create in (lc_agents.create_agent, funcware.create_agent):
        model = ScriptedChatModel(responses=["ok"])
        create(model, [agent_tool], middleware=[Brings()]).invoke(
            {"messages": [HumanMessage("hi")]}
        )
        bound.append(model.calls[0].tool_names)
    assert bound[0] == bound[1] == ["brought_tool", "agent_tool"]


def test_hook_config_records_jumps_as_langchain_does() -> None:
    def method(state: Any) -> None:
        return None

    ours = funcware.hook_config(can_jump_to=["tools", "end"])(method)
    declared = list(ours.__can_jump_to__)
    theirs = lc_middleware.hook_config(can_jump_to=["tools", "end"])(method)
    assert declared == list(theirs.__can_jump_to__) == ["tools", "end"]


# -- 7. errors start with LangChain's words -------------------------------------------------


def _first_sentence(message: str) -> str:
    text = message.strip()
    match = re.match(r"(.+?[.!?])(\s|$)", text, re.DOTALL)
    return match.group(1) if match else text


def _raised(build: Any) -> BaseException:
    with pytest.raises(Exception) as caught:
        build()
    return caught.value


def _same_start(theirs: BaseException, ours: BaseException) -> None:
    assert isinstance(ours, type(theirs)), (type(ours), type(theirs))
    assert str(ours).startswith(_first_sentence(str(theirs))), (str(ours), str(theirs))


def test_duplicate_middleware_names_are_refused_with_langchains_words() -> None:
    def twice(lib: Any) -> Any:
        first = lib.before_model(name="same")(lambda state, runtime: None)
        second = lib.after_model(name="same")(lambda state, runtime: None)
        create = lc_agents.create_agent if lib is lc_middleware else funcware.create_agent
        return lambda: create(ScriptedChatModel(responses=[]), middleware=[first, second])

    theirs = _raised(twice(lc_middleware))
    ours = _raised(twice(funcware))
    _same_start(theirs, ours)
    assert "'same'" in str(ours)


def test_a_wrap_adding_an_unknown_tool_is_refused_with_langchains_words() -> None:
    def agent(lib: Any) -> Any:
        @lib.wrap_model_call
        def add_tool(request: Any, handler: Any) -> Any:
            return handler(request.override(tools=[*request.tools, brought_tool]))

        create = lc_agents.create_agent if lib is lc_middleware else funcware.create_agent
        built = create(ScriptedChatModel(responses=["ok"]), [agent_tool], middleware=[add_tool])
        return lambda: built.invoke({"messages": [HumanMessage("hi")]})

    theirs = _raised(agent(lc_middleware))
    ours = _raised(agent(funcware))
    _same_start(theirs, ours)
    assert "Unknown tools: ['brought_tool']" in str(ours)
    assert "add_tool" in str(ours)


@pytest.mark.parametrize("field", ["goto", "resume", "graph"])
def test_a_routing_command_from_a_model_wrap_is_refused_with_langchains_words(
    field: str,
) -> None:
    value = {"goto": "model", "resume": "yes", "graph": Command.PARENT}[field]

    def agent(lib: Any) -> Any:
        @lib.wrap_model_call
        def routes(request: Any, handler: Any) -> Any:
            response = handler(request)
            return lib.ExtendedModelResponse(response, Command(update={}, **{field: value}))

        create = lc_agents.create_agent if lib is lc_middleware else funcware.create_agent
        built = create(ScriptedChatModel(responses=["ok"]), middleware=[routes])
        return lambda: built.invoke({"messages": [HumanMessage("hi")]})

    _same_start(_raised(agent(lc_middleware)), _raised(agent(funcware)))


def test_a_request_with_both_prompts_is_refused_with_langchains_words() -> None:
    model = ScriptedChatModel(responses=[])
    both = {"system_prompt": "a", "system_message": SystemMessage("b")}
    _same_start(
        _raised(lambda: lc_middleware.ModelRequest(model=model, messages=[], **both)),
        _raised(lambda: funcware.ModelRequest(model=model, messages=[], **both)),
    )
    theirs = lc_middleware.ModelRequest(model=model, messages=[])
    ours = funcware.ModelRequest(model=model, messages=[])
    _same_start(_raised(lambda: theirs.override(**both)), _raised(lambda: ours.override(**both)))


def test_assigning_a_request_field_warns_with_langchains_words() -> None:
    model = ScriptedChatModel(responses=[])
    for field, value in (("system_prompt", "x"), ("tool_choice", "auto")):
        words = []
        for request in (
            lc_middleware.ModelRequest(model=model, messages=[AIMessage("a")]),
            funcware.ModelRequest(model=model, messages=[AIMessage("a")]),
        ):
            with pytest.warns(DeprecationWarning) as record:
                setattr(request, field, value)
            words.append(str(record[0].message))
        assert words[1].startswith(_first_sentence(words[0])), words


def test_a_funcware_hook_taking_config_gets_it_inside_langchains_agent() -> None:
    from funcware.interop import to_langchain

    seen: list[str] = []

    @funcware.before_agent
    def reads_config(state: Any, config: RunnableConfig) -> None:
        seen.append(config["configurable"]["who"])

    agent = lc_agents.create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[to_langchain(reads_config)]
    )
    agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"who": "grace"}})
    assert seen == ["grace"]
