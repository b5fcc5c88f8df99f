"""The structured-output errors, as LangChain 1.5 names them.

When LangChain's ``langchain.agents.structured_output`` is loaded (a LangChain middleware
or caller is about), an error funcware raises is also an instance of LangChain's class of
the same name, so ``except`` clauses written for LangChain catch it (the structured-output
retry and refusal middleware, deepagents' graders). funcware never imports LangChain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

from funcware.compose.stream.streaming import langchain_module

__all__ = [
    "MultipleStructuredOutputsError",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "with_langchain_class",
]

_LC_MODULE = "langchain.agents.structured_output"


class StructuredOutputError(Exception):
    """Base class of the structured-output errors; ``ai_message`` is the answer at fault."""

    __module__ = "funcware.structured_output"  # where it is documented and imported from

    ai_message: AIMessage


class MultipleStructuredOutputsError(StructuredOutputError):
    """The model called several structured-output tools where one answer was expected."""

    __module__ = "funcware.structured_output"  # where it is documented and imported from

    def __init__(self, tool_names: list[str], ai_message: AIMessage) -> None:
        self.tool_names = tool_names
        self.ai_message = ai_message
        # Exception.__init__ directly: a LangChain twin class follows in the MRO.
        Exception.__init__(
            self,
            "Model incorrectly returned multiple structured responses "
            f"({', '.join(tool_names)}) when only one is expected.",
        )


class StructuredOutputValidationError(StructuredOutputError):
    """A structured answer did not parse into its schema; ``source`` is the parse error."""

    __module__ = "funcware.structured_output"  # where it is documented and imported from

    def __init__(self, tool_name: str, source: Exception, ai_message: AIMessage) -> None:
        self.tool_name = tool_name
        self.source = source
        self.ai_message = ai_message
        Exception.__init__(
            self, f"Failed to parse structured output for tool '{tool_name}': {source}."
        )


_twins: dict[tuple[type, type], type] = {}


def with_langchain_class(error: StructuredOutputError) -> StructuredOutputError:
    """``error``, made an instance of LangChain's class of the same name too when LangChain is
    installed, so code written for LangChain (``except`` clauses, ``handle_errors`` naming
    its classes) catches it. Decided by what is installed, never by what was imported."""
    theirs = getattr(langchain_module(_LC_MODULE), type(error).__name__, None)
    if not isinstance(theirs, type) or isinstance(error, theirs):
        return error
    ours = type(error)
    twin = _twins.get((ours, theirs))
    if twin is None:
        twin = type(ours.__name__, (ours, theirs), {"__module__": ours.__module__})
        _twins[(ours, theirs)] = twin
    copy: Any = Exception.__new__(twin)
    copy.__dict__.update(error.__dict__)
    copy.args = error.args
    return copy  # type: ignore[no-any-return]
