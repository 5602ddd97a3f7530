/**
 * Every statement a repository of the callback store sends is one of its catalogue
 * (src/callbacks/store/statements.ts), so its text is in a committed snapshot (queries/, checked by
 * test/sql-snapshots.spec.ts): each method is called over a connection that records what it is
 * sent, with stand-in arguments, and every text recorded is looked up.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { STORE_STATEMENTS } from '../src/callbacks/store/statements.js';
import { ROOT } from './support/doc-blocks.js';

type Sent = { repository: string; method: string; text: string };

/** A stand-in for any argument or connection: every property is one, a query is recorded, and it iterates as two of itself. */
function standIn(record: (text: string) => void): unknown {
  const target = function () {};
  const self: unknown = new Proxy(target, {
    get(_t, p) {
      if (p === 'query')
        return (q: string | { text: string }) => (record(typeof q === 'string' ? q : q.text), Promise.resolve(self));
      if (p === 'transaction') return (...a: unknown[]) => (a[a.length - 1] as (m: unknown) => unknown)(self);
      if (p === Symbol.iterator) return () => [self, self][Symbol.iterator]();
      if (p === Symbol.toPrimitive) return (hint: string) => (hint === 'number' ? 0 : '0');
      if (p === 'then') return undefined;
      if (p === 'length') return 1;
      if (typeof p === 'string' && p in Array.prototype)
        return (Array.prototype as unknown as Record<string, unknown>)[p];
      return self;
    },
    apply: () => self,
  });
  return self;
}

const REPLAY_SELECTION = { partnerId: 'p', companyId: 'c', since: new Date(0), until: new Date(0), origin: 'o' };

async function sentByRepositories(): Promise<Sent[]> {
  const sent: Sent[] = [];
  const dir = path.join(ROOT, 'src/callbacks/store');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const mod = (await import(path.join(dir, file))) as Record<string, unknown>;
    for (const [repository, value] of Object.entries(mod)) {
      if (typeof value !== 'function' || !/^class\s/.test(Function.prototype.toString.call(value))) continue;
      const Repository = value as new (...a: unknown[]) => Record<string, (...a: unknown[]) => unknown>;
      for (const method of Object.getOwnPropertyNames(Repository.prototype).filter((n) => n !== 'constructor')) {
        const conn = standIn((text) => sent.push({ repository, method, text: text.trim() }));
        const repo = new Repository(conn, conn);
        const args: unknown[] = Array.from({ length: repo[method].length }, () => conn);
        // A bulk redelivery's text follows its selection: the catalogue holds the one with every condition.
        if (repository === 'ReplayRepository') args[1] = REPLAY_SELECTION;
        try {
          await repo[method](...args);
        } catch {
          // What a stand-in's rows make of the method after its statements were sent does not matter here.
        }
      }
    }
  }
  return sent;
}

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
