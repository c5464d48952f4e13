"""G5 embeddings: ``POST /api/v1/embeddings``."""
from __future__ import annotations

from typing import Optional, Sequence, Union, cast

from ._body import fields
from ._http import Transport
from .types import EmbeddingList


class Embeddings:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(self, input: Union[str, Sequence[str]], *, model: Optional[str] = None) -> EmbeddingList:
        """Embeds one text or 1-256 texts (``mnemo-embed-1024`` by default; ``mnemo-embed-1536``); nothing is
        stored, so it is retried like a read."""
        body = fields(input=input if isinstance(input, str) else list(input), model=model)
        return cast(EmbeddingList, self._t.call("POST", "/api/v1/embeddings", body=body, idempotent=True))
