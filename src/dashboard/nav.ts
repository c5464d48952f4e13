/**
 * The dashboard's navigation: one entry a line, in the order shown. A page names its entry's `id` as its section
 * (`viewer.chrome('memories')`), which marks the link as the current page.
 */
export const NAV = [
  { id: 'overview', label: 'Overview', path: '' },
  { id: 'approvals', label: 'Approvals', path: '/approvals' },
  { id: 'reviews', label: 'Reviews', path: '/reviews' },
  { id: 'memories', label: 'Memories', path: '/memories' },
  { id: 'analytics', label: 'Analytics', path: '/analytics' },
  { id: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { id: 'secrets', label: 'Secrets', path: '/secrets' },
  { id: 'audit', label: 'Audit', path: '/audit' },
  { id: 'api-keys', label: 'API keys', path: '/api-keys' },
  { id: 'mcp-resources', label: 'MCP resources', path: '/mcp-resources' },
  { id: 'connected-apps', label: 'Connected apps', path: '/connected-apps' },
] as const;

export type Section = (typeof NAV)[number]['id'];
