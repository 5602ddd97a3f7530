/**
 * The callback store's statements against the lifecycle table (src/callbacks/callback-lifecycle.ts):
 * each statement that writes a callback's status makes only the transitions the table names it for,
 * and a callback becomes `failed` by the table's one event, `fail`.
 */
import { CALLBACK_TRANSITIONS, LifeState, permits } from '../src/callbacks/callback-lifecycle.js';
import { EVENT_WRITES, FATE_STATUSES, LifeEvent, set, settle, Writes } from '../src/callbacks/store/lifecycle.js';
import { STORE_STATEMENTS } from '../src/callbacks/store/statements.js';

const STATUS = /'(pending|sending|delivered|failed)'/g;

/**
 * The statuses a statement writes: the literals an assignment `SET … status = …` gives (`same`
 * for `THEN c.status`, `input` for a status the statement takes from its parameters), and those an
 * INSERT INTO callbacks gives its rows.
 */
function statusesWritten(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:\bSET\s+|,\s*)status\s*=\s*(CASE\b[\s\S]*?\bEND\b|'\w+'|[\w.$]+)/g)) {
    const expr = m[1];
    const branches = expr.startsWith('CASE')
      ? [...expr.matchAll(/\bWHEN\s+([\s\S]*?)\s+THEN\s+('\w+'|[\w.$]+)|\bELSE\s+('\w+'|[\w.$]+)/g)].map((r) => ({
          when: r[1] ?? '',
          result: r[2] ?? r[3],
        }))
      : [{ when: '', result: expr }];
    for (const { when, result } of branches) {
      // `WHEN status = 'sending' THEN 'sending'` keeps the status, as `THEN c.status` does.
      const keeps = /^(c\.)?status$/.test(result) || new RegExp(`^(c\\.)?status = ${result}$`).test(when);
      out.add(keeps ? 'same' : result.startsWith("'") ? result.slice(1, -1) : 'input');
    }
  }
  for (const m of text.matchAll(/INSERT INTO callbacks \(([^)]*)\)([\s\S]*?)(?=\n\s*\)|\n\s*RETURNING|$)/g)) {
    if (!/\bstatus\b/.test(m[1])) continue;
    for (const s of m[2].matchAll(STATUS)) out.add(s[1]);
  }
  return out;
}

/** An event's SQL, a builder's with `$1` for what it takes (settlement's with the fate of its input row `s`). */
function sqlOf(event: LifeEvent): string {
  const writes = EVENT_WRITES[event];
  if (writes === null) return '';
  if (writes === settle) return settle((column) => `s.${column}`);
  return set(typeof writes === 'function' ? (writes as (sql: string) => Writes)('$1') : writes);
}

const byStatement = (name: string) => CALLBACK_TRANSITIONS.filter((t) => t.statements.includes(name));

