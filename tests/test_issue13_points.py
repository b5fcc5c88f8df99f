"""Issue 13, point by point: what used to pass silently, leak, or read badly.

The mistakes themselves (one precise error each) are catalogued in
``test_issue13_mistakes.py``; this file checks the behaviour around them: work that now
happens (tasks run, ``(self, state)`` hooks are called), resources given back (the bridge's
threads and file descriptors), and the newcomer's frictions (exports, help, version).
"""

from __future__ import annotations

import asyncio
import os
import pydoc
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import interrupt

import funcware
from funcware import (
    AgentMiddleware,
    after_model,
    before_model,
    configure_bridge,
    create_agent,
    wrap_model_call,
)
from funcware.compose.threads.bridge import bridge_threads
from funcware.hooks.wording import a, plural
from funcware.testing import ScriptedChatModel


def hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def wait_for_idle_threads(limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while bridge_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert bridge_threads() == 0


@pytest.fixture
def quick_idle() -> Iterator[None]:
    """Bridge threads idle for 50 ms end (so a test can see them go)."""
    old = configure_bridge(idle_seconds=0.05)
    wait_for_idle_threads()
    try:
        yield
    finally:
        configure_bridge(max_threads=old.max_threads, idle_seconds=old.idle_seconds)


# -- point 5: tasks started on the bridged loop run ----------------------------------------


def test_a_task_started_by_an_async_hook_under_invoke_runs_to_completion() -> None:
    seen: list[str] = []

    @before_model
    async def starts_a_task(state: Any) -> None:
        async def later() -> None:
            await asyncio.sleep(0.01)
            seen.append("ran")

        asyncio.get_running_loop().create_task(later())

    create_agent(ScriptedChatModel(responses=["ok"]), middleware=[starts_a_task]).invoke(hi())
    assert seen == ["ran"]


def test_a_failing_task_started_by_an_async_hook_raises_instead_of_being_lost() -> None:
    @before_model
    async def starts_a_failing_task(state: Any) -> None:
        async def later() -> None:
            raise LookupError("the background work failed")

        asyncio.get_running_loop().create_task(later())

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[starts_a_failing_task])
    with pytest.raises(LookupError, match="the background work failed") as caught:
        agent.invoke(hi())
    assert "starts_a_failing_task" in "\n".join(getattr(caught.value, "__notes__", []))


# -- point 8: the bridge's threads and file descriptors ------------------------------------


def test_a_thousand_concurrent_bridged_runs_give_back_every_thread_and_fd(
    quick_idle: None,
) -> None:
    @before_model
    def sleepy(state: Any) -> None:  # sync: each ainvoke runs it on a bridge thread
        time.sleep(0.002)

    runs = 1_000
    agent = create_agent(ScriptedChatModel(responses=["ok"] * runs), middleware=[sleepy])
    threads_before, fds_before = threading.active_count(), open_fds()
    peak = 0

    async def main() -> None:
        nonlocal peak
        done = asyncio.Event()

        async def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, threading.active_count())
                await asyncio.sleep(0.005)

        watcher = asyncio.ensure_future(watch())
        results = await asyncio.gather(*(agent.ainvoke(hi()) for _ in range(runs)))
        done.set()
        await watcher
        assert all(r["messages"][-1].content == "ok" for r in results)

    asyncio.run(main())
    wait_for_idle_threads()
    assert peak - threads_before <= configure_bridge().max_threads + 2
    assert threading.active_count() <= threads_before
    assert open_fds() <= fds_before


def test_fifty_invokes_from_inside_running_loops_give_back_every_thread_and_fd(
    quick_idle: None,
) -> None:
    @before_model
    async def async_only(state: Any) -> None:  # under invoke() it runs on a bridged loop
        await asyncio.sleep(0)

    agent = create_agent(ScriptedChatModel(responses=["ok"] * 50), middleware=[async_only])
    threads_before, fds_before = threading.active_count(), open_fds()

    async def notebook_cell() -> str:
        return str(agent.invoke(hi())["messages"][-1].content)  # invoke inside a running loop

    answers = [asyncio.run(notebook_cell()) for _ in range(50)]
    assert answers == ["ok"] * 50
    wait_for_idle_threads()
    assert threading.active_count() <= threads_before
    assert open_fds() <= fds_before


