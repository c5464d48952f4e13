"""G11 MCP resources and approvals: ``/v1/security/mcp`` (who may read which secret through MCP, four eyes)."""
from __future__ import annotations

from typing import Dict, Any, Mapping, Optional, Sequence, cast

from ._body import as_list, fields
from ._http import Transport, new_idempotency_key, quote
from .types import McpApproval, McpApprovalList, McpAuditList, McpResource, McpResourceList


class Mcp:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def register_resource(
        self,
        uri: str,
        name: str,
        *,
        description: Optional[str] = None,
        type: Optional[str] = None,
        permissions: Optional[Sequence[str]] = None,
        requires_approval: Optional[bool] = None,
        approvers: Optional[Sequence[str]] = None,
        auto_approve: Optional[Mapping[str, Any]] = None,
        value: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> McpResource:
        """Registers ``svc://secrets/{env}/{name}``, ``svc://api-keys/{id}`` or ``svc://custom/{type}/{id}`` (with
        ``value``); approval is required by default, from one of ``approvers`` (user ids)."""
        body = fields(
            uri=uri, name=name, description=description, type=type, permissions=as_list(permissions),
            requiresApproval=requires_approval, approvers=as_list(approvers),
            autoApprove=dict(auto_approve) if auto_approve is not None else None, value=value,
        )
        return cast(McpResource, self._t.call("POST", "/v1/security/mcp/resources", body=body, headers=_idempotent(idempotency_key)))

    def list_resources(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> McpResourceList:
        query = {"limit": limit, "cursor": cursor}
        return cast(McpResourceList, self._t.call("GET", "/v1/security/mcp/resources", query=query))

    def read_resource(self, uri: str, *, access_token: Optional[str] = None) -> McpResource:
        """The value under ``uri``; a registration that requires approval needs the approved request's
        ``access_token`` (sent as ``X-MCP-Access-Token``)."""
        headers = {"X-MCP-Access-Token": access_token} if access_token else None
        return cast(McpResource, self._t.call("GET", f"/v1/security/mcp/resources/{quote(uri)}", headers=headers))

    def request_approval(
        self,
        resource: str,
        *,
        reason: str,
        operation: Optional[str] = None,
        requested_by: Optional[str] = None,
        ttl: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> McpApproval:
        """Asks to read ``resource``: ``pending`` until an approver answers (``approved`` at once, with its
        ``accessToken``, when the registration auto-approves)."""
        body = fields(resource=resource, reason=reason, operation=operation, requestedBy=requested_by, ttl=ttl)
        return cast(McpApproval, self._t.call("POST", "/v1/security/mcp/approve", body=body, headers=_idempotent(idempotency_key)))

    def respond(
        self,
        approval_id: str,
        action: str,
        *,
        reason: Optional[str] = None,
        approved_by: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> McpApproval:
        """An approver's answer, ``"approve"`` or ``"deny"``; approving returns the ``accessToken`` (only here)."""
        body = fields(action=action, reason=reason, approvedBy=approved_by)
        path = f"/v1/security/mcp/approvals/{quote(approval_id)}/respond"
        return cast(McpApproval, self._t.call("POST", path, body=body, headers=_idempotent(idempotency_key)))

    def get_approval(self, approval_id: str) -> McpApproval:
        return cast(McpApproval, self._t.call("GET", f"/v1/security/mcp/approvals/{quote(approval_id)}"))

    def list_approvals(
        self, *, status: Optional[str] = None, resource: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
    ) -> McpApprovalList:
        query = {"status": status, "resource": resource, "limit": limit, "cursor": cursor}
        return cast(McpApprovalList, self._t.call("GET", "/v1/security/mcp/approvals", query=query))

    def audit(
        self, *, resource: Optional[str] = None, actor: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
    ) -> McpAuditList:
        """The ``mcp.*`` rows of the audit log, newest first (scope ``audit:read``)."""
        query = {"resource": resource, "actor": actor, "limit": limit, "cursor": cursor}
        return cast(McpAuditList, self._t.call("GET", "/v1/security/mcp/audit", query=query))


def _idempotent(idempotency_key: Optional[str]) -> Dict[str, str]:
    return {"Idempotency-Key": idempotency_key or new_idempotency_key()}
