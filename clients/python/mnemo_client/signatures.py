"""Verifying Mnemo's webhook deliveries, from the raw body exactly as received (before parsing it).

Mnemo signs with two schemes (docs/clients.md, "Receiving webhooks"):

- G10 and G11 deliveries: ``X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`` (Stripe's scheme).
- G9 deliveries: ``X-Service-Signature: <hex HMAC-SHA256 of the body>``, plus the Standard Webhooks headers
  ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">``, keyed
  with the base64-decoded part of a ``whsec_…`` secret (any other secret: its UTF-8 bytes).

Timestamps more than ``tolerance`` seconds from now are refused (replay protection). Digests are compared in
constant time.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Mapping, Optional, Union

from .headers import Headers

_WHSEC = re.compile(r"^whsec_([A-Za-z0-9+/]+={0,2})$")


class WebhookVerificationError(ValueError):
    """A delivery that must be refused; the message says why."""


def verify_webhook_signature(
    payload: Union[bytes, str],
    headers: Headers,
    secret: str,
    *,
    tolerance: int = 300,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """Verifies one delivery of any Mnemo webhook and returns the parsed event; raises WebhookVerificationError.

    ``headers`` is any mapping of the request's headers (names in any case: a dict, ``http.server``'s
    ``self.headers``, a framework's request headers). A G9 delivery must pass both its signatures.
    """
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    service = lowered.get("x-service-signature")
    current = time.time() if now is None else now
    if service is not None and "v1=" in service:
        _verify_timestamped(body, service, secret, tolerance, current)
    elif service is not None or "webhook-signature" in lowered:
        if "webhook-signature" not in lowered:
            raise WebhookVerificationError("missing webhook-signature header (Standard Webhooks)")
        _verify_standard(body, lowered, secret, tolerance, current)
        if service is not None and not _same(_hex(secret.encode("utf-8"), body), service.strip().lower()):
            raise WebhookVerificationError("X-Service-Signature does not match the body")
    else:
        raise WebhookVerificationError("missing X-Service-Signature header")
    try:
        event = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise WebhookVerificationError("body is not JSON") from exc
    if not isinstance(event, dict):
        raise WebhookVerificationError("body is not a JSON object")
    return event


def _verify_timestamped(body: bytes, header: str, secret: str, tolerance: int, now: float) -> None:
    timestamp: Optional[int] = None
    signatures = []
    for part in header.split(","):
        key, _, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value.lower())
    if timestamp is None or not signatures:
        raise WebhookVerificationError("malformed X-Service-Signature header (expected t=<unix>,v1=<hex>)")
    _check_time(timestamp, tolerance, now)
    expected = _hex(secret.encode("utf-8"), str(timestamp).encode("ascii") + b"." + body)
    # Several v1 values are accepted, as during a secret rotation.
    if not any(_same(expected, given) for given in signatures):
        raise WebhookVerificationError("signature does not match")


def _verify_standard(body: bytes, headers: Mapping[str, str], secret: str, tolerance: int, now: float) -> None:
    event_id = headers.get("webhook-id")
    stamp = headers.get("webhook-timestamp", "")
    if not event_id or not stamp.isdigit():
        raise WebhookVerificationError("missing or malformed webhook-id / webhook-timestamp headers")
    _check_time(int(stamp), tolerance, now)
    signed = f"{event_id}.{stamp}.".encode("utf-8") + body
    expected = base64.b64encode(hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()).decode("ascii")
    given = [s.partition(",")[2] for s in headers["webhook-signature"].split() if s.startswith("v1,")]
    if not any(_same(expected, g) for g in given):
        raise WebhookVerificationError("webhook-signature does not match")


def _standard_key(secret: str) -> bytes:
    match = _WHSEC.match(secret)
    if match and len(match.group(1)) % 4 == 0:
        try:
            return base64.b64decode(match.group(1), validate=True)
        except binascii.Error:
            pass
    return secret.encode("utf-8")


def _check_time(timestamp: int, tolerance: int, now: float) -> None:
    if abs(int(now) - timestamp) > tolerance:
        raise WebhookVerificationError(f"timestamp is more than {tolerance} s away from now")


def _hex(key: bytes, message: bytes) -> str:
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _same(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode("ascii", "replace"), given.encode("ascii", "replace"))
