"""Two answers to one approval, through two Aegra instances: the effect happens once.

A thread paused by the cookbook's ``ApproveToolCalls`` on instance ``a`` is answered through
``a``; the same answer sent again through ``b`` (a client retry, a second reviewer) finds
nothing pending and is refused (by Aegra's API, or at the agent's entry): the tool's effect
happened once and the conversation is unchanged. An answer addressed to a pause the thread
does not have, or a malformed one, is refused in the run: nothing runs and the checkpoint
keeps the real pause (but Aegra then marks the thread "error" and its API refuses further
resumes of it: on Aegra the pause cannot be answered again without help).

Needs what ``test_scale_out.py`` needs (Python 3.12+ with the ``aegra`` extra,
``redis-server``, PostgreSQL); it reuses that module's cluster and helpers.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk.errors import BadRequestError
from test_scale_out import (  # noqa: F401  (fixtures: pytest finds them by name)
    all_instances_up,
    assert_conversation_whole,
    assert_nothing_pending,
    clients,
    cluster,
    effects,
    final_status,
    send,
    signals,
    steps,
)

APPROVE: dict[str, Any] = {"decisions": [{"type": "approve"}]}


async def test_a_second_answer_through_the_other_instance_is_refused_and_pays_nothing(
    cluster: Any,  # noqa: F811
    clients: Any,  # noqa: F811
) -> None:
    thread_id, paused = await send(clients["a"], "ledger_approval", to="acct-5", amount=5, hold="")
    assert await final_status(clients["a"], thread_id, paused, 30) == "interrupted"
    (pause,) = (await clients["b"].threads.get_state(thread_id))["interrupts"]

    answer = {"resume": {pause["id"]: APPROVE}}
    first = await clients["a"].runs.create(thread_id, "ledger_approval", command=answer)
    assert await final_status(clients["a"], thread_id, first["run_id"], 30) == "success"
    before = await clients["a"].threads.get_state(thread_id)

    try:  # Aegra refuses it at its API once the thread is no longer interrupted
        again = await clients["b"].runs.create(thread_id, "ledger_approval", command=answer)
    except BadRequestError as refused:
        assert "not in interrupted state" in str(refused)
    else:  # else funcware refuses it at the agent's entry: nothing pending
        assert await final_status(clients["b"], thread_id, again["run_id"], 30) == "error"
    assert effects(cluster, thread_id) == 1 and len(steps(cluster, thread_id, "finished")) == 1
    after = await clients["b"].threads.get_state(thread_id)
    assert after["values"]["messages"] == before["values"]["messages"]
    assert_conversation_whole(after, thread_id)
    assert_nothing_pending(cluster, [thread_id])


async def test_an_answer_to_a_pause_the_thread_does_not_have_leaves_the_real_one_open(
    cluster: Any,  # noqa: F811
    clients: Any,  # noqa: F811
) -> None:
    thread_id, paused = await send(clients["a"], "ledger_approval", to="acct-6", amount=6, hold="")
    assert await final_status(clients["a"], thread_id, paused, 30) == "interrupted"
    (pause,) = (await clients["a"].threads.get_state(thread_id))["interrupts"]

    stale = {"resume": {"0" * 32: APPROVE}}
    wrong = await clients["b"].runs.create(thread_id, "ledger_approval", command=stale)
    assert await final_status(clients["b"], thread_id, wrong["run_id"], 30) == "error"
    assert steps(cluster, thread_id, "started") == []
    (still,) = (await clients["a"].threads.get_state(thread_id))["interrupts"]
    assert still["id"] == pause["id"]  # the checkpoint still holds the real pause
    assert effects(cluster, thread_id) == 0
    # Aegra marks the thread "error" after the refused run, and its API then refuses any
    # resume ("thread is not in interrupted state"): answering again needs Aegra's help.


async def test_a_malformed_answer_through_the_other_instance_runs_nothing(
    cluster: Any,  # noqa: F811
    clients: Any,  # noqa: F811
) -> None:
    thread_id, paused = await send(clients["a"], "ledger_approval", to="acct-4", amount=4, hold="")
    assert await final_status(clients["a"], thread_id, paused, 30) == "interrupted"
    (pause,) = (await clients["a"].threads.get_state(thread_id))["interrupts"]

    typo = {"resume": {pause["id"]: {"decisions": [{"type": "aprove"}]}}}
    wrong = await clients["b"].runs.create(thread_id, "ledger_approval", command=typo)
    assert await final_status(clients["b"], thread_id, wrong["run_id"], 30) == "error"
    assert steps(cluster, thread_id, "started") == [] and effects(cluster, thread_id) == 0
    (still,) = (await clients["a"].threads.get_state(thread_id))["interrupts"]
    assert still["id"] == pause["id"]
    # As after any failed run, Aegra then marks the thread "error" and its API refuses a
    # second answer ("thread is not in interrupted state"), though the pause is still there.
