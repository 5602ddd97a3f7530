/**
 * Every statement a repository of the callback store sends is one of its catalogue
 * (src/callbacks/store/statements.ts), so its text is in a committed snapshot (queries/, checked by
 * test/sql-snapshots.spec.ts): each method is called over a connection that records what it is
 * sent, with stand-in arguments, and every text recorded is looked up.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CallbackMessage } from '../src/callbacks/index.js';
import { STORE_STATEMENTS } from '../src/callbacks/store/statements.js';
import { recordingConnection } from '../src/platform/index.js';
import { ROOT } from './support/doc-blocks.js';
import { sources } from './support/source-files.js';

type Sent = { repository: string; method: string; text: string };

const REPLAY_SELECTION = { partnerId: 'p', companyId: 'c', since: new Date(0), until: new Date(0), origin: 'o' };

/** What the classes of these files (from the repository's root) send, each method called with stand-ins. */
async function sentBy(files: string[]): Promise<Sent[]> {
  const sent: Sent[] = [];
  for (const file of files) {
    const mod = (await import(path.join(ROOT, file))) as Record<string, unknown>;
    for (const [repository, value] of Object.entries(mod)) {
      if (typeof value !== 'function' || !/^class\s/.test(Function.prototype.toString.call(value))) continue;
      const Repository = value as new (...a: unknown[]) => Record<string, (...a: unknown[]) => unknown>;
      for (const method of Object.getOwnPropertyNames(Repository.prototype).filter((n) => n !== 'constructor')) {
        const conn = recordingConnection((s) => sent.push({ repository, method, text: s.text }));
        const repo = new Repository(conn, conn);
        const args: unknown[] = Array.from({ length: repo[method].length }, () => conn);
        // A bulk redelivery's text follows its selection: the catalogue holds the one with every condition.
        if (repository === 'ReplayRepository') args[1] = REPLAY_SELECTION;
        // A test callback's target is read by one statement per message: the catalogue shows each.
        if (repository === 'TestTargetRepository' && method === 'latest')
          args[1] = CallbackMessage.LoanPaymentRegistered;
        // A re-sealing statement names a sealed column's table and column (SEALED_COLUMNS).
        if (repository === 'SealedSecretRepository') args.splice(0, 2, 'partners.signing_secret', 'signing_secret');
        // A value as the re-sealing read it.
        if (repository === 'SealedSecretRepository' && method === 'replace') args[2] = { keys: ['k'] };
        try {
          await repo[method](...args);
        } catch {
          // What a stand-in's rows make of the method after its statements were sent does not matter here.
        }
      }
      // A class whose statements run before Nest exists (the start-up's) has static methods.
      const statics = value as unknown as Record<string, (...a: unknown[]) => unknown>;
      for (const method of Object.getOwnPropertyNames(value).filter((n) => typeof statics[n] === 'function')) {
        const conn = recordingConnection((s) => sent.push({ repository, method, text: s.text }));
        const args: unknown[] = Array.from({ length: statics[method].length }, () => conn);
        // The name of a database to create, as its snapshot names it.
        if (method === 'createDatabase') args[1] = 'funding';
        await Promise.resolve(statics[method](...args)).catch(() => undefined);
      }
    }
  }
  return sent;
}

