"""G11 API keys: ``/v1/security/api-keys`` (scope ``apikeys:manage``)."""
from __future__ import annotations

from typing import Dict, Optional, Sequence, cast

from ._body import as_list, fields
from ._http import Transport, new_idempotency_key, quote
from .types import ApiKey, ApiKeyList


class ApiKeys:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        name: str,
        *,
        scopes: Optional[Sequence[str]] = None,
        tier: Optional[str] = None,
        expires_at: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> ApiKey:
        """A new key of the caller's tenant and mode, never holding more than the caller; ``key`` is in this answer
        only."""
        body = fields(name=name, scopes=as_list(scopes), tier=tier, expiresAt=expires_at)
        return cast(ApiKey, self._t.call("POST", "/v1/security/api-keys", body=body, headers=_idempotent(idempotency_key)))

    def get(self, key_id: str) -> ApiKey:
        return cast(ApiKey, self._t.call("GET", f"/v1/security/api-keys/{quote(key_id)}"))

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> ApiKeyList:
        return cast(ApiKeyList, self._t.call("GET", "/v1/security/api-keys", query={"limit": limit, "cursor": cursor}))

    def update(
        self, key_id: str, *, name: Optional[str] = None, scopes: Optional[Sequence[str]] = None, idempotency_key: Optional[str] = None,
    ) -> ApiKey:
        body = fields(name=name, scopes=as_list(scopes))
        path = f"/v1/security/api-keys/{quote(key_id)}"
        return cast(ApiKey, self._t.call("PUT", path, body=body, headers=_idempotent(idempotency_key)))

    def revoke(self, key_id: str) -> None:
        """Revokes at once: the key's next request is a 401."""
        self._t.call("DELETE", f"/v1/security/api-keys/{quote(key_id)}")

    def rotate(self, key_id: str, *, grace_period_seconds: Optional[int] = None, idempotency_key: Optional[str] = None) -> ApiKey:
        """A new key replacing ``key_id``, which keeps working for the grace period (default 24 h)."""
        body = fields(gracePeriodSeconds=grace_period_seconds)
        path = f"/v1/security/api-keys/{quote(key_id)}/rotate"
        return cast(ApiKey, self._t.call("POST", path, body=body, headers=_idempotent(idempotency_key)))


def _idempotent(idempotency_key: Optional[str]) -> Dict[str, str]:
    return {"Idempotency-Key": idempotency_key or new_idempotency_key()}
