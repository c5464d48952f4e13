"""When to try a call again, and after how long."""
from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Optional

from .headers import Headers, header


@dataclass(frozen=True)
class RetryPolicy:
    """How the client retries.

    A 429 is always retried (Mnemo refused the request before running it), after the wait Mnemo names. A 502, 503 or
    504, a dropped connection or a timeout is retried only for a call that is safe to repeat: reads, PUT and DELETE,
    and writes carrying an ``Idempotency-Key`` (every G11 POST and PUT gets one). Another write is never sent twice.
    """

    #: Attempts after the first one; 0 turns retries off.
    max_retries: int = 3
    #: The longest wait the client accepts: an answer asking for more (an hourly quota) is raised at once.
    max_wait: float = 60.0
    #: The wait before retrying a failure that named none (doubled on each attempt).
    backoff: float = 0.5


def retry_delay(headers: Headers, now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait as a 429 (or 503) answer asks: ``Retry-After`` (seconds or an HTTP date), else the time until
    ``X-RateLimit-Reset`` (Unix seconds), the headers Mnemo sends with every limited answer. None when neither is
    usable."""
    now = time.time() if now is None else now
    retry_after = header(headers, "Retry-After")
    if retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(retry_after).timestamp() - now)
            except (TypeError, ValueError):
                pass
    reset = header(headers, "X-RateLimit-Reset")
    if reset is not None:
        try:
            return max(0.0, float(reset) - now)
        except ValueError:
            return None
    return None