const sentByRepositories = () =>
  sentBy(
    readdirSync(path.join(ROOT, 'src/callbacks/store'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `src/callbacks/store/${f}`),
  );

describe("the callback store's repositories", () => {
  it('send only statements of the catalogue (each in a committed snapshot)', async () => {
    const sent = await sentByRepositories();
    // Each statement, what its transaction runs before it (its planner's settings), and the transaction's bounds.
    const known = new Set([
      ...STORE_STATEMENTS.flatMap((s) => [s.text.trim(), ...(s.setup ? [s.setup] : [])]),
      'BEGIN',
      'COMMIT',
      'ROLLBACK',
    ]);
    expect(sent.length).toBeGreaterThan(40);
    expect(
      sent.filter((s) => !known.has(s.text)).map((s) => `${s.repository}.${s.method}: ${s.text.slice(0, 80)}`),
    ).toEqual([]);
  });
});

/**
 * Statements a method sends only for arguments a stand-in does not give: a variant chosen by what
 * it writes, a tab, a row found or not, a list of events.
 */
const REACHED_BY_ARGUMENTS = [
  'settlement-record+circuit',
  'settlement-record+failures',
  'settlement-record+circuit+failures',
  'settlement-refold+circuit',
  'callbacks-insert',
  'destinations-known',
  'dashboard-page-active',
  'dashboard-page-waiting',
  'dashboard-page-completed',
  'dashboard-page-failed',
  'dashboard-page-delayed',
  'dashboard-job',
  'dashboard-log',
];

describe('the catalogue', () => {
  it('holds statements repository methods send (but those listed as reached by arguments)', async () => {
    const sent = new Set((await sentByRepositories()).map((s) => s.text));
    const unsent = STORE_STATEMENTS.filter((s) => !sent.has(s.text.trim())).map((s) => s.name);
    expect(unsent).toEqual(REACHED_BY_ARGUMENTS);
  });
});

/** Every committed snapshot file's text, each module's (test/sql-snapshots.spec.ts checks they are the code's). */
const SNAPSHOTS = sources('src')
  .filter((f) => path.basename(f) === 'snapshots.ts')
  .flatMap((f) => {
    const dir = path.join(ROOT, readFileSync(path.join(ROOT, f), 'utf8').match(/SNAPSHOT_DIR = '([^']+)'/)![1]);
    return readdirSync(dir).map((s) => readFileSync(path.join(dir, s), 'utf8'));
  })
  .join('\n');

/**
 * Repositories whose statements are built from what they are given, not from stand-ins: each is
 * snapshotted by its module's snapshots.ts calling it with what the code gives it.
 */
const BUILT_FROM_ARGUMENTS = new Set([
  // The one-row statements of an entity's table, from its metadata (src/funding/domain/snapshots.ts).
  'OneRowRepository',
]);

describe('every repository (src/**/*.repository.ts)', () => {
  const files = sources('src').filter((f) => f.endsWith('.repository.ts'));

  it("sends only statements a committed snapshot holds (each module's snapshots.ts calls its methods)", async () => {
    const sent = (await sentBy(files)).filter((s) => !BUILT_FROM_ARGUMENTS.has(s.repository));
    expect(new Set(sent.map((s) => s.repository)).size).toBeGreaterThanOrEqual(5);
    expect(
      sent
        .filter((s) => !SNAPSHOTS.includes(`\n${s.text};\n`))
        .map((s) => `${s.repository}.${s.method}: ${s.text.slice(0, 80)}`),
    ).toEqual([]);
  });

  // Methods that send no statement of their own: a part of another's, or a pass-through to another method.
  const SEND_NONE = new Set([
    'AuditEntryRepository.rowsInsert', // its part is shown in the one-row statement that holds it
    'IdempotencyPruning.prune', // IdempotencyKeyRepository.prune's
  ]);

  it('each have every method in a committed snapshot (a method its snapshot fails to reach shows here)', async () => {
    const missing: string[] = [];
    for (const file of files) {
      const mod = (await import(path.join(ROOT, file))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        if (typeof value !== 'function' || !/^class\s/.test(Function.prototype.toString.call(value))) continue;
        if (BUILT_FROM_ARGUMENTS.has(name)) continue;
        const statics = value as unknown as Record<string, unknown>;
        const methods = [
          ...Object.getOwnPropertyNames((value as { prototype: object }).prototype).filter((n) => n !== 'constructor'),
          ...Object.getOwnPropertyNames(value).filter((n) => typeof statics[n] === 'function'),
        ];
        for (const method of methods.map((m) => `${name}.${m}`))
          if (!SEND_NONE.has(method) && !new RegExp(`^-- ${method}(#\\d+)? \\(`, 'm').test(SNAPSHOTS))
            missing.push(`${file}: ${method}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