def test_nested_bridges_do_not_deadlock_with_a_single_thread_allowed(quick_idle: None) -> None:
    configure_bridge(max_threads=1)

    @wrap_model_call
    def sync_outer(request: Any, handler: Any) -> Any:
        return handler(request)

    @wrap_model_call
    async def async_middle(request: Any, handler: Any) -> Any:
        return await handler(request)

    @wrap_model_call
    def sync_inner(request: Any, handler: Any) -> Any:
        return handler(request)

    @before_model
    def sync_node(state: Any) -> None:
        return None

    layers = [sync_node, sync_outer, async_middle, sync_inner]
    agent = create_agent(ScriptedChatModel(responses=["ok"] * 40), middleware=layers)

    async def main() -> list[Any]:
        return await asyncio.wait_for(
            asyncio.gather(*(agent.ainvoke(hi()) for _ in range(40))), timeout=60
        )

    results = asyncio.run(main())
    assert [r["messages"][-1].content for r in results] == ["ok"] * 40


def test_a_sync_hook_may_invoke_another_agent_whose_hook_is_async_only(
    quick_idle: None,
) -> None:
    configure_bridge(max_threads=1)

    @before_model
    async def inner_async(state: Any) -> None:
        await asyncio.sleep(0)

    inner = create_agent(ScriptedChatModel(responses=["inner"] * 10), middleware=[inner_async])

    @before_model
    def calls_inner(state: Any) -> dict[str, Any]:
        answer = inner.invoke(hi())["messages"][-1].content
        return {"messages": [HumanMessage(f"inner said {answer}")]}

    outer = create_agent(ScriptedChatModel(responses=["outer"] * 10), middleware=[calls_inner])

    async def main() -> list[Any]:
        return await asyncio.wait_for(
            asyncio.gather(*(outer.ainvoke(hi()) for _ in range(5))), timeout=60
        )

    for result in asyncio.run(main()):
        assert [m.content for m in result["messages"]][-2:] == ["inner said inner", "outer"]


def test_the_bridge_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_threads=0"):
        configure_bridge(max_threads=0)
    with pytest.raises(ValueError, match="idle_seconds=-1"):
        configure_bridge(idle_seconds=-1)


# -- point 9: an endless jump loop names the hook ------------------------------------------


def test_an_endless_jump_loop_names_the_hook_and_how_often_it_jumped() -> None:
    @after_model(can_jump_to=["model"])
    def again(state: Any) -> Any:
        return {"jump_to": "model"}

    agent = create_agent(ScriptedChatModel(responses=["x"] * 50), middleware=[again])
    with pytest.raises(GraphRecursionError) as caught:
        agent.invoke(hi(), {"recursion_limit": 30})
    message = str(caught.value)
    assert message.startswith("Recursion limit of 30 reached without hitting a stop condition.")
    assert "middleware 'again', hook after_model" in message
    assert "jumped to 'model' 15 times" in message  # 30 steps: 15 rounds of model + after_model


def test_a_tool_loop_without_jumps_says_that_no_hook_jumped() -> None:
    from langchain_core.tools import tool

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    call = AIMessage("", tool_calls=[{"name": "ping", "args": {}, "id": "c"}])
    agent = create_agent(ScriptedChatModel(responses=[call] * 40), [ping])
    with pytest.raises(GraphRecursionError, match="no middleware hook jumped"):
        agent.invoke(hi(), {"recursion_limit": 12})


# -- point 6: an interrupt with a checkpointer still pauses and resumes -------------------


