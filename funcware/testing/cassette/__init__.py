"""Record a real chat model's calls to a JSON file once, replay them offline in tests."""

from funcware.testing.cassette.cassette import RECORD_ENV, Cassette, redact_text
from funcware.testing.cassette.errors import (
    CassetteError,
    CassetteMismatchError,
    CassetteVersionError,
)
from funcware.testing.cassette.store import VERSION

__all__ = [
    "RECORD_ENV",
    "VERSION",
    "Cassette",
    "CassetteError",
    "CassetteMismatchError",
    "CassetteVersionError",
    "redact_text",
]
