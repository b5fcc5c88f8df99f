"""The pytest plugin: a ``cassette`` fixture that records a test's model calls or replays them.

Installed with funcware (entry point ``pytest11``), or listed with
``pytest_plugins = ["funcware.testing.pytest_plugin"]``. The fixture's file is
``cassettes/<test module>/<test name>.json`` beside the test module, or the path given by
``@pytest.mark.cassette("path")`` (relative to the test module). It records when the file
is missing, when pytest runs with ``--record-cassettes``, or when
``FUNCWARE_RECORD_CASSETTES=1``; otherwise it replays::

    def test_answer(cassette):
        model = cassette.use(ChatOpenAI(model="gpt-4o-mini"))
        agent = create_agent(model, [add], middleware=[cassette.use_tools()])
        ...
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from funcware.testing.cassette import Cassette

__all__ = ["cassette", "pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--record-cassettes``: record every cassette again, against the real models."""
    parser.getgroup("funcware").addoption(
        "--record-cassettes",
        action="store_true",
        default=False,
        help="funcware: record the `cassette` fixture's files again instead of replaying them "
        "(also FUNCWARE_RECORD_CASSETTES=1).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``cassette`` marker."""
    config.addinivalue_line(
        "markers", "cassette(path): the `cassette` fixture's file, relative to the test module"
    )


@pytest.fixture
def cassette(request: pytest.FixtureRequest) -> Cassette:
    """A :class:`~funcware.testing.Cassette` named after the test, recording or replaying."""
    from funcware.testing.cassette import Cassette

    here = request.path.parent
    marker = request.node.get_closest_marker("cassette")
    if marker is not None and marker.args:
        path = here / str(marker.args[0])
    else:
        name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")
        path = here / "cassettes" / request.path.stem / f"{name}.json"
    # record=None: Cassette records when the file is missing or FUNCWARE_RECORD_CASSETTES=1
    return Cassette(path, record=True if request.config.getoption("record_cassettes") else None)