def test_an_interrupt_with_a_checkpointer_still_pauses_and_resumes() -> None:
    from langgraph.types import Command

    @before_model
    def asks(state: Any) -> dict[str, Any]:
        return {"messages": [HumanMessage(f"answer: {interrupt('ok?')}")]}

    agent = create_agent(
        ScriptedChatModel(responses=["done"]), middleware=[asks], checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}
    assert agent.invoke(hi(), thread)["__interrupt__"][0].value == "ok?"
    result = agent.invoke(Command(resume="yes"), thread)
    assert [m.content for m in result["messages"]] == ["hi", "answer: yes", "done"]


# -- point 12: class hooks written as (self, state) -----------------------------------------


def test_class_node_hooks_may_take_state_alone_sync_and_async() -> None:
    class Greets(AgentMiddleware):
        def before_model(self, state: Any) -> dict[str, Any]:  # type: ignore[override]
            return {"messages": [HumanMessage(f"{len(state['messages'])} so far")]}

        async def aafter_model(self, state: Any) -> None:  # type: ignore[override]
            seen.append(state["messages"][-1].content)

    seen: list[str] = []
    agent = create_agent(ScriptedChatModel(responses=["a", "b"]), middleware=[Greets()])
    assert [m.content for m in agent.invoke(hi())["messages"]] == ["hi", "1 so far", "a"]
    result = asyncio.run(agent.ainvoke(hi()))
    assert [m.content for m in result["messages"]] == ["hi", "1 so far", "b"]
    assert seen == ["a", "b"]


# -- point 14: grammar ----------------------------------------------------------------------


def test_messages_use_the_right_article_and_plural() -> None:
    assert [a("after_model"), a("AIMessage"), a("dict"), a("int"), a("str")] == [
        "an after_model",
        "an AIMessage",
        "a dict",
        "an int",
        "a str",
    ]
    assert [plural(1, "response"), plural(2, "response")] == ["1 response", "2 responses"]

    @after_model
    def says_hello(state: Any) -> Any:
        return "hello"

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[says_hello])
    with pytest.raises(TypeError, match="; an after_model hook must return"):
        agent.invoke(hi())
    model = ScriptedChatModel(responses=["one"])
    model.invoke("x")
    with pytest.raises(Exception, match="called 2 times but scripted with 1 response;"):
        model.invoke("y")


# -- point 15: every public error class from funcware ---------------------------------------


def test_every_error_class_is_exported_from_funcware_and_funcware_errors() -> None:
    import funcware.errors

    for name in funcware.errors.__all__:
        error = getattr(funcware, name)
        assert issubclass(error, Exception) and name in funcware.__all__
        assert getattr(funcware.errors, name) is error

    @before_model
    def jumps(state: Any) -> Any:
        return {"jump_to": "end"}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[jumps])
    with pytest.raises(funcware.InvalidJumpError):
        agent.invoke(hi())


# -- point 16: help() shows the options, with an example -------------------------------------


@pytest.mark.parametrize(
    "decorator",
    [
        "before_agent",
        "before_model",
        "after_model",
        "after_agent",
        "wrap_model_call",
        "wrap_tool_call",
        "dynamic_prompt",
        "hook_config",
    ],
)
def test_help_on_a_decorator_lists_its_options_and_an_example(decorator: str) -> None:
    text = pydoc.render_doc(getattr(funcware, decorator), renderer=pydoc.plaintext)
    assert "**options" not in text
    assert "Options:" in text and "Example::" in text
    signature, doc = text.splitlines()[2], text.split("Options:")[1]
    for option in ("name",) if decorator != "hook_config" else ("can_jump_to",):
        assert f"{option}: " in signature and f"    {option}: " in doc


def test_the_scripted_model_docstring_shows_how_to_script_a_tool_call() -> None:
    doc = ScriptedChatModel.__doc__ or ""
    assert "tool_calls=" in doc and "AIMessage" in doc


# -- point 20: the version ------------------------------------------------------------------


def test_funcware_has_the_installed_version() -> None:
    from importlib.metadata import version

    assert funcware.__version__ == version("funcware")