describe('the lifecycle table of a callback', () => {
  const writers = STORE_STATEMENTS.map((s) => ({ name: s.name, written: statusesWritten(s.text) })).filter(
    (s) => s.written.size > 0,
  );

  it('reads the statuses a statement writes', () => {
    expect([
      ...statusesWritten(
        `UPDATE callbacks SET status = CASE WHEN url_removed_at IS NULL THEN 'pending' ELSE 'failed' END, x = 1 WHERE status = 'sending'`,
      ),
    ]).toEqual(['pending', 'failed']);
    expect([
      ...statusesWritten(
        `UPDATE callbacks c SET a = 1,\n status = CASE WHEN c.status = 'sending' THEN c.status ELSE 'failed' END`,
      ),
    ]).toEqual(['same', 'failed']);
    expect([
      ...statusesWritten(
        `UPDATE callbacks SET status = CASE WHEN status = 'sending' THEN 'sending' ELSE 'pending' END`,
      ),
    ]).toEqual(['same', 'pending']);
    expect([...statusesWritten(`INSERT INTO callbacks (id, status) SELECT id, 'pending' FROM x WHERE y\n  )`)]).toEqual(
      ['pending'],
    );
    expect(writers.map((w) => w.name)).toEqual(
      expect.arrayContaining([
        'admission-admit',
        'admission-expire',
        'settlement-record',
        'url-remove',
        'callbacks-insert',
      ]),
    );
  });

  it('names every statement that writes a status, and only statements the store has', () => {
    expect(writers.filter((w) => byStatement(w.name).length === 0).map((w) => w.name)).toEqual([]);
    const names = new Set(STORE_STATEMENTS.map((s) => s.name));
    expect(CALLBACK_TRANSITIONS.flatMap((t) => t.statements).filter((n) => !names.has(n))).toEqual([]);
  });

  it("has each statement write only the statuses of the transitions that name it (settlement's come from settle-attempt.ts's fates)", () => {
    const wrong = writers.flatMap((w) => {
      const ts = byStatement(w.name);
      const allowed = new Set<string>(ts.flatMap((t) => (t.to === 'same' ? [] : t.to.map(String))));
      if (w.written.has('input')) ['delivered', 'pending', 'failed'].forEach((s) => w.written.add(s));
      // `same` is no change of status: the table lists such rows for what else they write.
      return [...w.written]
        .filter((s) => s !== 'input' && s !== 'same' && !allowed.has(s))
        .map((s) => `${w.name} writes ${s}`);
    });
    expect(wrong).toEqual([]);
  });

  it('makes a callback failed by one event, fail, each with its reason', () => {
    const toFailed = CALLBACK_TRANSITIONS.filter((t) => t.to !== 'same' && t.to.includes('failed'));
    expect(toFailed.filter((t) => t.event !== 'fail' || !t.reason)).toEqual([]);
    const failing = writers.filter((w) => w.written.has('failed')).map((w) => w.name);
    expect(failing.filter((n) => !byStatement(n).some((t) => t.event === 'fail'))).toEqual([]);
  });

  it("has the SQL of each of its events in the store's lifecycle, and SQL of no other event", () => {
    expect(Object.keys(EVENT_WRITES).sort()).toEqual([...new Set(CALLBACK_TRANSITIONS.map((t) => t.event))].sort());
  });

  it("writes, for each event, the statuses the table's rows of that event go to (settlement's from the fates of settle-attempt.ts)", () => {
    const wrong = (Object.keys(EVENT_WRITES) as LifeEvent[]).flatMap((event) => {
      const writes = EVENT_WRITES[event];
      const written = statusesWritten(`UPDATE callbacks SET ${sqlOf(event)}`);
      if (written.delete('input')) FATE_STATUSES.forEach((f) => written.add(f));
      written.delete('same');
      const rows = CALLBACK_TRANSITIONS.filter((t) => t.event === event);
      const to = new Set(
        rows.flatMap((t) => (t.to === 'same' ? [] : t.to.filter((x): x is NonNullable<LifeState> => x !== null))),
      );
      // A status the event keeps (due now: pending stays pending) need not be written.
      const kept = (st: string) =>
        rows.some((t) => t.to !== 'same' && t.to.every((x) => t.from.includes(x)) && t.to.includes(st as never));
      const settles = writes === settle;
      return [
        ...[...written]
          .filter((st) => !to.has(st as never) && !settles)
          .map((st) => `${event} writes ${st}, which none of its rows goes to`),
        ...[...to]
          .filter((st) => !written.has(st) && !kept(st))
          .map((st) => `${event} goes to ${st}, which its SQL does not write`),
      ];
    });
    expect(wrong).toEqual([]);
  });

  it('permits the changes it lists and no other', () => {
    const yes: [LifeState, LifeState][] = [
      [null, 'pending'],
      ['pending', 'sending'],
      ['sending', 'delivered'],
      ['failed', 'pending'],
      ['delivered', null],
      ['failed', 'delivered'],
    ];
    const no: [LifeState, LifeState][] = [
      ['delivered', 'failed'],
      ['failed', 'sending'],
      ['delivered', 'sending'],
      [null, 'sending'],
      ['pending', null],
    ];
    expect(yes.filter(([a, b]) => !permits(a, b))).toEqual([]);
    expect(no.filter(([a, b]) => permits(a, b))).toEqual([]);
  });
});
