"""MnemoClient: one object per server and key, with a namespace per part of the API."""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Optional, Sequence, cast

from ._http import Transport
from .api_keys import ApiKeys
from .batch import Batch
from .embeddings import Embeddings
from .mcp import Mcp
from .memories import Memories
from .retry import RetryPolicy
from .secrets import Secrets
from .stream import EventStream
from .types import BatchAnswer
from .webhooks import EventWebhooks, MemoryWebhooks, SecurityWebhooks


class MnemoClient:
    """A synchronous client of one Mnemo server.

    ``MnemoClient("http://127.0.0.1:8080", "mnemo_live_…", workspace="team-a")``. The key goes in
    ``Authorization: Bearer`` (``auth_header="x-api-key"`` sends ``X-API-Key``; Mnemo takes either everywhere);
    ``workspace`` is sent as ``X-Workspace-ID`` (Mnemo's default workspace when None). ``timeout`` bounds each
    request in seconds. 429 answers are retried after the wait Mnemo names (``Retry-After``, else
    ``X-RateLimit-Reset``) up to ``max_retries`` times, unless it is longer than ``max_retry_wait`` seconds.
    Every method returns the JSON body its endpoint answers (docs/api.md); failures raise MnemoError.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        workspace: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        auth_header: str = "bearer",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._t = Transport(
            base_url, api_key, workspace=workspace, timeout=timeout, auth_header=auth_header, sleep=sleep,
            retry=RetryPolicy(max_retries=max_retries, max_wait=max_retry_wait),
        )
        self.memories = Memories(self._t)
        self.embeddings = Embeddings(self._t)
        self.secrets = Secrets(self._t)
        self.api_keys = ApiKeys(self._t)
        self.mcp = Mcp(self._t)
        #: G9 webhooks: memory events of this client's workspace.
        self.webhooks = MemoryWebhooks(self._t)
        #: G10 webhooks: transfer, payment, wallet and KYC events.
        self.event_webhooks = EventWebhooks(self._t)
        #: G11 webhooks: secret and API key events.
        self.security_webhooks = SecurityWebhooks(self._t)
        self._batch = Batch(self._t)

    @property
    def workspace(self) -> Optional[str]:
        return self._t.workspace

    def with_workspace(self, workspace: Optional[str]) -> "MnemoClient":
        """The same client for another workspace."""
        t = self._t
        return MnemoClient(
            t.base_url, t.api_key, workspace=workspace, timeout=t.timeout, max_retries=t.retry.max_retries,
            max_retry_wait=t.retry.max_wait, auth_header=t.auth_header, sleep=t.sleep,
        )

    def health(self) -> Mapping[str, Any]:
        """``GET /health`` (no key needed)."""
        return cast(Mapping[str, Any], self._t.call("GET", "/health"))

    def batch(self, operations: Sequence[Mapping[str, Any]], **options: Any) -> BatchAnswer:
        """G6 ``POST /api/v1/batch``; see ``Batch.run`` for the options."""
        return self._batch.run(operations, **options)

    def stream(
        self,
        *,
        events: Optional[Sequence[str]] = None,
        filters: Optional[Mapping[str, str]] = None,
        last_event_id: Optional[str] = None,
        heartbeat: Optional[int] = None,
        include_heartbeats: bool = False,
        max_reconnects: int = 5,
        reconnect_delay: Optional[float] = None,
        read_timeout: Optional[float] = None,
    ) -> EventStream:
        """G8 events of this workspace as they happen (``events``: types to receive; ``filters``: ``tags``,
        ``memory_type`` or metadata keys). A dropped connection is resumed from the last event id seen, at most
        ``max_reconnects`` times in a row, after ``reconnect_delay`` seconds (default: the server's ``retry:``)."""
        return EventStream(
            self._t, events=events, filters=filters, last_event_id=last_event_id, heartbeat=heartbeat,
            include_heartbeats=include_heartbeats, max_reconnects=max_reconnects, reconnect_delay=reconnect_delay,
            read_timeout=read_timeout,
        )
