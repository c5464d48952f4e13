"""Python client for Mnemo, the self-hostable memory, search and secrets service (standard library only)."""
from ._body import NULL
from .client import MnemoClient
from .errors import MnemoError
from .retry import RetryPolicy, retry_delay
from .signatures import WebhookVerificationError, verify_webhook_signature
from .stream import EventStream, StreamEvent

__all__ = [
    "NULL",
    "EventStream",
    "MnemoClient",
    "MnemoError",
    "RetryPolicy",
    "StreamEvent",
    "WebhookVerificationError",
    "retry_delay",
    "verify_webhook_signature",
]
__version__ = "0.1.0"
