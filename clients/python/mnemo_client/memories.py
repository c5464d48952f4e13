"""Memories: G1 (``/api/v1/memories``) and G3's semantic and hybrid search (``/api/v1/search``)."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, cast

from ._body import as_list, fields
from ._http import Transport, quote
from .types import (
    DeleteAnswer, ForgetAnswer, HistoryAnswer, HybridAnswer, MemoryAnswer, MemoryList, SearchAnswer, SimilarAnswer,
)

class Memories:
    """Every memory call. Ids are full UUIDs or unambiguous prefixes of at least 8 characters."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        *,
        title: str,
        content: str,
        memory_type: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        topic_id: Optional[str] = None,
        valid_from: Optional[str] = None,
        valid_until: Optional[str] = None,
        supersedes: Optional[Sequence[str]] = None,
        dedupe: Optional[bool] = None,
        return_related: Optional[bool] = None,
    ) -> MemoryAnswer:
        """``POST /api/v1/memories``: 201 with the new memory (200 with the stored one when ``dedupe`` found it)."""
        body = fields(
            title=title, content=content, memory_type=memory_type, tags=as_list(tags), metadata=metadata, topic_id=topic_id,
            valid_from=valid_from, valid_until=valid_until, supersedes=as_list(supersedes), dedupe=dedupe,
            return_related=return_related,
        )
        return cast(MemoryAnswer, self._t.call("POST", "/api/v1/memories", body=body))

    def get(self, memory_id: str) -> MemoryAnswer:
        """``GET /api/v1/memories/{id}`` (counts an access)."""
        return cast(MemoryAnswer, self._t.call("GET", f"/api/v1/memories/{quote(memory_id)}"))

    def update(
        self,
        memory_id: str,
        *,
        title: Optional[str] = None,
        content: Optional[str] = None,
        memory_type: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        topic_id: Optional[str] = None,
        valid_from: Optional[str] = None,
        valid_until: Optional[str] = None,
        return_related: Optional[bool] = None,
    ) -> MemoryAnswer:
        """``PUT /api/v1/memories/{id}``: only the fields given change (``valid_until=NULL`` reopens the memory)."""
        body = fields(
            title=title, content=content, memory_type=memory_type, tags=as_list(tags), metadata=metadata, topic_id=topic_id,
            valid_from=valid_from, valid_until=valid_until, return_related=return_related,
        )
        return cast(MemoryAnswer, self._t.call("PUT", f"/api/v1/memories/{quote(memory_id)}", body=body))

    def delete(self, memory_id: str) -> DeleteAnswer:
        """``DELETE /api/v1/memories/{id}``: forgets it; only a tombstone stays."""
        return cast(DeleteAnswer, self._t.call("DELETE", f"/api/v1/memories/{quote(memory_id)}"))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        page: Optional[int] = None,
        type: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        sort_by: Optional[str] = None,
        sort_order: Optional[str] = None,
        as_of: Optional[str] = None,
        include_expired: Optional[bool] = None,
    ) -> MemoryList:
        """``GET /api/v1/memories``: newest first; only memories valid now unless ``as_of`` / ``include_expired``."""
        query = {
            "limit": limit, "offset": offset, "page": page, "type": type, "tags": as_list(tags), "sortBy": sort_by,
            "sortOrder": sort_order, "as_of": as_of, "include_expired": include_expired,
        }
        return cast(MemoryList, self._t.call("GET", "/api/v1/memories", query=query))

    def search(
        self,
        query: str,
        *,
        limit: Optional[int] = None,
        threshold: Optional[float] = None,
        type: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        as_of: Optional[str] = None,
        include_expired: Optional[bool] = None,
    ) -> SearchAnswer:
        """``POST /api/v1/memories/search``: semantic search; ``threshold`` is the calibrated similarity (0.7:
        relevant)."""
        body = fields(
            query=query, limit=limit, threshold=threshold, type=type, tags=as_list(tags), metadata=metadata, as_of=as_of,
            include_expired=include_expired,
        )
        return cast(SearchAnswer, self._t.call("POST", "/api/v1/memories/search", body=body, idempotent=True))

    def hybrid_search(
        self,
        query: str,
        *,
        top_k: Optional[int] = None,
        threshold: Optional[float] = None,
        semantic_weight: Optional[float] = None,
        keyword_weight: Optional[float] = None,
        filters: Optional[Mapping[str, Any]] = None,
        rerank: Optional[bool] = None,
        include_metadata: Optional[bool] = None,
        include_embedding: Optional[bool] = None,
        as_of: Optional[str] = None,
        include_expired: Optional[bool] = None,
    ) -> HybridAnswer:
        """``POST /api/v1/search/hybrid``: semantic and keyword (BM25) results fused; ``filters`` as G3's (``type``,
        ``tags``, ``date``, metadata keys). The workspace is the client's."""
        body = fields(
            query=query, topK=top_k, threshold=threshold, semanticWeight=semantic_weight, keywordWeight=keyword_weight,
            filters=filters, rerank=rerank, includeMetadata=include_metadata, includeEmbedding=include_embedding,
            as_of=as_of, include_expired=include_expired,
        )
        return cast(HybridAnswer, self._t.call("POST", "/api/v1/search/hybrid", body=body, idempotent=True))

    def similar(self, memory_id: str, *, limit: Optional[int] = None, threshold: Optional[float] = None) -> SimilarAnswer:
        """``GET /api/v1/memories/{id}/similar``: the memories nearest to this one (near-duplicates)."""
        query = {"limit": limit, "threshold": threshold}
        return cast(SimilarAnswer, self._t.call("GET", f"/api/v1/memories/{quote(memory_id)}/similar", query=query))

    def supersede(self, memory_id: str, *, by: str) -> MemoryAnswer:
        """``POST /api/v1/memories/{id}/supersede``: ``memory_id`` stops holding where ``by`` starts. Repeating it
        changes nothing, so it is retried like a read."""
        path = f"/api/v1/memories/{quote(memory_id)}/supersede"
        return cast(MemoryAnswer, self._t.call("POST", path, body={"by": by}, idempotent=True))

    def history(self, memory_id: str, *, limit: Optional[int] = None, offset: Optional[int] = None) -> HistoryAnswer:
        """``GET /api/v1/memories/{id}/history``: earlier versions newest first, the supersession chain, or the
        tombstone of a deleted memory."""
        query = {"limit": limit, "offset": offset}
        return cast(HistoryAnswer, self._t.call("GET", f"/api/v1/memories/{quote(memory_id)}/history", query=query))

    def forget(self, filter: Mapping[str, Any], *, dry_run: Optional[bool] = None) -> ForgetAnswer:
        """``POST /api/v1/memories/forget``: deletes every memory ``filter`` matches (needs ``memories:forget``)."""
        body = fields(filter=dict(filter), dry_run=dry_run)
        return cast(ForgetAnswer, self._t.call("POST", "/api/v1/memories/forget", body=body))

