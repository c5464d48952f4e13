"""The shapes of Mnemo's answers (docs/api.md), as TypedDicts: every method returns the JSON body its endpoint
answers, unchanged, so these read exactly as the API reference does."""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

JsonObject = Dict[str, Any]
Validity = Literal["valid", "expired", "superseded", "not_yet_valid"]


# --- G1 memories ------------------------------------------------------------------------------------------------

class _MemoryRequired(TypedDict):
    id: str
    title: str
    content: str
    memory_type: str
    type: str
    tags: List[str]
    metadata: JsonObject
    topic_id: Optional[str]
    created_at: str
    updated_at: str
    valid_from: str
    valid_until: Optional[str]
    superseded_by: Optional[str]
    version: int


class Memory(_MemoryRequired, total=False):
    #: Only on get (the get itself is counted).
    access_count: int
    last_accessed: Optional[str]
    #: Only with include_expired.
    validity: Validity


class Related(TypedDict):
    id: str
    title: str
    similarity: float


class _MemoryAnswerRequired(TypedDict):
    success: bool
    data: Memory


class MemoryAnswer(_MemoryAnswerRequired, total=False):
    #: Only when the create asked for ``dedupe``.
    deduplicated: bool
    #: Only when the write asked for ``return_related``.
    related: List[Related]


class PagePosition(TypedDict):
    total: int
    page: int
    limit: int
    hasMore: bool


class MemoryList(TypedDict):
    success: bool
    data: List[Memory]
    pagination: PagePosition


class Deleted(TypedDict):
    id: str
    deleted_at: str


class DeleteAnswer(TypedDict):
    success: bool
    message: str
    data: Deleted


class _SearchItemRequired(TypedDict):
    id: str
    title: str
    content: str
    memory_type: str
    type: str
    similarity_score: float
    tags: List[str]
    metadata: JsonObject
    valid_from: str
    valid_until: Optional[str]
    superseded_by: Optional[str]
    version: int


class SearchItem(_SearchItemRequired, total=False):
    validity: Validity


class SearchData(TypedDict):
    results: List[SearchItem]
    total: int
    query: str
    threshold: float


class SearchAnswer(TypedDict):
    success: bool
    data: SearchData


class SimilarData(TypedDict):
    memory_id: str
    results: List[SearchItem]
    total: int
    threshold: float


class SimilarAnswer(TypedDict):
    success: bool
    data: SimilarData


class Version(TypedDict):
    version: int
    title: str
    content: str
    memory_type: str
    type: str
    tags: List[str]
    metadata: JsonObject
    topic_id: Optional[str]
    valid_from: str
    valid_until: Optional[str]
    written_at: str
    written_by: str
    replaced_at: str
    replaced_by: str


class ChainLink(TypedDict):
    id: str
    title: str
    valid_from: str
    valid_until: Optional[str]


class Chain(TypedDict):
    supersedes: List[ChainLink]
    superseded_by: List[ChainLink]


class Tombstone(TypedDict):
    id: str
    deleted_at: str
    deleted_by: str
    reason: str


class HistoryPosition(TypedDict):
    total: int
    limit: int
    offset: int
    hasMore: bool


class HistoryData(TypedDict):
    memory_id: str
    memory: Optional[Memory]
    tombstone: Optional[Tombstone]
    versions: List[Version]
    pagination: HistoryPosition
    chain: Chain


class HistoryAnswer(TypedDict):
    success: bool
    data: HistoryData


class ForgetData(TypedDict, total=False):
    dry_run: bool
    count: int
    deleted: int
    ids: List[str]
    ids_truncated: bool


class ForgetAnswer(TypedDict):
    success: bool
    data: ForgetData


# --- G3 search (semantic and hybrid) ----------------------------------------------------------------------------

class _MatchRequired(TypedDict):
    id: str
    score: float
    title: str
    text: str
    highlights: List[str]
    valid_from: str
    valid_until: Optional[str]
    superseded_by: Optional[str]
    version: int


class Match(_MatchRequired, total=False):
    metadata: JsonObject
    embedding: List[float]
    validity: Validity


class _HybridAnswerRequired(TypedDict):
    matches: List[Match]
    total: int
    query_embedding_time: float
    search_time: float


class HybridAnswer(_HybridAnswerRequired, total=False):
    semantic_results: int
    keyword_results: int
    combined_score_method: str


# --- G5 embeddings and G6 batch ---------------------------------------------------------------------------------

class Embedding(TypedDict):
    object: str
    embedding: List[float]
    index: int


class Usage(TypedDict):
    prompt_tokens: int
    total_tokens: int


class EmbeddingList(TypedDict):
    object: str
    data: List[Embedding]
    model: str
    usage: Usage


class _BatchResultRequired(TypedDict):
    index: int
    type: str
    status: str
    attempts: int


class BatchResult(_BatchResultRequired, total=False):
    result: Any
    error: JsonObject


