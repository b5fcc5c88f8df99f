"""Fixtures every folder uses: sync/async drivers and checkpointers (memory, SQLite, PostgreSQL).

The helpers tests import (``Driver``, ``tool_calls``, ``contents``, ``StreamingScriptedModel``)
live in ``harness.py``; shared builders in ``support.py``.

``driver`` runs an agent the way a test is parametrized: ``invoke``/``stream`` from plain
sync code, or ``ainvoke``/``astream`` on one event loop kept for the whole test (so async
checkpointers opened by a fixture live on the loop that uses them).

``checkpointer`` is each saver in turn: langgraph's ``InMemorySaver``; SQLite on a real
file in ``tmp_path`` (``SqliteSaver`` for sync drivers, ``AsyncSqliteSaver`` for async);
PostgreSQL (``PostgresSaver`` / ``AsyncPostgresSaver``) at ``$FUNCWARE_POSTGRES_URL``. The
PostgreSQL cases are skipped with a reason when the URL is unset, and fail when
``FUNCWARE_REQUIRE_POSTGRES=1`` (CI sets both; ``source .ci/postgres`` starts a server).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from harness import Driver
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

# The `cassette` fixture and --record-cassettes; already loaded when funcware is installed
# with its pytest11 entry point (of the same name), so this is then a no-op.
pytest_plugins = ["funcware.testing.pytest_plugin"]

MODES = ("sync", "async")
SAVERS = ("memory", "sqlite", "postgres")
POSTGRES_URL_VAR = "FUNCWARE_POSTGRES_URL"
REQUIRE_POSTGRES_VAR = "FUNCWARE_REQUIRE_POSTGRES"


@pytest.fixture(params=MODES)
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    """Each test runs once with the sync API and once with the async API."""
    if request.param == "sync":
        yield Driver("sync")
        return
    loop = asyncio.new_event_loop()
    try:
        yield Driver("async", loop)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


# -- checkpointers ------------------------------------------------------------------


@pytest.fixture
def postgres_url() -> str:
    """The PostgreSQL server for persistence tests; skip (or fail, if required) without one."""
    url = os.environ.get(POSTGRES_URL_VAR)
    if url:
        return url
    if os.environ.get(REQUIRE_POSTGRES_VAR) == "1":
        pytest.fail(
            f"{REQUIRE_POSTGRES_VAR}=1 but {POSTGRES_URL_VAR} is not set: the PostgreSQL "
            "persistence tests cannot run. Start a server with `source .ci/postgres`."
        )
    pytest.skip(
        f"{POSTGRES_URL_VAR} is not set, so the PostgreSQL checkpointer tests are skipped "
        "(run `source .ci/postgres` to start a throwaway server)."
    )


@contextlib.contextmanager
def _sync_saver(kind: str, path: str, url: str) -> Iterator[BaseCheckpointSaver[Any]]:
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(path) as saver:
            yield saver
        return
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _async_saver(kind: str, path: str, url: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            yield saver
        return
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        await saver.setup()
        yield saver


@pytest.fixture(params=SAVERS)
def checkpointer(
    request: pytest.FixtureRequest, driver: Driver, tmp_path: Any
) -> Iterator[BaseCheckpointSaver[Any]]:
    """Each saver in turn, in the flavour the driver needs (sync or async)."""
    kind: str = request.param
    if kind == "memory":
        yield InMemorySaver()
        return
    url = request.getfixturevalue("postgres_url") if kind == "postgres" else ""
    path = str(tmp_path / "checkpoints.sqlite")
    if not driver.is_async:
        with _sync_saver(kind, path, url) as saver:
            yield saver
        return
    manager = _async_saver(kind, path, url)
    saver = driver.run(manager.__aenter__())
    try:
        yield saver
    finally:
        driver.run(manager.__aexit__(None, None, None))


@pytest.fixture
def thread() -> dict[str, Any]:
    """A config with a thread id no other test uses (the PostgreSQL database is shared)."""
    return {"configurable": {"thread_id": f"test-{uuid.uuid4()}"}}
