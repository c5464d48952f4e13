import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { keyringFrom, keyringFromEnv, MASTER_KEY_FILE, MasterKeyError, readKeyFile } from '../adapters/secrets/master-keyring.ts';
import { createAuditHeadSigner, type AuditHeadSigner, type SignedAuditHead, type StoredAuditHead } from '../core/audit/audit.head.ts';
import type { AuditRepository } from '../core/audit/audit.repository.ts';
import type { AuditOwner } from '../core/audit/audit.types.ts';
import { verifyAuditChains, type AuditChainBreak, type AuditVerification } from '../core/audit/audit.verifier.ts';
import { systemClock } from '../core/clock.ts';
import type { Keyring } from '../core/secrets/envelope.ts';
import { parseCount as parsePositive } from './cli-options.ts';
import { CliError, withStore, type CliIo } from './cli-store.ts';
import type { Config } from './config.ts';

/**
 * `mnemo audit verify` and `mnemo audit head`: the G11 audit chains checked, and their signed heads printed to keep
 * elsewhere (core/audit/audit.head.ts). Both need the server's master key: the heads are signed with a key derived
 * from it.
 */

/** What `mnemo audit head` prints, one JSON line a run, so that `>>` makes a file `--since-head` reads. */
export const AUDIT_HEADS_FILE_FORMAT = 'mnemo-audit-heads-v1';

/** `tenant/mode`, as the audit commands name a chain. */
const chainName = (owner: AuditOwner) => `${owner.tenantId}/${owner.mode}`;

const ROW_REASONS: ReadonlySet<string> = new Set(['missing_rows', 'prev_hash_mismatch', 'hash_mismatch']);

/** The keyring the server signs with, read as the server reads it, but never creating a key file. */
function existingKeyring(config: Pick<Config, 'masterKey' | 'dataDir'>): Keyring {
  try {
    if (config.masterKey !== null) return keyringFromEnv(config.masterKey);
    const file = join(config.dataDir, MASTER_KEY_FILE);
    if (!existsSync(file)) {
      throw new CliError(`no master key: MNEMO_MASTER_KEY is unset and ${file} does not exist (the chains' heads are signed with the server's master key)`);
    }
    return keyringFrom(readKeyFile(config.dataDir).keys);
  } catch (err) {
    if (err instanceof MasterKeyError) throw new CliError(err.message);
    throw err;
  }
}

const headJson = (h: SignedAuditHead) => ({
  tenant: h.owner.tenantId, mode: h.owner.mode, seq: h.seq, hash: h.hash, keyId: h.keyId, signedAt: h.signedAt.toISOString(), mac: h.mac,
});

/** The heads kept in `file` (lines `mnemo audit head` printed); a malformed line is refused, naming it. */
export function readKeptHeads(file: string): SignedAuditHead[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const heads: SignedAuditHead[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim().length === 0) continue;
    const bad = (why: string) => new CliError(`${file}:${i + 1}: ${why}: not a line \`mnemo audit head\` printed`);
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      throw bad('not JSON');
    }
    const d = doc as { format?: unknown; heads?: unknown };
    if (d.format !== AUDIT_HEADS_FILE_FORMAT || !Array.isArray(d.heads)) throw bad(`no "format": "${AUDIT_HEADS_FILE_FORMAT}" with "heads"`);
    for (const raw of d.heads as Record<string, unknown>[]) {
      const { tenant, mode, seq, hash, keyId, signedAt, mac } = raw ?? {};
      const at = typeof signedAt === 'string' ? new Date(signedAt) : null;
      if (typeof tenant !== 'string' || (mode !== 'live' && mode !== 'test') || !Number.isSafeInteger(seq) || (seq as number) < 1
        || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash) || typeof keyId !== 'string' || at === null || Number.isNaN(at.getTime())
        || typeof mac !== 'string' || !/^[0-9a-f]{64}$/.test(mac)) {
        throw bad(`a head is not {tenant, mode, seq, hash, keyId, signedAt, mac}: ${JSON.stringify(raw)}`);
      }
      heads.push({ owner: { tenantId: tenant, mode }, seq: seq as number, hash, keyId, signedAt: at, mac });
    }
  }
  return heads;
}

/** What `mnemo audit verify` prints: a summary, then one line per chain (the broken first). */
function describeVerification(v: AuditVerification, kept: number | null): string {
  const checked = kept === null ? '' : `, ${kept} kept head${kept === 1 ? '' : 's'} checked`;
  const lines = [v.ok
    ? `audit log intact: ${v.rows} rows in ${v.intact.length} chain${v.intact.length === 1 ? '' : 's'}${checked}`
    : `audit log BROKEN: ${v.broken.length} of ${v.broken.length + v.intact.length} chains (${v.rows} rows${checked})`];
  for (const b of v.broken) {
    lines.push(ROW_REASONS.has(b.reason)
      ? `  ${chainName(b.owner)}  broken at row ${b.seq} (${b.id}): ${b.reason}: ${b.message}`
      : `  ${chainName(b.owner)}  ${b.reason}: ${b.message}`);
  }
  for (const c of v.intact) lines.push(`  ${chainName(c.owner)}  ${c.rows} rows  head ${c.headSeq} ${c.headHash}`);
  return `${lines.join('\n')}\n`;
}

const failureOf = (b: AuditChainBreak) => (ROW_REASONS.has(b.reason)
  ? `audit chain ${chainName(b.owner)} is broken at row ${b.seq} (${b.id})`
  : `audit chain ${chainName(b.owner)}: ${b.reason}: ${b.message}`);

