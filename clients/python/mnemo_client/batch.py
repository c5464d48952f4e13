"""G6 batch: ``POST /api/v1/batch``."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, cast

from ._body import fields
from ._http import Transport
from .types import BatchAnswer


class Batch:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def run(
        self,
        operations: Sequence[Mapping[str, Any]],
        *,
        atomic: Optional[bool] = None,
        continue_on_error: Optional[bool] = None,
        parallel: Optional[bool] = None,
        max_retries: Optional[int] = None,
        timeout_ms: Optional[int] = None,
        validate_only: Optional[bool] = None,
        batch_id: Optional[str] = None,
    ) -> BatchAnswer:
        """Runs 1-100 operations (``{"type": "create", "data": {...}}``, ``read``, ``update``, ``delete``,
        ``search``). The answer is 200 when all succeeded and 207 when some failed: both are returned, each
        operation's outcome in ``data.operations`` (``success`` says whether all succeeded). Never retried but on 429,
        since it may write."""
        options = fields(
            atomic=atomic, continue_on_error=continue_on_error, parallel=parallel, max_retries=max_retries,
            timeout=timeout_ms, validate_only=validate_only,
        )
        body = fields(operations=[dict(op) for op in operations], options=options or None)
        headers = {"X-Batch-Id": batch_id} if batch_id else None
        return cast(BatchAnswer, self._t.call("POST", "/api/v1/batch", body=body, headers=headers, idempotent=False))
