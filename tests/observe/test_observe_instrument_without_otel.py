"""Without OpenTelemetry installed, ``instrument()`` says which extra to install, and
``uninstrument()`` is a no-op; funcware itself never needs OpenTelemetry."""

from __future__ import annotations

import sys

import pytest

import funcware.observe
from funcware.observe import calls, instrument, uninstrument


def test_instrument_without_opentelemetry_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import fails as if absent
    monkeypatch.delitem(sys.modules, "funcware.observe.otel", raising=False)
    monkeypatch.delattr(funcware.observe, "otel", raising=False)  # imported by other tests
    with pytest.raises(ImportError, match=r'pip install -e "\.\[otel\]" from a checkout'):
        instrument()
    uninstrument()
    assert calls.installed() == ()