# -- point 19: sourcing .ci/postgres leaves the caller's shell as it was -------------------

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _source_postgres(extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = (
        "before=$(set +o); source .ci/postgres; status=$?; after=$(set +o); "
        '[ "$before" = "$after" ] && echo "options unchanged"; echo "status=$status"; '
        "false; echo 'the shell survived a failing command'; "
        'echo "url=${FUNCWARE_POSTGRES_URL:-}"; pg_stop; '
        'echo "stopped url=${FUNCWARE_POSTGRES_URL:-}"'
    )
    env = {**os.environ, **extra_env}
    env.pop("FUNCWARE_POSTGRES_URL", None)
    return subprocess.run(
        ["bash", "-c", script], cwd=_REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_sourcing_ci_postgres_starts_a_server_and_changes_no_shell_option() -> None:
    done = _source_postgres({})
    assert "options unchanged" in done.stdout, done.stderr
    assert "status=0" in done.stdout, done.stderr
    assert "the shell survived a failing command" in done.stdout
    assert "url=postgresql://postgres@127.0.0.1:" in done.stdout
    assert "stopped url=\n" in done.stdout


def test_a_failure_while_sourcing_ci_postgres_returns_an_error_and_keeps_the_shell() -> None:
    done = _source_postgres({"TMPDIR": "/nonexistent/funcware-test"})  # mktemp -d fails
    assert "options unchanged" in done.stdout, done.stderr
    assert "status=1" in done.stdout and "PostgreSQL did not start" in done.stderr
    assert "the shell survived a failing command" in done.stdout
    assert "url=\n" in done.stdout


def _backend() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "funcware_build_backend", os.path.join(_REPO, "packaging", "backend.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_metadata(directory: str, settings: Any = None) -> str:
    """What setuptools' metadata hook leaves: a dist-info folder; its name is returned."""
    info = os.path.join(directory, "funcware-9.9.dist-info")
    os.makedirs(info)
    for name, text in (("METADATA", "Name: funcware\nVersion: 9.9\n"), ("RECORD", "stale")):
        with open(os.path.join(info, name), "w") as file:
            file.write(text)
    return "funcware-9.9.dist-info"


def test_an_editable_wheel_links_the_package_and_loads_the_real_files(
    monkeypatch: Any, tmp_path: Any
) -> None:
    import zipfile

    with open(os.path.join(_REPO, "pyproject.toml")) as file:
        pyproject = file.read()
    assert 'build-backend = "backend"\nbackend-path = ["packaging"]' in pyproject
    backend = _backend()
    project, wheels = tmp_path / "project", tmp_path / "wheels"
    (project / "funcware").mkdir(parents=True)
    (project / "funcware" / "__init__.py").write_text("")
    wheels.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setattr(backend._setuptools, "prepare_metadata_for_build_editable", _fake_metadata)
    name = backend.build_editable(str(wheels))
    assert name == "funcware-9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheels / name) as wheel:
        files = {member: wheel.read(member).decode() for member in wheel.namelist()}
    linked = project / "build" / "__editable__.funcware"
    assert os.listdir(linked) == ["funcware"]
    assert (linked / "funcware").resolve() == (project / "funcware").resolve()
    pth = files["__editable__.funcware-9.9.pth"].splitlines()
    assert pth == [
        str(linked),
        "import __editable___funcware_finder; __editable___funcware_finder.install()",
    ]
    assert f"ROOT = {str(project)!r}" in files["__editable___funcware_finder.py"]
    assert files["funcware-9.9.dist-info/METADATA"].startswith("Name: funcware")
    record = files["funcware-9.9.dist-info/RECORD"].splitlines()
    assert {line.split(",")[0] for line in record} == set(files)
    assert "Tag: py3-none-any" in files["funcware-9.9.dist-info/WHEEL"]
    assert backend.build_wheel is backend._setuptools.build_wheel  # the rest is setuptools'


def test_an_editable_wheel_falls_back_to_setuptools_strict_mode(
    monkeypatch: Any, tmp_path: Any
) -> None:
    from pathlib import Path

    backend = _backend()
    seen: list[Any] = []
    monkeypatch.setattr(
        backend._setuptools, "build_editable", lambda *args: seen.append(args) or "x.whl"
    )
    monkeypatch.chdir(tmp_path)
    # A mode the caller chose is setuptools' to build.
    assert backend.build_editable("dist", {"editable_mode": "compat"}) == "x.whl"

    def no_symlinks(*args: Any, **kwargs: Any) -> None:
        raise OSError("symbolic links are not available")

    monkeypatch.setattr(Path, "symlink_to", no_symlinks)
    assert backend.build_editable("dist") == "x.whl"
    assert [args[1] for args in seen] == [{"editable_mode": "compat"}, {"editable_mode": "strict"}]


def test_the_editable_finder_finds_each_module_at_its_real_path(tmp_path: Any) -> None:
    backend = _backend()
    real = tmp_path.resolve() / "repo"
    (real / "funcware").mkdir(parents=True)
    (real / "funcware" / "__init__.py").write_text("")
    (real / "hooks").mkdir()
    (real / "hooks" / "__init__.py").write_text("")
    (real / "hooks" / "decorators.py").write_text("")
    (real / "funcware" / "hooks").symlink_to("../hooks", target_is_directory=True)
    namespace: dict[str, Any] = {}
    exec(backend.FINDER_SOURCE.format(root=str(real), package=str(real / "funcware")), namespace)
    finder = namespace["EditableFinder"]
    top = finder.find_spec("funcware")
    assert top.origin == str(real / "funcware" / "__init__.py")
    hooks = finder.find_spec("funcware.hooks", top.submodule_search_locations)
    assert hooks.origin == str(real / "hooks" / "__init__.py")
    assert list(hooks.submodule_search_locations) == [str(real / "hooks")]
    leaf = finder.find_spec("funcware.hooks.decorators", hooks.submodule_search_locations)
    assert leaf.origin == str(real / "hooks" / "decorators.py")
    assert finder.find_spec("hooks") is None and finder.find_spec("funcwarex") is None


# -- point 21: python -m funcware explain, given something wrong ---------------------------


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("no_such_module_xyz:middleware", "cannot import 'no_such_module_xyz'"),
        ("funcware:middlewar", "'funcware' has no attribute 'middlewar'"),
        ("funcware:__version__", "explain() got '"),
        ("no-colon", "expected module:attribute"),
    ],
)
def test_explain_from_the_shell_says_what_is_wrong_without_a_traceback(
    target: str, says: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "funcware", "explain", target],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr


def test_explain_of_something_that_is_no_middleware_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"explain\(\) got 42 \(int\); it takes a middleware"):
        funcware.explain(42)
    with pytest.raises(TypeError, match=r"explain\(\[\.\.\.\]\)\[1\] is None"):
        funcware.explain([before_model(lambda state: None), None])


