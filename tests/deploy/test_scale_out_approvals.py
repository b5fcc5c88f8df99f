"""Two answers to one approval, through two Aegra instances: the effect happens once.

A thread paused by the cookbook's ``ApproveToolCalls`` on instance ``a`` is answered through
``a``; the same answer sent again through ``b`` (a client retry, a second reviewer) finds
nothing pending and is refused at the agent's entry: its run ends in an error, the tool's
effect happened once, and the conversation is unchanged. An answer addressed to a pause the
thread does not have is refused the same way while the real pause stays open.

Needs what ``test_scale_out.py`` needs (Python 3.12+ with the ``aegra`` extra,
``redis-server``, PostgreSQL); it reuses that module's cluster and helpers.
"""

from __future__ import annotations

from typing import Any

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

    again = await clients["b"].runs.create(thread_id, "ledger_approval", command=answer)
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
    assert still["id"] == pause["id"]

    right = {"resume": {pause["id"]: APPROVE}}
    run = await clients["a"].runs.create(thread_id, "ledger_approval", command=right)
    assert await final_status(clients["a"], thread_id, run["run_id"], 30) == "success"
    assert effects(cluster, thread_id) == 1
