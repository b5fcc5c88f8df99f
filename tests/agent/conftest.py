"""Fixtures for the create_agent tests: ``run`` is each entry point, ``invoke`` then ``ainvoke``."""

from __future__ import annotations

import pytest
from support import Runner


@pytest.fixture(params=["invoke", "ainvoke"])
def run(request: pytest.FixtureRequest) -> Runner:
    """Each test runs the agent once with ``invoke`` and once with ``ainvoke``."""
    return Runner(request.param)
