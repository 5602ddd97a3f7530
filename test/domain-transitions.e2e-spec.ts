import { DomainError } from '../src/platform/http/domain-error.js';
import { ErrorCode } from '../src/platform/http/error-codes.js';
import { companyOfRow, DomainTransitions, StatusChangeSpec } from '../src/funding/domain/domain-transitions.js';
import { LimitRequest } from '../src/funding/limit-requests/limit-request.entity.js';
import { LIMIT_REQUEST } from '../src/funding/limit-requests/limit-request-rules.js';
import { LimitRequestStatus } from '../src/funding/limit-requests/limit-request-status.js';
import { harness, Partner, TestApp } from './support/harness.js';

/** The transition template itself (DomainTransitions), driven directly inside a transaction. */
describe('the domain transition template', () => {
  let t: TestApp;
  let p: Partner;

  const e2e = harness();
  beforeAll(() => ({ t, p } = e2e));

  /** A company with a callback URL and a pending limit request of 500.00 with one. */
  async function pendingRequest(): Promise<{ c: string; l: string }> {
    const c = (
      await t
        .as(p.apiKey, 'post', '/v1/companies', { name: 'T', status_callback: 'https://company.example/cb' })
        .expect(201)
    ).body.id as string;
    const l = (
      await t
        .as(p.apiKey, 'post', `/v1/companies/${c}/limit-requests`, {
          amount: '500',
          status_callback: 'https://limit.example/cb',
        })
        .expect(201)
    ).body.id as string;
    return { c, l };
  }
  const run = (spec: StatusChangeSpec<LimitRequest, LimitRequestStatus>) =>
    t.app.get(DomainTransitions).transaction((m) => t.app.get(DomainTransitions).apply(m, spec));
  const messagesOf = async (c: string) =>
    (await t.sql<{ message: number }>('SELECT message FROM callbacks WHERE company_id = $1 ORDER BY seq', [c])).map(
      (r) => r.message,
    );
  const companyRow = async (c: string) =>
    (
      await t.sql<{ name: string; credit_limit: string; credit_status: string }>(
        'SELECT name, credit_limit, credit_status FROM companies WHERE id = $1',
        [c],
      )
    )[0];
  const statusOf = async (l: string) =>
    (await t.sql<{ status: string }>('SELECT status FROM limit_requests WHERE id = $1', [l]))[0].status;

  it('returns, row by row, the tracked properties it changed before and after, and records own, then company callbacks', async () => {
    const { c, l } = await pendingRequest();
    const { changes } = await run({
      resource: LIMIT_REQUEST,
      id: l,
      company: companyOfRow,
      to: 'approved',
      effects: (r, { company }) => {
        company.creditLimit = r.amount;
        company.creditStatus = 'active';
      },
    });
    expect(changes).toEqual([
      {
        table: 'companies',
        id: c,
        before: { creditLimit: 0n, creditStatus: 'pending' },
        after: { creditLimit: 50000n, creditStatus: 'active' },
      },
      { table: 'limit_requests', id: l, before: { status: 'pending' }, after: { status: 'approved' } },
    ]);
    expect(await statusOf(l)).toBe('approved');
    expect(await companyRow(c)).toMatchObject({ credit_limit: '500.00', credit_status: 'active' });
    expect(await messagesOf(c)).toEqual([3, 0, 2]);
  });

  it('writes back only rows whose tracked properties changed', async () => {
    const { c, l } = await pendingRequest();
    const { changes } = await run({
      resource: LIMIT_REQUEST,
      id: l,
      company: companyOfRow,
      to: 'rejected',
      effects: (_r, { company }) => {
        company.name = 'an untracked edit, not written';
      },
    });
    expect(changes).toEqual([
      { table: 'limit_requests', id: l, before: { status: 'pending' }, after: { status: 'rejected' } },
    ]);
    expect((await companyRow(c)).name).toBe('T');
    expect(await messagesOf(c)).toEqual([3]);
  });

  it('checks the state machine before any effect, and a refusal by an effect writes nothing', async () => {
    const { c, l } = await pendingRequest();
    let effects = 0;
    const illegal = run({
      resource: LIMIT_REQUEST,
      id: l,
      company: companyOfRow,
      to: 'pending',
      effects: () => void effects++,
    });
    await expect(illegal).rejects.toMatchObject({
      kind: 'conflict',
      code: ErrorCode.status_transition_not_allowed,
      message: 'Limit request cannot become pending: its current status is pending',
    });
    expect(effects).toBe(0);

    const refused = run({
      resource: LIMIT_REQUEST,
      id: l,
      company: companyOfRow,
      to: 'approved',
      effects: (_r, { company }) => {
        company.creditLimit = 1n;
        throw new DomainError('rule', ErrorCode.credit_limit_below_borrowed, 'refused');
      },
    });
    await expect(refused).rejects.toBeInstanceOf(DomainError);
    expect(await statusOf(l)).toBe('pending');
    expect(await companyRow(c)).toMatchObject({ credit_limit: '0.00', credit_status: 'pending' });
    expect(await messagesOf(c)).toEqual([]);
  });
});
