"""The one exception the client raises for every failed call."""
from __future__ import annotations

import json
from typing import Any, Optional


class MnemoError(Exception):
    """A call Mnemo refused, or one that never got an answer.

    ``code`` is the surface's error code (``MEMORY_NOT_FOUND``, ``VALIDATION_ERROR``, ``RATE_LIMITED`` …; docs/api.md
    lists them per surface), ``status`` the HTTP status (None when no answer arrived: ``code`` is then
    ``CONNECTION_ERROR`` or ``TIMEOUT``), ``request_id`` the answer's request id (the envelope's ``request_id``, else the
    ``X-Request-Id`` header), ``details`` the envelope's details as sent, and ``retry_after`` the seconds Mnemo asked
    the caller to wait (``Retry-After``), when it did.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        details: Any = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details = details
        self.retry_after = retry_after

    def __str__(self) -> str:
        if self.status is None:
            return f"{self.code}: {self.message}"
        request = f", request {self.request_id}" if self.request_id else ""
        return f"{self.code}: {self.message} (HTTP {self.status}{request})"

    def __repr__(self) -> str:
        return f"MnemoError(code={self.code!r}, status={self.status!r}, request_id={self.request_id!r}, message={self.message!r})"


def error_from_answer(status: int, body: bytes, headers: Any) -> MnemoError:
    """Reads any surface's error envelope: ``{error: {code, message, details, request_id}}`` (G1, G3, G5, G6, G8,
    G9, G10, G11, with or without ``success``) or G2's flat ``{error: CODE, message, details, request_id}``."""
    header_request_id = headers.get("X-Request-Id") if headers is not None else None
    retry_after = _seconds(headers.get("Retry-After")) if headers is not None else None
    try:
        parsed = json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, ValueError):
        parsed = None
    code, message, details, request_id = f"HTTP_{status}", f"HTTP {status}", None, None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict):
            code = str(error.get("code", code))
            message = str(error.get("message", message))
            details = error.get("details")
            request_id = error.get("request_id")
        elif isinstance(error, str):
            code = error
            message = str(parsed.get("message", message))
            details = parsed.get("details")
            request_id = parsed.get("request_id")
    elif body:
        message = body[:200].decode("utf-8", "replace")
    return MnemoError(
        message, code=code, status=status, request_id=request_id or header_request_id, details=details, retry_after=retry_after,
    )


def _seconds(value: Optional[str]) -> Optional[float]:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
