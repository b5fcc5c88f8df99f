"""The tool-call pairing contract, on by default (``tool_pairing="warn"``): ``node`` checks
a node hook's write, ``transform`` lets the outermost model wrap note its history,
``model_call`` checks (``"repair"``: repairs) what reaches the model. A break is a
:class:`~funcware.errors.ToolCallPairingWarning` (an error under ``effects="strict"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funcware.compose.seams import Build, NodePair
    from funcware.compose.steps.model_call import ModelCall
    from funcware.hooks.middleware import HookImpl

__all__ = ["MODES", "ToolCallPairing"]

MODES = ("warn", "repair", "off")
"""``create_agent(tool_pairing=...)``: check and warn, check and repair, or nothing."""


def _mode(build: Build) -> tuple[str, bool]:
    mode = str(build.options.get("tool_pairing", "warn"))
    strict = build.options.get("effects") == "strict" and mode == "warn"
    return mode, strict


class ToolCallPairing:
    """The plug-in: pairing checks on node writes, model wraps and model calls."""

    name = "pairing"

    def transform(self, impl: HookImpl, build: Build) -> HookImpl:
        """The outermost ``wrap_model_call`` layer notes the history the wraps receive."""
        mode, _ = _mode(build)
        if mode == "off" or impl.hook != "wrap_model_call" or build.caller != "create_agent":
            return impl
        wraps: list[str] = build.data.setdefault("pairing.wraps", [])
        wraps.append(impl.describe())
        if len(wraps) > 1:
            return impl
        from funcware.pairing.checks import outermost

        return outermost(impl)

    def node(self, impl: HookImpl, pair: NodePair, build: Build) -> NodePair:
        """A node hook whose write is checked before it is applied."""
        mode, strict = _mode(build)
        if mode == "off":
            return pair
        from funcware.pairing.checks import check_node

        return check_node(impl, pair, strict)

    def model_call(self, call: ModelCall, build: Build) -> ModelCall:
        """The model call that checks (or repairs) what it sends."""
        mode, strict = _mode(build)
        if mode == "off":
            return call
        from funcware.pairing.checks import PairedModelCall

        wraps = build.data.get("pairing.wraps", [])
        return PairedModelCall(call, repair=mode == "repair", strict=strict, wraps=wraps)
