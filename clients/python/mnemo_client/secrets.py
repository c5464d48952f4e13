"""G11 secrets: ``/v1/security/secrets``. Every write carries an ``Idempotency-Key``, so retrying one is safe."""
from __future__ import annotations

from typing import Dict, Optional, Sequence, cast

from ._body import as_list, fields
from ._http import Transport, new_idempotency_key, quote
from .types import Secret, SecretList


class Secrets:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        name: str,
        value: str,
        *,
        tags: Optional[Sequence[str]] = None,
        expires_in: Optional[str] = None,
        region: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Secret:
        """Stores version 1 (``expires_in`` like ``"30d"``; ``region`` is sent as ``X-Region``)."""
        body = fields(name=name, value=value, tags=as_list(tags), expiresIn=expires_in)
        return cast(Secret, self._t.call("POST", "/v1/security/secrets", body=body, headers=_write_headers(region, idempotency_key)))

    def get(self, name: str, *, version: Optional[int] = None) -> Secret:
        """The newest version, or ``version`` (the 10 newest are kept)."""
        return cast(Secret, self._t.call("GET", f"/v1/security/secrets/{quote(name)}", query={"version": version}))

    def update(
        self,
        name: str,
        value: str,
        *,
        tags: Optional[Sequence[str]] = None,
        expires_in: Optional[str] = None,
        region: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Secret:
        """Writes version N+1 (``expires_in=NULL`` removes the expiry; left out, it is kept)."""
        body = fields(value=value, tags=as_list(tags), expiresIn=expires_in)
        path = f"/v1/security/secrets/{quote(name)}"
        return cast(Secret, self._t.call("PUT", path, body=body, headers=_write_headers(region, idempotency_key)))

    def delete(self, name: str) -> None:
        self._t.call("DELETE", f"/v1/security/secrets/{quote(name)}")

    def list(
        self,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        region: Optional[str] = None,
    ) -> SecretList:
        """Names ascending, without values; pass ``pagination.cursor`` back for the next page."""
        query = {"limit": limit, "cursor": cursor, "tags": as_list(tags), "region": region}
        return cast(SecretList, self._t.call("GET", "/v1/security/secrets", query=query))


def _write_headers(region: Optional[str], idempotency_key: Optional[str]) -> Dict[str, str]:
    headers = {"Idempotency-Key": idempotency_key or new_idempotency_key()}
    if region is not None:
        headers["X-Region"] = region
    return headers
