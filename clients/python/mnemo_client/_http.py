"""The HTTP transport: one place that sends requests, reads answers, raises MnemoError and retries."""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.client import HTTPResponse
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .errors import MnemoError, error_from_answer
from .headers import Headers
from .retry import RetryPolicy, retry_delay

Query = Mapping[str, Any]
SAFE_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRYABLE_STATUSES = frozenset({502, 503, 504})
USER_AGENT = "mnemo-client-python/0.1.0"


class Transport:
    """Holds what every call shares: base URL, credentials, workspace, timeout and retry policy."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        workspace: Optional[str],
        timeout: float,
        retry: RetryPolicy,
        auth_header: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required, e.g. http://127.0.0.1:8080")
        if not api_key:
            raise ValueError("api_key is required (mnemo_live_… or mnemo_test_…)")
        if auth_header not in ("bearer", "x-api-key"):
            raise ValueError('auth_header must be "bearer" or "x-api-key"')
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.workspace = workspace
        self.timeout = timeout
        self.retry = retry
        self.auth_header = auth_header
        self.sleep = sleep

    def headers(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        # Mnemo takes the key in either header on every surface; one is sent, so no surface has to choose.
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.auth_header == "bearer":
            headers["Authorization"] = f"Bearer {self.api_key}"
        else:
            headers["X-API-Key"] = self.api_key
        if self.workspace is not None:
            headers["X-Workspace-ID"] = self.workspace
        headers.update(extra or {})
        return headers

    def url(self, path: str, query: Optional[Query] = None) -> str:
        url = self.base_url + path
        encoded = encode_query(query or {})
        return f"{url}?{encoded}" if encoded else url

    def call(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotent: Optional[bool] = None,
    ) -> Any:
        """Sends a JSON request and returns the parsed JSON answer (None for 204), retrying as the policy says:
        ``idempotent`` says whether repeating the call is safe (default: GET, PUT, DELETE, or an Idempotency-Key)."""
        all_headers = self.headers(headers)
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
        repeatable = idempotent if idempotent is not None else (
            method in SAFE_METHODS or "Idempotency-Key" in all_headers
        )
        url = self.url(path, query)
        attempt = 0
        while True:
            try:
                status, answer_headers, raw = self._send(method, url, data, all_headers)
            except MnemoError:  # no answer: the request may or may not have run
                if not repeatable or attempt >= self.retry.max_retries:
                    raise
                self.sleep(self.retry.backoff * (2 ** attempt))
                attempt += 1
                continue
            if 200 <= status < 300:
                return parse_json(raw, status, answer_headers)
            error = error_from_answer(status, raw, answer_headers)
            if attempt >= self.retry.max_retries or not (status == 429 or (status in RETRYABLE_STATUSES and repeatable)):
                raise error
            wait = retry_delay(answer_headers)
            if wait is None:
                wait = self.retry.backoff * (2 ** attempt)
            if wait > self.retry.max_wait:
                raise error
            self.sleep(wait)
            attempt += 1

    def _send(self, method: str, url: str, data: Optional[bytes], headers: Mapping[str, str]) -> Tuple[int, Headers, bytes]:
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as answer:
            try:
                return answer.code, answer.headers, answer.read()
            finally:
                answer.close()
        except (socket.timeout, TimeoutError) as exc:
            raise MnemoError(f"no answer within {self.timeout} s: {exc}", code="TIMEOUT") from exc
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise MnemoError(f"no answer within {self.timeout} s", code="TIMEOUT") from exc
            raise MnemoError(f"cannot reach {self.base_url}: {reason}", code="CONNECTION_ERROR") from exc

    def open_stream(self, path: str, query: Optional[Query], headers: Mapping[str, str], timeout: float) -> HTTPResponse:
        """Opens a long-lived GET (Server-Sent Events) and returns the open response; errors as ``call`` raises them."""
        request = urllib.request.Request(self.url(path, query), method="GET", headers=self.headers(headers))
        try:
            return urllib.request.urlopen(request, timeout=timeout)  # type: ignore[no-any-return]
        except urllib.error.HTTPError as answer:
            try:
                raise error_from_answer(answer.code, answer.read(), answer.headers) from None
            finally:
                answer.close()
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            raise MnemoError(f"cannot reach {self.base_url}: {getattr(exc, 'reason', exc)}", code="CONNECTION_ERROR") from exc


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def encode_query(query: Query) -> str:
    """Drops None values, writes booleans as true/false and lists as comma-separated values (Mnemo's list form)."""
    pairs = []
    for key, value in query.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        pairs.append((key, str(value)))
    return urllib.parse.urlencode(pairs)


def quote(segment: str) -> str:
    """One path segment, every reserved character escaped (secret names, MCP URIs, ids)."""
    return urllib.parse.quote(segment, safe="")


def parse_json(raw: bytes, status: int, headers: Headers) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MnemoError(
            f"answer is not JSON: {raw[:200]!r}", code="INVALID_RESPONSE", status=status, request_id=headers.get("X-Request-Id"),
        ) from exc
