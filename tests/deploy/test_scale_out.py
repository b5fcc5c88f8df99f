"""funcware agents on two Aegra instances sharing PostgreSQL and Redis, proven under failure.

One cluster per module (``scale_out_support.Cluster``): a PostgreSQL database, a Redis
server and two Aegra instances ``a`` and ``b`` on loopback ports, serving the deploy
example (``assistant``) and the ledger graphs of ``scale_out_graphs``, whose ``transfer``
tool writes every step and every side effect to tables in the same database. The tests
talk to the instances only through their HTTP API (langgraph-sdk), kill or drain them
with signals, and read the ledger and Aegra's ``runs`` table to see what happened:

- scale: a dozen background runs on both instances all succeed, both ran some, in far
  less than the serial time;
- cross-instance: a run created on one is joined and streamed through the other, and a
  run cancelled through the other stops before its tool finishes;
- SIGKILL mid-tool: every run still succeeds within lease + reaper time, each side effect
  happened once, each conversation holds the user's message once and no unanswered tool
  call, and nothing stays pending;
- the at-least-once window: a kill after the effect and before the checkpoint repeats the
  effect — twice without the ``once_per_call`` recipe, once with it;
- the same kill while the model's tool call is not yet saved, with a model that mints fresh
  ids: once as shipped (durability ``"sync"``), twice under LangGraph's default ``"async"``;
- an interrupt (``human_approval``) on one instance resumed through the other, also with
  the resuming worker killed;
- drain: SIGTERM on one instance lets its runs finish on the other;
- a stream reconnected to a finished run whose Redis buffer is gone hangs (Aegra 0.11.0), and
  the scaling-out guide's ``follow_run`` ends it by joining the run.

Needs Python 3.12+ with the ``aegra`` extra, ``redis-server`` and PostgreSQL (Debian
packages): skipped without them, failed when ``FUNCWARE_REQUIRE_AEGRA=1`` (CI).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REQUIRE_AEGRA = "FUNCWARE_REQUIRE_AEGRA"
_missing = [
    name
    for name in ("aegra_api", "langgraph_sdk", "psycopg", "redis")
    if importlib.util.find_spec(name) is None
]
if shutil.which("redis-server") is None:
    _missing.append("redis-server (apt-get install redis-server)")
if not os.environ.get("FUNCWARE_POSTGRES_URL") and not list(
    Path("/usr/lib/postgresql").glob("*/bin/initdb")
):
    _missing.append("PostgreSQL (apt-get install postgresql, or set FUNCWARE_POSTGRES_URL)")
if _missing and os.environ.get(REQUIRE_AEGRA) == "1":
    pytest.fail(
        f"{REQUIRE_AEGRA}=1 but {', '.join(_missing)} missing; on Python 3.12+: "
        "pip install -e '.[aegra]'",
        pytrace=False,
    )
if _missing:
    pytest.skip(f"the Aegra scale-out tests need {', '.join(_missing)}", allow_module_level=True)

import psycopg  # noqa: E402
import redis  # noqa: E402
from deploy_support import DEPLOY  # noqa: E402
from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.client import LangGraphClient  # noqa: E402
from scale_out_support import LEDGER_TABLES, RECOVERY_SECONDS, Cluster, Instance  # noqa: E402
from server_support import free_loopback_port  # noqa: E402

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guides" / "scaling-out.md"
SLACK = 10.0
"""Seconds beyond lease + reaper a recovered run may take to finish (2 shared CPUs)."""
RECOVERIES: list[float] = []
"""Seconds from each kill or drain to the end of the last run it affected."""


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[Cluster]:
    workdir = tmp_path_factory.mktemp("aegra")
    signals = workdir / "signals"
    signals.mkdir()
    deploy_config = json.loads((DEPLOY / "aegra" / "aegra.json").read_text())
    graphs = {
        name: str((DEPLOY / "aegra" / path).resolve()) if path.startswith(".") else path
        for name, path in deploy_config["graphs"].items()
    }
    for name in ("ledger", "ledger_once", "ledger_approval", "ledger_once_fresh_ids"):
        graphs[name] = f"{TESTS / 'scale_out_graphs.py'}:{name}"
    # The deployment as shipped (its checkpointer settings included), plus the test graphs.
    shipped = {**deploy_config, "dependencies": [str(TESTS)], "graphs": graphs}
    config = workdir / "aegra.json"
    config.write_text(json.dumps(shipped))
    running = Cluster(config, workdir, {"FUNCWARE_SCALE_OUT_SIGNALS": str(signals)})
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    try:
        began = time.monotonic()
        running.start(before_instances=LEDGER_TABLES)
        if capture is not None and reporter is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(
                    f"aegra: 2 instances healthy in {time.monotonic() - began:.1f}s"
                )
        yield running
        if capture is not None and reporter is not None and RECOVERIES:
            with capture.global_and_fixture_disabled():
                times = ", ".join(f"{seconds:.1f}s" for seconds in RECOVERIES)
                reporter.write_line(
                    f"aegra: runs recovered in {times} (lease + reaper = {RECOVERY_SECONDS}s)"
                )
    finally:
        running.stop()
    assert not running.running


@pytest.fixture
def signals(cluster: Cluster) -> Path:
    return Path(cluster.instances[0].env["FUNCWARE_SCALE_OUT_SIGNALS"])


@pytest.fixture(autouse=True)
def all_instances_up(cluster: Cluster) -> Iterator[None]:
    """Each test starts with both instances running (a test may kill one)."""
    for instance in cluster.instances:
        if not instance.running:
            instance.restart()
    yield


@pytest.fixture
async def clients(cluster: Cluster) -> AsyncIterator[dict[str, LangGraphClient]]:
    a, b = cluster.instances
    async with get_client(url=a.url) as first, get_client(url=b.url) as second:
        yield {"a": first, "b": second}


# -- helpers ---------------------------------------------------------------------------


SENT: dict[str, str] = {}
"""What the user sent in each thread the tests made (thread id -> message)."""


def transfer_input(**args: Any) -> dict[str, Any]:
    """A user message asking for ``transfer`` with ``args`` (the ledger graphs' rule)."""
    return {"messages": [{"role": "user", "content": json.dumps(args, sort_keys=True)}]}


async def send(
    client: LangGraphClient,
    graph: str,
    stream_mode: list[str] | None = None,
    durability: Any = None,
    **args: Any,
) -> tuple[str, str]:
    """A new thread and a background run on it asking for ``transfer(**args)``.

    ``durability`` overrides the deployment's for this run (``None``: the deployment's).
    """
    thread_id: str = (await client.threads.create())["thread_id"]
    message = transfer_input(**args)
    SENT[thread_id] = message["messages"][0]["content"]
    modes: Any = stream_mode or ["values"]
    run = await client.runs.create(
        thread_id, graph, input=message, stream_mode=modes, durability=durability
    )
    return thread_id, run["run_id"]


def query(cluster: Cluster, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(cluster.database_url) as connection:
        return connection.execute(sql.encode(), params).fetchall()


def steps(cluster: Cluster, thread_id: str, step: str) -> list[int]:
    """The pids of the instances that reached ``step`` of ``thread_id``'s transfer, in order."""
    rows = query(
        cluster,
        "SELECT pid FROM ledger_steps WHERE thread_id = %s AND step = %s ORDER BY at",
        thread_id,
        step,
    )
    return [pid for (pid,) in rows]


def effects(cluster: Cluster, thread_id: str) -> int:
    rows = query(cluster, "SELECT count(*) FROM ledger_effects WHERE thread_id = %s", thread_id)
    return int(rows[0][0])


async def eventually(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Wait until ``check()`` holds; the seconds it took (fails after ``timeout``)."""
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > timeout:
            raise AssertionError(f"not within {timeout:.0f}s: {what}")
        await asyncio.sleep(0.1)
    return time.monotonic() - began


async def final_status(client: LangGraphClient, thread_id: str, run_id: str, timeout: float) -> str:
    """The run's status once it is no longer pending or running."""
    deadline = time.monotonic() + timeout
    while True:
        status: str = (await client.runs.get(thread_id, run_id))["status"]
        if status not in ("pending", "running") or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.2)


async def start_runs(
    clients: dict[str, LangGraphClient], count: int, graph: str = "ledger", **args: Any
) -> list[tuple[str, str]]:
    """``count`` background runs, created alternately through ``a`` and ``b``."""
    return [
        await send(clients["ab"[index % 2]], graph, to=f"acct-{index}", amount=index, **args)
        for index in range(count)
    ]


def assert_conversation_whole(state: Any, thread_id: str) -> None:
    """The user's message is there once, and every tool call has its answer."""
    messages = state["values"]["messages"]
    humans = [m["content"] for m in messages if m["type"] == "human"]
    assert humans == [SENT[thread_id]], humans
    calls = [call["id"] for m in messages if m["type"] == "ai" for call in m["tool_calls"]]
    answers = [m["tool_call_id"] for m in messages if m["type"] == "tool"]
    assert sorted(calls) == sorted(answers), (calls, answers)
    assert messages[-1]["type"] == "ai" and messages[-1]["content"].startswith("Done.")


def assert_nothing_pending(cluster: Cluster, thread_ids: list[str]) -> None:
    """No run of these threads is pending, running or leased, and every thread is idle."""
    runs = query(
        cluster,
        "SELECT status, claimed_by, lease_expires_at FROM runs WHERE thread_id = ANY(%s)",
        thread_ids,
    )
    assert runs and all(
        status in ("success", "interrupted") and owner is None and lease is None
        for status, owner, lease in runs
    ), runs
    threads = query(cluster, "SELECT status FROM thread WHERE thread_id = ANY(%s)", thread_ids)
    assert [status for (status,) in threads] == ["idle"] * len(thread_ids), threads


async def all_succeed(client: LangGraphClient, runs: list[tuple[str, str]], timeout: float) -> None:
    statuses = await asyncio.gather(
        *(final_status(client, thread, run, timeout) for thread, run in runs)
    )
    assert statuses == ["success"] * len(runs), statuses


def other_client(
    cluster: Cluster, clients: dict[str, LangGraphClient], instance: Instance
) -> LangGraphClient:
    """The client of the instance that is not ``instance``."""
    return clients["b" if instance is cluster.instances[0] else "a"]


def victim_of(cluster: Cluster, thread_ids: list[str]) -> Instance:
    """The instance whose workers run the most of these threads' tools right now."""
    pids = [steps(cluster, thread, "started")[-1] for thread in thread_ids]
    return cluster.by_pid(max(set(pids), key=pids.count))


def held(signals: Path, name: str) -> Path:
    """A signal file: while it exists, a tool called with ``hold=name`` waits."""
    path = signals / name
    path.touch()
    return path


async def kill_and_recover(
    cluster: Cluster,
    clients: dict[str, LangGraphClient],
    runs: list[tuple[str, str]],
    hold: Path,
    reached: Callable[[str], bool],
    signum: int = signal.SIGKILL,
) -> tuple[Instance, list[str]]:
    """Wait until every run ``reached`` the hold, signal the busiest instance, release, wait.

    Returns the instance signalled and the threads whose tool it was running.
    """
    threads = [thread for thread, _ in runs]
    await eventually(lambda: all(reached(t) for t in threads), 60, "all tools reached the hold")
    victim = victim_of(cluster, threads)
    victims_threads = [t for t in threads if steps(cluster, t, "started")[-1] == victim.pid]
    victim.signal(signum)
    victim.wait(30)
    killed_at = time.monotonic()
    hold.unlink()
    await all_succeed(other_client(cluster, clients, victim), runs, RECOVERY_SECONDS + SLACK)
    elapsed = time.monotonic() - killed_at
    RECOVERIES.append(elapsed)
    assert elapsed < RECOVERY_SECONDS + SLACK, elapsed
    return victim, victims_threads


# -- scale -----------------------------------------------------------------------------


async def test_a_dozen_background_runs_spread_over_both_instances(
    cluster: Cluster, clients: dict[str, LangGraphClient]
) -> None:
    seconds, count = 2.0, 12
    began = time.monotonic()
    runs = await start_runs(clients, count, seconds=seconds)
    await all_succeed(clients["b"], runs, 60)
    elapsed = time.monotonic() - began

    threads = [thread for thread, _ in runs]
    ran_on = {pid for thread in threads for pid in steps(cluster, thread, "finished")}
    assert ran_on == {instance.pid for instance in cluster.instances}
    assert elapsed < count * seconds / 2, f"{elapsed:.1f}s for {count} runs of {seconds}s"
    assert [effects(cluster, thread) for thread in threads] == [1] * count
    assert_nothing_pending(cluster, threads)


# -- cross-instance --------------------------------------------------------------------


async def test_a_run_created_on_one_instance_is_joined_and_streamed_through_the_other(
    cluster: Cluster, clients: dict[str, LangGraphClient], signals: Path
) -> None:
    hold = held(signals, "join")
    modes: Any = ["values", "updates"]
    thread_id, run_id = await send(
        clients["a"], "ledger", modes, to="acct-0", amount=0, hold="join"
    )
    await eventually(lambda: bool(steps(cluster, thread_id, "started")), 30, "tool started")

    async def follow() -> list[tuple[str, Any]]:
        parts = clients["b"].runs.join_stream(thread_id, run_id, stream_mode=modes)
        return [(part.event, part.data) async for part in parts]

    following = asyncio.create_task(follow())
    await asyncio.sleep(1.0)  # b is subscribed before the tool goes on
    hold.unlink()
    events = await asyncio.wait_for(following, 30)

    updated = [node for event, data in events if event == "updates" for node in data]
    assert "tools" in updated and updated[-1] == "model", events
    final = [data for event, data in events if event == "values"][-1]
    assert final["messages"][-1]["content"] == "Done. Sent 0 to acct-0."
    assert await final_status(clients["b"], thread_id, run_id, 10) == "success"


async def test_a_run_cancelled_through_the_other_instance_stops_before_its_tool_finishes(
    cluster: Cluster, clients: dict[str, LangGraphClient], signals: Path
) -> None:
    """The cancel goes through the instance whose worker is *not* running the tool."""
    hold = held(signals, "cancel")
    ((thread_id, run_id),) = await start_runs(clients, 1, hold="cancel")
    await eventually(lambda: bool(steps(cluster, thread_id, "started")), 30, "tool started")
    running_on = cluster.by_pid(steps(cluster, thread_id, "started")[0])
    other = "b" if running_on is cluster.instances[0] else "a"

    await clients[other].runs.cancel(thread_id, run_id, wait=True)
    hold.unlink()
    await asyncio.sleep(2.0)  # a tool still running would finish now

    assert await final_status(clients[other], thread_id, run_id, 10) == "interrupted"
    assert steps(cluster, thread_id, "finished") == [] and effects(cluster, thread_id) == 0


# -- failure ---------------------------------------------------------------------------


async def test_runs_on_a_worker_killed_mid_tool_finish_elsewhere_exactly_once(
    cluster: Cluster, clients: dict[str, LangGraphClient], signals: Path
) -> None:
    hold = held(signals, "kill-mid-tool")
    runs = await start_runs(clients, 6, hold="kill-mid-tool")

    victim, moved = await kill_and_recover(
        cluster, clients, runs, hold, lambda t: bool(steps(cluster, t, "started"))
    )

    threads = [thread for thread, _ in runs]
    assert moved, "the killed instance ran none of the tools"
    for thread in threads:
        finished = steps(cluster, thread, "finished")
        assert len(finished) == 1 and effects(cluster, thread) == 1, thread
        if thread in moved:  # restarted on the survivor: started twice, finished once
            assert finished != [victim.pid] and len(steps(cluster, thread, "started")) == 2
        state = await other_client(cluster, clients, victim).threads.get_state(thread)
        assert_conversation_whole(state, thread)
    assert_nothing_pending(cluster, threads)


@pytest.mark.parametrize(("graph", "times"), [("ledger", 2), ("ledger_once", 1)])
async def test_a_kill_after_the_effect_repeats_it_unless_the_recipe_guards_it(
    cluster: Cluster,
    clients: dict[str, LangGraphClient],
    signals: Path,
    graph: str,
    times: int,
) -> None:
    """At-least-once: the effect is done, the checkpoint is not, the worker dies."""
    hold = held(signals, f"window-{graph}")
    runs = await start_runs(clients, 1, graph, hold=f"window-{graph}", hold_at="after")
    ((thread_id, _),) = runs

    victim, _ = await kill_and_recover(
        cluster, clients, runs, hold, lambda t: effects(cluster, t) == 1
    )

    assert effects(cluster, thread_id) == times
    state: Any = await other_client(cluster, clients, victim).threads.get_state(thread_id)
    assert_conversation_whole(state, thread_id)
    (answer,) = [m for m in state["values"]["messages"] if m["type"] == "tool"]
    if graph == "ledger_once":  # the recipe answered for the unfinished call: not run again
        assert answer["status"] == "error" and "unknown" in answer["content"]
        assert len(steps(cluster, thread_id, "started")) == 1
    else:
        assert answer["content"] == "Sent 0 to acct-0."
    assert_nothing_pending(cluster, [thread_id])


CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
"""LangGraph's PostgreSQL checkpointer's tables."""
HELD_SECONDS = 12.0
"""How long a run gets to reach its tool's effect with its checkpoint writes held back: under
``"async"`` it takes well under a second; under ``"sync"`` it never does."""


async def holds_within(check: Callable[[], bool], timeout: float) -> bool:
    """Whether ``check()`` comes to hold within ``timeout`` seconds."""
    try:
        await eventually(check, timeout, "")
    except AssertionError:
        return False
    return True


def waiting_for_checkpoint_tables(cluster: Cluster) -> list[int]:
    """The server processes (backend pids) whose write waits on a lock on those tables."""
    rows = query(
        cluster,
        "SELECT l.pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
        "WHERE NOT l.granted AND c.relname = ANY(%s)",
        list(CHECKPOINT_TABLES),
    )
    return [pid for (pid,) in rows]


def logs_since(cluster: Cluster, marks: dict[str, int]) -> str:
    """What the instances logged since ``marks`` (name -> length of its log then)."""
    return "".join(i.log()[marks[i.name] :] for i in cluster.instances)


@pytest.mark.parametrize(
    ("durability", "times"), [(None, 1), ("async", 2)], ids=["as-shipped", "async"]
)
async def test_a_worker_killed_before_the_model_call_is_saved_pays_once_as_shipped(
    cluster: Cluster,
    clients: dict[str, LangGraphClient],
    signals: Path,
    durability: str | None,
    times: int,
) -> None:
    """The model mints a fresh id per tool call, as real ones do; the tool sits behind
    ``once_per_call``; the worker dies after the payment. The checkpoint writes are held
    back (a lock on the checkpointer's tables: a slow database, made certain) while the run
    can get on without them, and the steps are the same whatever the durability:

    - as shipped (``deploy/aegra/aegra.json`` sets ``"durability": "sync"``) the run waits
      for each checkpoint, so the tool starts only once the model's call is saved; the run
      that takes over repeats that call, under its id, and the recipe stops it: one payment;
    - under ``"async"`` (LangGraph's default, here asked for by the run) the tool pays while
      the model's answer is unsaved; the worker dies with it; the run that takes over asks
      the model again, which makes a new call, which the recipe cannot know: two payments,
      and the recipe said so (``DurabilityWarning``) in the log.
    """
    name = f"unsaved-{durability}"
    hold = held(signals, name)
    marks = {i.name: len(i.log()) for i in cluster.instances}
    with psycopg.connect(cluster.database_url) as lock:
        lock.execute("SET lock_timeout = '10s'")
        lock.execute(f"LOCK TABLE {', '.join(CHECKPOINT_TABLES)} IN EXCLUSIVE MODE".encode())
        graph = "ledger_once_fresh_ids"
        runs = await start_runs(
            clients, 1, graph, hold=name, hold_at="after", durability=durability
        )
        ((thread_id, run_id),) = runs
        # The same steps whatever the durability: once a checkpoint write waits, give the run
        # HELD_SECONDS to pay without it; then let the database catch up.
        await eventually(
            lambda: bool(waiting_for_checkpoint_tables(cluster)), 30, "a checkpoint waits"
        )
        paid_unsaved = await holds_within(lambda: effects(cluster, thread_id) == 1, HELD_SECONDS)
        if not paid_unsaved:  # the run waits for its checkpoint: nothing ran ahead of it
            assert steps(cluster, thread_id, "started") == []
            lock.rollback()
            await eventually(lambda: effects(cluster, thread_id) == 1, 30, "the tool paid")
        assert paid_unsaved == (durability == "async"), "paid before the model's call was saved"
        victim = cluster.by_pid(steps(cluster, thread_id, "started")[0])
        victim.signal(signal.SIGKILL)
        victim.wait(30)
        # The dead worker's sessions end (PostgreSQL would end them on their next write to
        # the closed socket): what they queued behind the lock is never written.
        for pid in waiting_for_checkpoint_tables(cluster):
            query(cluster, "SELECT pg_terminate_backend(%s)", pid)
    hold.unlink()
    await all_succeed(other_client(cluster, clients, victim), runs, RECOVERY_SECONDS + SLACK)

    assert effects(cluster, thread_id) == times
    rows = query(
        cluster,
        "SELECT DISTINCT tool_call_id FROM ledger_steps WHERE thread_id = %s",
        thread_id,
    )
    assert len(rows) == times  # one call, repeated under its id; or a second, new call
    state: Any = await other_client(cluster, clients, victim).threads.get_state(thread_id)
    assert_conversation_whole(state, thread_id)
    warned = "DurabilityWarning" in logs_since(cluster, marks)
    assert warned == (durability == "async")
    assert_nothing_pending(cluster, [thread_id])
    (params,) = query(cluster, "SELECT execution_params FROM runs WHERE run_id = %s", run_id)
    assert params[0]["execution"]["durability"] == (durability or "sync")  # the shipped default


# -- human approval across instances ---------------------------------------------------


@pytest.mark.parametrize("kill_resuming_worker", [False, True])
async def test_an_interrupt_on_one_instance_resumes_through_the_other(
    cluster: Cluster,
    clients: dict[str, LangGraphClient],
    signals: Path,
    kill_resuming_worker: bool,
) -> None:
    hold_name = f"approve-{kill_resuming_worker}"
    args: dict[str, Any] = {
        "to": "acct-9",
        "amount": 9,
        "hold": hold_name if kill_resuming_worker else "",
    }
    thread_id, paused = await send(clients["a"], "ledger_approval", **args)
    assert await final_status(clients["a"], thread_id, paused, 30) == "interrupted"

    state = await clients["b"].threads.get_state(thread_id)
    (interrupt,) = state["interrupts"]
    assert [r["name"] for r in interrupt["value"]["review"]] == ["transfer"]
    assert steps(cluster, thread_id, "started") == []  # nothing ran before the decision

    hold = held(signals, hold_name) if kill_resuming_worker else None
    resumed = await clients["b"].runs.create(
        thread_id, "ledger_approval", command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    runs = [(thread_id, resumed["run_id"])]
    if hold is None:
        await all_succeed(clients["a"], runs, 30)
        survivor = clients["a"]
    else:
        victim, _ = await kill_and_recover(
            cluster, clients, runs, hold, lambda t: bool(steps(cluster, t, "started"))
        )
        assert len(steps(cluster, thread_id, "started")) == 2
        survivor = other_client(cluster, clients, victim)

    assert effects(cluster, thread_id) == 1 and len(steps(cluster, thread_id, "finished")) == 1
    final = await survivor.threads.get_state(thread_id)
    assert_conversation_whole(final, thread_id)
    assert_nothing_pending(cluster, [thread_id])


# -- drain -----------------------------------------------------------------------------


async def test_sigterm_drains_an_instance_and_its_runs_finish_on_the_other(
    cluster: Cluster, clients: dict[str, LangGraphClient], signals: Path
) -> None:
    hold = held(signals, "drain")
    runs = await start_runs(clients, 4, hold="drain")

    victim, moved = await kill_and_recover(
        cluster,
        clients,
        runs,
        hold,
        lambda t: bool(steps(cluster, t, "started")),
        signum=signal.SIGTERM,
    )

    assert moved
    log = victim.log()
    assert "Draining in-flight jobs" in log and "Requeueing drained runs" in log
    threads = [thread for thread, _ in runs]
    for thread in threads:
        assert effects(cluster, thread) == 1
        finished = steps(cluster, thread, "finished")
        if thread in moved:
            assert len(finished) == 1 and finished[0] != victim.pid
    assert_nothing_pending(cluster, threads)


# -- streams ---------------------------------------------------------------------------


def guide_block(heading: str) -> str:
    """The python block of the scaling-out guide under ``heading``."""
    section = GUIDE.read_text(encoding="utf-8").split(f"### {heading}", 1)[1]
    (code,) = re.findall(r"```py\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    return code


async def test_a_stream_reconnected_after_its_buffer_is_gone_ends_through_the_guides_join(
    cluster: Cluster, clients: dict[str, LangGraphClient]
) -> None:
    """Aegra 0.11.0 keeps such a stream open with keep-alives only; the guide's
    ``follow_run`` gives up on it after ``quiet_seconds`` and joins the run."""
    thread_id = (await clients["a"].threads.create())["thread_id"]
    message = transfer_input(to="acct-7", amount=7)
    SENT[thread_id] = message["messages"][0]["content"]
    parts = clients["a"].runs.stream(thread_id, "ledger", input=message, stream_mode="values")
    streamed = [part async for part in parts]
    (run_id,) = {part.data["run_id"] for part in streamed if part.event == "metadata"}
    first_id = next(part.id for part in streamed if part.id)
    assert await final_status(clients["a"], thread_id, run_id, 10) == "success"
    # The replay buffer is gone (ten minutes later, or a Redis restart without persistence).
    buffers = redis.Redis.from_url(cluster.instances[0].env["REDIS_URL"])
    try:
        keys = list(buffers.scan_iter(match=f"*cache:{run_id}"))
        assert keys and buffers.delete(*keys) == len(keys)
    finally:
        buffers.close()

    hanging = clients["b"].runs.join_stream(thread_id, run_id, last_event_id=first_id)
    with pytest.raises(asyncio.TimeoutError):  # neither an event nor the end: keep-alives
        await asyncio.wait_for(hanging.__aiter__().__anext__(), 3.0)

    namespace: dict[str, Any] = {"__name__": "guide_follow_run"}
    exec(compile(guide_block("A stream reconnected"), str(GUIDE), "exec"), namespace)
    began = time.monotonic()
    events, state = await namespace["follow_run"](
        clients["b"], thread_id, run_id, first_id, quiet_seconds=2.0
    )
    assert time.monotonic() - began < 10
    assert events == []
    assert state["messages"][-1]["content"] == "Done. Sent 7 to acct-7."


# -- the README ------------------------------------------------------------------------


def test_the_readme_commands_serve_the_example_on_two_instances() -> None:
    """``cluster.sh up 2``, the client block, ``add``, ``down``: as the README and the guide
    have them."""
    # Not pytest's tmp_path: PostgreSQL's user must be able to reach the state directory.
    state = Path(tempfile.mkdtemp(prefix="funcware-aegra-readme-")) / "state"
    state.parent.chmod(0o755)
    section = GUIDE.read_text(encoding="utf-8").split("## Several servers", 1)[1]
    section = section.split("\n### ", 1)[0]  # before its subsections
    (commands,) = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    readme = README.read_text(encoding="utf-8").split("## Scaling out", 1)[1]
    assert re.findall(r"```bash\n(.*?)```", readme.split("\n## ", 1)[0], re.DOTALL) == [commands]
    (client_block,) = re.findall(r"```py\n(.*?)```", section, re.DOTALL)
    (up,) = [line.split("#")[0].split() for line in commands.splitlines() if "cluster.sh" in line]
    first = free_loopback_port()
    env = {
        **os.environ,
        "PYTHON": sys.executable,  # the README's activated venv
        "AEGRA_STATE_DIR": str(state),
        "AEGRA_FIRST_PORT": str(first),
        "AEGRA_PG_PORT": str(free_loopback_port()),
        "AEGRA_REDIS_PORT": str(free_loopback_port()),
    }

    def script(*args: str) -> str:
        done = subprocess.run(
            [str(ROOT / args[0]), *args[1:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    try:
        script(*up)
        code = client_block.replace("127.0.0.1:2026", f"127.0.0.1:{first}")
        code = code.replace("127.0.0.1:2027", f"127.0.0.1:{first + 1}")
        exec(compile(code, "README.md[scaling out]", "exec"), {"__name__": "readme_scale_out"})
        script("deploy/aegra/cluster.sh", "add")
        status = script("deploy/aegra/cluster.sh", "status")
        assert status.count(" running") == 5, status  # 3 instances, Redis, PostgreSQL
    finally:
        script("deploy/aegra/cluster.sh", "down", "--wipe")
        shutil.rmtree(state.parent, ignore_errors=True)
    assert not state.exists()