# -- point 17: the tour shows what each recipe did -----------------------------------------


def _tour(*names: str, capsys: Any) -> str:
    from funcware.cookbook.__main__ import main

    assert main(list(names)) == 0
    return str(capsys.readouterr().out)


def test_the_tour_shows_the_log_lines_retries_and_prompts(capsys: Any) -> None:
    out = _tour("logging_around_model", "model_retry", "prompt_from_context", capsys=capsys)
    assert "log           funcware.cookbook.logging_around_model: model call:" in out
    assert "ModelRetry.wrap_model_call · retried · handler x3" in out
    assert "  log_model_call.wrap_model_call · failed · ConnectionError" in out
    assert "prompt_from_context.wrap_model_call · modified · changed system_message" in out


def test_the_tour_shows_state_values_records_and_the_approval_pause(capsys: Any) -> None:
    out = _tour(
        "model_call_counter",
        "usage_tracking",
        "outer_wins",
        "tool_monitoring",
        "human_approval",
        capsys=capsys,
    )
    assert "state         model_calls = 2" in out
    assert "state         usage = {'input_tokens':" in out
    assert out.count("state         verdict = 'approved'") == 1  # listed once
    assert "record        ToolCallRecord(name='add'" in out
    assert "paused        {'review': [{'tool_call_id': 'lead'" in out