class BatchSummary(TypedDict):
    creates: int
    reads: int
    updates: int
    deletes: int
    searches: int


class BatchData(TypedDict):
    batch_id: str
    processed: int
    failed: int
    total: int
    execution_time: float
    operations: List[BatchResult]
    summary: BatchSummary


class BatchAnswer(TypedDict):
    success: bool
    data: BatchData


# --- G11 secrets, API keys, MCP ---------------------------------------------------------------------------------

class CursorPosition(TypedDict):
    cursor: Optional[str]
    hasMore: bool
    totalCount: int


class _SecretRequired(TypedDict):
    id: str
    name: str
    version: int
    tags: List[str]
    createdAt: str
    updatedAt: str
    expiresAt: Optional[str]


class Secret(_SecretRequired, total=False):
    #: Absent from lists.
    value: str


class SecretList(TypedDict):
    data: List[Secret]
    pagination: CursorPosition


Tier = Literal["free", "pro", "enterprise"]


class _ApiKeyRequired(TypedDict):
    id: str
    name: str
    prefix: str
    scopes: List[str]
    tier: Tier
    mode: Literal["live", "test"]
    createdAt: str
    expiresAt: Optional[str]
    revokedAt: Optional[str]
    replacedBy: Optional[str]


class ApiKey(_ApiKeyRequired, total=False):
    #: The key itself: in the answers of create and rotate only.
    key: str


class ApiKeyList(TypedDict):
    data: List[ApiKey]
    pagination: CursorPosition


class McpResource(TypedDict, total=False):
    id: str
    uri: str
    name: str
    description: str
    type: Literal["secret", "api-key", "custom"]
    permissions: List[str]
    requiresApproval: bool
    approvers: List[str]
    autoApprove: JsonObject
    createdAt: str
    createdBy: str
    #: Only when read.
    value: str
    metadata: JsonObject
    accessedAt: str
    accessCount: int


class McpResourceList(TypedDict):
    resources: List[McpResource]
    pagination: CursorPosition


class McpApproval(TypedDict, total=False):
    approvalId: str
    status: Literal["pending", "approved", "denied", "expired"]
    resource: str
    operation: Literal["read", "write"]
    reason: str
    requestedBy: str
    requestedAt: str
    expiresAt: str
    approvalUrl: str
    approvedBy: Optional[str]
    approvedAt: Optional[str]
    deniedBy: Optional[str]
    deniedAt: Optional[str]
    responseReason: Optional[str]
    autoApproved: bool
    #: In the answer that approves only (auto-approval or an approver's answer).
    accessToken: Optional[str]


class McpApprovalList(TypedDict):
    data: List[McpApproval]
    pagination: CursorPosition


class McpAuditList(TypedDict):
    logs: List[JsonObject]
    pagination: CursorPosition


# --- Webhooks ---------------------------------------------------------------------------------------------------

class MemoryWebhook(TypedDict, total=False):
    """A G9 webhook (``/api/v1/webhooks``, memory events)."""
    id: str
    url: str
    events: List[str]
    active: bool
    created_at: str
    updated_at: str
    last_delivery: Optional[str]
    delivery_stats: JsonObject
    retry_policy: JsonObject
    filters: JsonObject
    #: In the creation's answer only.
    secret: str


class MemoryWebhookAnswer(TypedDict):
    success: bool
    data: MemoryWebhook


class OffsetPosition(TypedDict):
    total: int
    limit: int
    offset: int
    has_more: bool


class MemoryWebhookListData(TypedDict):
    webhooks: List[MemoryWebhook]
    pagination: OffsetPosition


class MemoryWebhookList(TypedDict):
    success: bool
    data: MemoryWebhookListData


class WebhookDeleted(TypedDict):
    id: str
    deleted: bool


class WebhookDeleteAnswer(TypedDict):
    success: bool
    data: WebhookDeleted


class EventWebhook(TypedDict, total=False):
    """A G10 webhook (``/v1/webhooks``, transfer, payment, wallet and KYC events)."""
    id: str
    url: str
    events: List[str]
    description: Optional[str]
    status: str
    created_at: str
    updated_at: str
    secret: str


class EventWebhookAnswer(TypedDict):
    success: bool
    data: EventWebhook


class EventWebhookListData(TypedDict):
    webhooks: List[EventWebhook]
    pagination: OffsetPosition


class EventWebhookList(TypedDict):
    success: bool
    data: EventWebhookListData


class SecurityWebhook(TypedDict, total=False):
    """A G11 webhook (``/v1/security/webhooks``, secret and API key events)."""
    id: str
    url: str
    events: List[str]
    status: Literal["active", "disabled", "failed"]
    createdAt: str
    updatedAt: str
    lastDeliveryAt: Optional[str]
    deliveryStats: JsonObject
    secret: str


class SecurityWebhookList(TypedDict):
    data: List[SecurityWebhook]
    pagination: CursorPosition
