/**
 * Each module owns the tables it writes (docs/architecture.md, "Modules"): SQL in a module's files
 * names that module's tables only; another module's table is read through that module's face.
 * Read from the source: a table is named where a statement's FROM, JOIN, INTO, UPDATE, TABLE or
 * USING is followed by it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support/doc-blocks.js';
import { sources } from './support/source-files.js';

/** Every table the migrations leave, by the module that owns it. */
const OWNER: Record<string, string> = {
  callbacks: 'callbacks',
  callback_attempts: 'callbacks',
  destinations: 'callbacks',
  operational_events: 'callbacks',
  failure_notices: 'callbacks',
  delivery_workers: 'callbacks',
  companies: 'funding',
  limit_requests: 'funding',
  withdrawal_requests: 'funding',
  loans: 'funding',
  loan_payments: 'funding',
  partners: 'partners',
  partner_client_certificates: 'partners',
  portal_links: 'partners',
  portal_sessions: 'partners',
  operators: 'operators',
  audit_entries: 'operators',
  retired_bootstrap_tokens: 'operators',
  idempotency_keys: 'platform',
};

/** Tables a migration made and a later one dropped. */
const RETIRED = ['callback_destinations', 'origin_states'];

/**
 * The crossings still in the code, each a file and the foreign table it names, with why it stays
 * for now. A new crossing fails the test; so does one listed here that the code no longer has.
 */
const KNOWN_CROSSINGS: Record<string, string> = {
  // The delivery load reads the partner's signing key and certificate with the callback, in one
  // statement on the delivery path (its plan is checked: changing its text means re-checking it).
  'src/callbacks/store/delivery-load.ts partners': 'delivery path',
  'src/callbacks/store/delivery-load.ts partner_client_certificates': 'delivery path',
  // The operational events' statements address them to the partner's Operations URL.
  'src/callbacks/store/operational-events.ts partners': 'events join their partner',
  // The dashboard and the open-destinations gauge show each destination's partner by name.
  'src/callbacks/store/dashboard-reads.ts partners': "shows the partner's name",
  'src/callbacks/store/destination-summaries.ts partners': "gauge labelled by the partner's name",
  // Portal links and sessions opened by an operator end when the operator is revoked.
  'src/partners/portal-link.repository.ts operators': 'revoked operator',
  'src/partners/portal-session.repository.ts operators': 'revoked operator',
};

const NAMED = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE|USING)\s+"?([a-z_]+)"?/g;

/** Each table a text's SQL names. */
export const tablesNamed = (text: string): Set<string> =>
  new Set([...text.matchAll(NAMED)].map((m) => m[1]).filter((t) => t in OWNER || RETIRED.includes(t)));

describe('the tables each module owns', () => {
  const files = sources('src').filter((f) => /^src\/[^/]+\//.test(f) && !f.includes('/migrations/'));

  it("has SQL in a module name that module's tables only (another's through its face)", () => {
    const crossings = files.flatMap((f) => {
      const module = f.split('/')[1];
      return [...tablesNamed(readFileSync(path.join(ROOT, f), 'utf8'))]
        .filter((t) => OWNER[t] !== module)
        .map((t) => `${f} ${t}`);
    });
    expect(crossings.filter((c) => !(c in KNOWN_CROSSINGS))).toEqual([]);
    expect(Object.keys(KNOWN_CROSSINGS).filter((c) => !crossings.includes(c))).toEqual([]);
  });

  it('knows the owner of every table the migrations make', () => {
    const made = sources('src/platform/database/migrations').flatMap((f) =>
      [...readFileSync(path.join(ROOT, f), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_]+)/g)].map(
        (m) => m[1],
      ),
    );
    expect(made.length).toBeGreaterThan(0);
    expect([...new Set(made)].filter((t) => !(t in OWNER) && !RETIRED.includes(t))).toEqual([]);
  });

  it('sees a table named in a statement, and not in a sentence', () => {
    expect([...tablesNamed('SELECT 1 FROM partners p JOIN companies c ON c.partner_id = p.id')]).toEqual([
      'partners',
      'companies',
    ]);
    expect([...tablesNamed('UPDATE loans SET x = 1')]).toEqual(['loans']);
    expect([...tablesNamed('reads from companies and partners')]).toEqual([]);
  });
});
