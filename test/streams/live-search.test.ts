import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogs, describeLogLines, ERROR_LEVEL } from '../support/log-capture.ts';
import { bearer, g1Http, openWs, startLiveApp, type LiveApp, type WsClient } from './support.ts';

describe('G4 WebSocket /v1/search/live', () => {
  let t: LiveApp;
  let key: string;
  const sockets: WsClient[] = [];
  const connect = async (query = '', headers: Record<string, string> = bearer(key)) => {
    const ws = await openWs(`${t.wsUrl}/v1/search/live${query}`, headers);
    sockets.push(ws);
    return ws;
  };
  const subscribe = async (ws: WsClient, message: Record<string, unknown>) => {
    ws.send({ type: 'subscribe', ...message });
    return ws.waitFor((m) => m.type === 'subscribed' && m.query === message.query);
  };

  beforeEach(async () => {
    t = await startLiveApp();
    key = await t.key();
  });
  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.close();
    await t.close();
  });

  it('pushes new_result for new and updated memories that match, nothing for others, nothing after unsubscribe', async () => {
    const ws = await connect();
    const sub = await subscribe(ws, { query: 'deploy pipeline rollback', filters: { tags: ['ops'] } });
    expect(sub).toMatchObject({ type: 'subscribed', subscription_id: expect.stringMatching(/^sub_/), query: 'deploy pipeline rollback', threshold: 0.7 });

    const api = g1Http(t.url, key);
    const match = await api.create({ title: 'Deploy rollback', content: 'How to roll back a failed deploy pipeline', tags: ['ops'], metadata: { env: 'prod' } });
    const hit = await ws.waitFor((m) => m.type === 'new_result');
    expect(hit).toEqual({
      type: 'new_result', subscription_id: sub.subscription_id, change: 'created',
      memory: {
        id: match.id, title: 'Deploy rollback', content_preview: 'How to roll back a failed deploy pipeline', tags: ['ops'],
        metadata: { env: 'prod' }, created_at: match.created_at,
      },
      similarity_score: expect.any(Number),
    });
    expect(hit.similarity_score).toBeGreaterThanOrEqual(0.7);

    // Unrelated text, and related text without the tag: nothing. An update that makes a memory match: a result.
    const lunch = await api.create({ title: 'Lunch', content: 'Sandwich shop on the corner has good soup', tags: ['ops'] });
    await api.create({ title: 'Deploy rollback', content: 'How to roll back a failed deploy pipeline', tags: ['food'] });
    await api.update(lunch.id as string, { title: 'Deploy pipeline rollback', content: 'Roll back a failed deploy pipeline' });
    const updated = await ws.waitFor((m) => m.type === 'new_result' && m.memory.id === lunch.id);
    expect(updated).toMatchObject({ change: 'updated', memory: { title: 'Deploy pipeline rollback', created_at: lunch.created_at } });
    expect(ws.messages.filter((m) => m.type === 'new_result')).toHaveLength(2);

    ws.send({ type: 'unsubscribe', subscription_id: sub.subscription_id });
    expect(await ws.waitFor((m) => m.type === 'unsubscribed')).toMatchObject({ subscription_id: sub.subscription_id });
    await api.create({ title: 'Deploy rollback again', content: 'How to roll back a failed deploy pipeline', tags: ['ops'] });
    // Positive control: a new subscription, and a memory written after that one, which it matches. Matches come in
    // the order of the writes, so a result of the dropped subscription would have come first.
    ws.send({ type: 'subscribe', query: 'deploy pipeline' });
    const control = await ws.waitFor((m) => m.type === 'subscribed' && m.subscription_id !== sub.subscription_id);
    const later = await api.create({ title: 'Deploy pipeline notes', content: 'Notes on the deploy pipeline' });
    await ws.waitFor((m) => m.type === 'new_result' && m.subscription_id === control.subscription_id && m.memory.id === later.id);
    expect(ws.messages.filter((m) => m.type === 'new_result' && m.subscription_id === sub.subscription_id)).toHaveLength(2);
  });

  it('keeps several subscriptions apart and honours each threshold', async () => {
    const ws = await connect();
    const deploy = await subscribe(ws, { query: 'deploy pipeline' });
    const soup = await subscribe(ws, { query: 'soup sandwich lunch', threshold: 0.6 });
    const strict = await subscribe(ws, { query: 'deploy pipeline', threshold: 1 });
    const api = g1Http(t.url, key);
    await api.create({ title: 'Lunch', content: 'Sandwich shop on the corner has good soup' });
    await api.create({ title: 'Deploy', content: 'Run the deploy pipeline' });
    await ws.waitFor((m) => m.type === 'new_result' && m.subscription_id === deploy.subscription_id);
    await ws.waitFor((m) => m.type === 'new_result' && m.subscription_id === soup.subscription_id);
    // Positive control: a later memory that only `deploy` matches arrives; anything else would have come before it.
    const later = await api.create({ title: 'Deploy again', content: 'Run the deploy pipeline once more' });
    await ws.waitFor((m) => m.type === 'new_result' && m.memory.id === later.id);
    const results = ws.messages.filter((m) => m.type === 'new_result');
    expect(results.map((m) => `${m.subscription_id === deploy.subscription_id ? 'deploy' : m.subscription_id === soup.subscription_id ? 'soup' : 'strict'}:${m.memory.title}`).sort())
      .toEqual(['deploy:Deploy', 'deploy:Deploy again', 'soup:Lunch']);
    expect(strict.subscription_id).toBeDefined();

    ws.send({ type: 'unsubscribe' });
    expect(await ws.waitFor((m) => m.type === 'unsubscribed')).toMatchObject({ subscription_ids: expect.arrayContaining([deploy.subscription_id, soup.subscription_id, strict.subscription_id]) });
  });

  it('only sees memories of its own tenant, mode and workspace', async () => {
    const ws = await connect('', { ...bearer(key), 'x-workspace-id': 'team-a' });
    await subscribe(ws, { query: 'deploy pipeline' });
    await g1Http(t.url, await t.key({ tenant: 'globex' }), { 'x-workspace-id': 'team-a' }).create({ title: 'Deploy', content: 'deploy pipeline' });
    await g1Http(t.url, key).create({ title: 'Deploy', content: 'deploy pipeline' });
    await g1Http(t.url, await t.key({ mode: 'test' }), { 'x-workspace-id': 'team-a' }).create({ title: 'Deploy', content: 'deploy pipeline' });
    const mine = await g1Http(t.url, key, { 'x-workspace-id': 'team-a' }).create({ title: 'Deploy', content: 'deploy pipeline' });
    // `mine`, written last, is the positive control: results come in the order of the writes.
    await ws.waitFor((m) => m.type === 'new_result' && m.memory.id === mine.id);
    expect(ws.messages.filter((m) => m.type === 'new_result').map((m) => m.memory.id)).toEqual([mine.id]);

  });

  it('answers bad messages with an error and keeps the socket open', async () => {
    const ws = await connect();
    ws.send('not json');
    expect(await ws.waitFor((m) => m.type === 'error')).toMatchObject({ code: 'INVALID_MESSAGE' });
    ws.send({ type: 'dance' });
    expect(await ws.waitFor((m) => m.code === 'UNKNOWN_TYPE')).toMatchObject({ type: 'error' });
    ws.send({ type: 'subscribe', query: '  ' });
    await ws.waitFor((m) => m.code === 'INVALID_QUERY');
    ws.send({ type: 'subscribe', query: 'x', threshold: 3 });
    await ws.waitFor((m) => m.code === 'SIMILARITY_THRESHOLD_INVALID');
    ws.send({ type: 'subscribe', query: 'x', filters: { tags: 'a,b' } });
    await ws.waitFor((m) => m.type === 'subscribed');
    ws.send({ type: 'subscribe', query: 'x', filters: { tags: [1] } });
    await ws.waitFor((m) => m.code === 'INVALID_FILTER');
    ws.send({ type: 'unsubscribe', subscription_id: 'sub_nope' });
    await ws.waitFor((m) => m.code === 'SUBSCRIPTION_NOT_FOUND');
    for (let i = 0; i < 10; i++) ws.send({ type: 'subscribe', query: `q${i}` });
    await ws.waitFor((m) => m.code === 'TOO_MANY_SUBSCRIPTIONS');
    expect(ws.messages.filter((m) => m.type === 'subscribed')).toHaveLength(10);
    expect(ws.socket.readyState).toBe(ws.socket.OPEN);
  });

  it('closes a message over 64 KiB with 1009 (here and on the G7 analytics socket), logged at info without a stack: the client\'s mistake', async () => {
    await t.close();
    const logs = captureLogs('info');
    t = await startLiveApp({}, {}, logs.server);
    key = await t.key();
    for (const path of ['/v1/search/live', '/api/v1/analytics/stream']) {
      const ws = await openWs(`${t.wsUrl}${path}`, bearer(key));
      sockets.push(ws);
      ws.socket.send('x'.repeat(64 * 1024 + 1));
      expect(await ws.closed, path).toMatchObject({ code: 1009 });
    }
    expect(describeLogLines(logs.atLeast(ERROR_LEVEL))).toBe('');
    const refused = logs.lines.filter((l) => l.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH');
    expect(refused).toHaveLength(2);
    for (const line of refused) expect(line).toMatchObject({ level: 30, reason: 'Max payload size exceeded' });
    expect(JSON.stringify(refused)).not.toContain('    at ');
  });

  it('accepts the key as access_token (browsers) and closes with 1008 on bad credentials', async () => {
    const viaQuery = await connect(`?access_token=${key}`, {});
    await subscribe(viaQuery, { query: 'deploy pipeline' });

    for (const [query, headers] of [['', {}], ['?access_token=mnemo_live_wrong', {}], ['', bearer('mnemo_live_wrong')]] as const) {
      const ws = await connect(query, headers);
      expect(await ws.closed).toMatchObject({ code: 1008 });
      expect(ws.messages[0]).toMatchObject({ type: 'error', code: 'UNAUTHORIZED' });
    }
    const noScope = await connect('', bearer(await t.key({ scopes: ['memories:write'] })));
    expect(await noScope.closed).toMatchObject({ code: 1008 });
    expect(noScope.messages[0]).toMatchObject({ code: 'PERMISSION_DENIED' });
  });

  it('closes with 1008 when the key is revoked, and with 1001 when the server stops', async () => {
    await t.close();
    t = await startLiveApp({ realtime: { timeUnitMs: 10, keyCheckSeconds: 5 } });
    const { record, key: k } = await t.container.apiKeys.create({ tenantId: 'acme', userId: 'u', tier: 'pro', mode: 'live' });
    const revoked = await connect('', bearer(k));
    const staying = await connect('', bearer(await t.key()));
    await t.container.apiKeys.revoke(record.id);
    expect(await revoked.closed).toMatchObject({ code: 1008 });
    expect(revoked.messages.at(-1)).toMatchObject({ type: 'error', code: 'AUTH_ERROR' });
    await t.close();
    expect(await staying.closed).toMatchObject({ code: 1001 });
    t = await startLiveApp();
  });

  it('counts toward the key\'s 5 stream connections', async () => {
    for (let i = 0; i < 5; i++) await connect();
    const sixth = await connect();
    expect(await sixth.closed).toMatchObject({ code: 1013 });
    expect(sixth.messages[0]).toMatchObject({ type: 'error', code: 'RATE_LIMITED', retry_after: 60000 });
  });

  it('answers a plain GET with 426 in the G4 envelope', async () => {
    const res = await fetch(`${t.url}/v1/search/live`, { headers: bearer(key) });
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ success: false, error: { code: 'UPGRADE_REQUIRED' }, meta: { request_id: expect.any(String) } });
  });
});
