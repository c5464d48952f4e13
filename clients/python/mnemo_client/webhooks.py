"""Webhook registrations: G9 memory events (``/api/v1/webhooks``), G10 generic events (``/v1/webhooks``) and G11
security events (``/v1/security/webhooks``). Receivers check deliveries with ``verify_webhook_signature``."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, cast

from ._body import fields
from ._http import Transport, new_idempotency_key, quote
from .types import (
    EventWebhookAnswer, EventWebhookList, MemoryWebhookAnswer, MemoryWebhookList, SecurityWebhook, SecurityWebhookList,
    WebhookDeleteAnswer,
)


class MemoryWebhooks:
    """G9: ``memory.created``, ``memory.updated``, ``memory.deleted``, ``memory.superseded`` … of the client's
    workspace. Deliveries are signed twice: ``X-Service-Signature`` (hex) and Standard Webhooks headers."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        url: str,
        events: Sequence[str],
        *,
        secret: Optional[str] = None,
        active: Optional[bool] = None,
        retry_policy: Optional[Mapping[str, Any]] = None,
        filters: Optional[Mapping[str, Any]] = None,
    ) -> MemoryWebhookAnswer:
        """The answer's ``data.secret`` (generated unless given) is shown only here: keep it to verify deliveries."""
        body = fields(
            url=url, events=list(events), secret=secret, active=active,
            retry_policy=dict(retry_policy) if retry_policy is not None else None,
            filters=dict(filters) if filters is not None else None,
        )
        return cast(MemoryWebhookAnswer, self._t.call("POST", "/api/v1/webhooks", body=body))

    def list(
        self, *, active: Optional[bool] = None, event: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None,
    ) -> MemoryWebhookList:
        query = {"active": active, "event": event, "limit": limit, "offset": offset}
        return cast(MemoryWebhookList, self._t.call("GET", "/api/v1/webhooks", query=query))

    def delete(self, webhook_id: str) -> WebhookDeleteAnswer:
        return cast(WebhookDeleteAnswer, self._t.call("DELETE", f"/api/v1/webhooks/{quote(webhook_id)}"))


class EventWebhooks:
    """G10: transfer, payment, wallet and KYC events, signed ``t=<unix>,v1=<hex>``."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(self, url: str, events: Sequence[str], *, description: Optional[str] = None) -> EventWebhookAnswer:
        body = fields(url=url, events=list(events), description=description)
        return cast(EventWebhookAnswer, self._t.call("POST", "/v1/webhooks", body=body))

    def list(self, *, event: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> EventWebhookList:
        query = {"event": event, "limit": limit, "offset": offset}
        return cast(EventWebhookList, self._t.call("GET", "/v1/webhooks", query=query))

    def delete(self, webhook_id: str) -> WebhookDeleteAnswer:
        return cast(WebhookDeleteAnswer, self._t.call("DELETE", f"/v1/webhooks/{quote(webhook_id)}"))


class SecurityWebhooks:
    """G11: ``secret.created``, ``secret.accessed``, ``apikey.rotated``, signed ``t=<unix>,v1=<hex>``."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self, url: str, events: Sequence[str], *, secret: Optional[str] = None, idempotency_key: Optional[str] = None,
    ) -> SecurityWebhook:
        body = fields(url=url, events=list(events), secret=secret)
        headers = {"Idempotency-Key": idempotency_key or new_idempotency_key()}
        return cast(SecurityWebhook, self._t.call("POST", "/v1/security/webhooks", body=body, headers=headers))

    def list(self, *, event: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> SecurityWebhookList:
        query = {"event": event, "limit": limit, "cursor": cursor}
        return cast(SecurityWebhookList, self._t.call("GET", "/v1/security/webhooks", query=query))

    def delete(self, webhook_id: str) -> None:
        self._t.call("DELETE", f"/v1/security/webhooks/{quote(webhook_id)}")