/** Every stored head, a page at a time. */
async function allHeads(audit: Pick<AuditRepository, 'heads'>): Promise<StoredAuditHead[]> {
  const all: StoredAuditHead[] = [];
  for (let after: AuditOwner | null = null; ;) {
    const page = await audit.heads(after, 1000);
    all.push(...page);
    if (page.length < 1000) return all;
    after = page.at(-1)!.owner;
  }
}

/** The stored heads whose MAC holds, and a line for each of the others. */
function checkedHeads(heads: StoredAuditHead[], signer: AuditHeadSigner): { good: SignedAuditHead[]; bad: string[] } {
  const good: SignedAuditHead[] = [];
  const bad: string[] = [];
  for (const h of heads) {
    if (h.mac === null) bad.push(`${chainName(h.owner)}: its head is not signed yet (a server start after the upgrade signs it)`);
    else {
      const check = signer.check(h);
      if (check === 'valid') good.push(h);
      else bad.push(`${chainName(h.owner)}: its head ${check === 'forged' ? 'does not verify' : `is signed with ${h.keyId}, which the keyring does not hold`}`);
    }
  }
  return { good, bad };
}

export function registerAuditCommands(program: Command, io: CliIo): void {
  const audit = program.command('audit').description('check the G11 audit log');

  audit.command('verify')
    .description('walk every audit chain (one per tenant and mode) and check each row\'s links and hash, and that the '
      + 'chain\'s signed head (an HMAC under the master key) verifies and names its last row: exit 0 when every chain '
      + 'holds, exit 1 naming the first broken row of each chain that does not (an edited, deleted, inserted or moved '
      + 'row), or what is wrong with its head (rows cut from the end or appended, a chain rewritten or deleted, a head '
      + 'missing or forged)')
    .option('--json', 'print the result as one JSON object {ok, rows, intact: [{owner, rows, headSeq, headHash}], '
      + 'broken: [{owner, seq, id, reason, message, head?}]}')
    .option('--since-head <file>', 'also check the heads kept in FILE (lines printed by `mnemo audit head`): each must '
      + 'verify, and its chain must still reach its seq with the same hash')
    .option('--page-size <rows>', 'rows read at a time', parsePositive, 1000)
    .addHelpText('after', `
Reasons in "broken": missing_rows, prev_hash_mismatch, hash_mismatch (a row); head_missing (rows but no signed head),
head_forged (the head's MAC does not verify, or its key is not in the keyring), truncated (the head, or a kept one,
is past the chain's last row), head_mismatch (the chain's row at the head's seq has another hash: rewritten; or rows
follow the head: appended without the key), chain_missing (a head, or a kept one, whose chain has no rows).

Needs the server's master key (MNEMO_MASTER_KEY or the data directory's master.key). The database alone cannot show
a chain deleted together with its head row, or the database restored from an older copy: keep the output of
\`mnemo audit head\` elsewhere (e.g. from cron: mnemo audit head >> /elsewhere/mnemo-heads.jsonl) and pass that file
to --since-head. Works while the server runs.`)
    .action(async (opts: { json?: boolean; pageSize: number; sinceHead?: string }) => {
      const kept = opts.sinceHead === undefined ? undefined : readKeptHeads(opts.sinceHead);
      const result = await withStore(io, 'existing', (storage, config) => verifyAuditChains(
        storage.audit, createAuditHeadSigner(existingKeyring(config)), { pageSize: opts.pageSize, ...(kept ? { since: kept } : {}) }));
      io.out(opts.json ? `${JSON.stringify(result)}\n` : describeVerification(result, kept?.length ?? null));
      if (!result.ok) {
        throw new CliError(`${failureOf(result.broken[0]!)}${result.broken.length > 1 ? ` and ${result.broken.length - 1} more chain(s)` : ''}`);
      }
    });

  audit.command('head')
    .description('print the signed head of every audit chain (tenant, mode, seq, hash, keyId, signedAt, mac) as one '
      + 'JSON line, to append to a file kept outside the server and its database; `mnemo audit verify --since-head '
      + 'FILE` checks the store against it later. Exit 1 when a head is unsigned or does not verify (it is left out)')
    .addHelpText('after', `
One line: {"format": "${AUDIT_HEADS_FILE_FORMAT}", "at": <now>, "heads": [{tenant, mode, seq, hash, keyId, signedAt,
mac}]}. The MAC is HMAC-SHA256 under a key derived from the master key (docs/api.md, "Audit logs"); a head kept
from before a master-key rotation verifies only while the keyring holds the old key, so take a new one after
\`mnemo keys rotate-master\`. Needs the server's master key. Example (cron, hourly):
  mnemo audit head >> /mnt/elsewhere/mnemo-heads.jsonl`)
    .action(async () => {
      const { good, bad } = await withStore(io, 'existing', async (storage, config) =>
        checkedHeads(await allHeads(storage.audit), createAuditHeadSigner(existingKeyring(config))));
      io.out(`${JSON.stringify({ format: AUDIT_HEADS_FILE_FORMAT, at: systemClock.now().toISOString(), heads: good.map(headJson) })}\n`);
      if (bad.length > 0) {
        for (const line of bad) io.err(`mnemo: ${line}\n`);
        throw new CliError(`${bad.length} head(s) left out: run \`mnemo audit verify\``);
      }
    });
}
