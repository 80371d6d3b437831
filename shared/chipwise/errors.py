"""One exception hierarchy; edges (CLI, HTTP) map these to exit codes and status codes."""

from __future__ import annotations


class ChipwiseError(Exception):
    """Base class: the message is shown to the user as one line, so make it say what to do."""


class ConfigError(ChipwiseError):
    """A setting or policy file is invalid."""


class StoreUnavailable(ChipwiseError):
    """The database cannot be reached or is not migrated."""


class NotFound(ChipwiseError):
    """A requested object does not exist."""


class InvalidInput(ChipwiseError):
    """Input from outside (an event, a report, a form) was rejected."""


class UpstreamError(ChipwiseError):
    """An AWS or HTTP dependency failed after retries."""
