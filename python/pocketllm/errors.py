"""The exceptions the binding raises: one subclass of pocketllm.Error per
status code of the C library, each carrying the status and the library's
one-line message (pocketllm_last_error)."""
from __future__ import annotations


class Error(Exception):
    """A failure reported by the PocketLLM library.

    status: the library's status code (pocketllm_status); message: its
    one-line message, which says what went wrong (and for a file, where)."""

    status = 0

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(Error, ValueError):
    """Something passed in is unusable (a bad parameter, an id outside the vocabulary)."""
    status = 1


class FileError(Error, OSError):
    """A file could not be opened, read or written."""
    status = 2


class FormatError(Error):
    """A file is malformed (a truncated or damaged GGUF)."""
    status = 3


class UnsupportedError(Error):
    """Well-formed, but not something PocketLLM runs (an architecture, a type, a format)."""
    status = 4


class NoMemoryError(Error, MemoryError):
    """An allocation failed, or a model does not fit its device."""
    status = 5


class NotFoundError(Error, LookupError):
    """A key, tensor or device does not exist."""
    status = 6


class ContextFullError(Error):
    """A sequence does not fit the context (a prompt longer than n_ctx)."""
    status = 7


class InternalError(Error):
    """A bug in PocketLLM."""
    status = 8


_BY_STATUS = {c.status: c for c in (InvalidArgumentError, FileError, FormatError, UnsupportedError, NoMemoryError,
                                    NotFoundError, ContextFullError, InternalError)}


def error_for(status: int, message: str) -> Error:
    """The exception for a status code and message."""
    cls = _BY_STATUS.get(status, Error)
    return cls(message, status)
