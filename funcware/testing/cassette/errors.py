"""What a cassette raises: a replay that does not match, or a file it cannot read."""

from __future__ import annotations

__all__ = ["CassetteError", "CassetteMismatchError", "CassetteVersionError"]


class CassetteError(Exception):
    """A cassette file is missing, unreadable or malformed."""

    __module__ = "funcware.testing"  # where it is documented and imported from


class CassetteVersionError(CassetteError):
    """A cassette file was written in a format version this funcware does not read."""

    __module__ = "funcware.testing"  # where it is documented and imported from


class CassetteMismatchError(AssertionError):
    """A replayed call differs from every recorded call it could answer from.

    The message names the cassette, the call, what changed (messages, tools, tool_choice,
    settings) and ends with a unified diff of the recorded and the live request.
    """

    __module__ = "funcware.testing"  # where it is documented and imported from
