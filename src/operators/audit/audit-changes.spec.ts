import { changedProperties, rowChangesAudit, trackedValues } from './audit-changes.js';

describe('changedProperties', () => {
  it('keeps only the properties whose values differ, on each side', () => {
    expect(
      changedProperties(
        { creditLimit: '0.00', creditStatus: 'pending', repaymentTermDays: 30 },
        { creditLimit: '5000.00', creditStatus: 'pending', repaymentTermDays: 30 },
      ),
    ).toEqual({
      before: { creditLimit: '0.00' },
      after: { creditLimit: '5000.00' },
    });
  });

  it('is empty on both sides when nothing changed, and keeps a property present on one side only', () => {
    expect(changedProperties({ a: 1 }, { a: 1 })).toEqual({ before: {}, after: {} });
    expect(changedProperties({}, { revokedAt: '2026-11-25T00:00:00.000Z' })).toEqual({
      before: {},
      after: { revokedAt: '2026-11-25T00:00:00.000Z' },
    });
    expect(changedProperties({ loanId: null }, { loanId: 'x' })).toEqual({
      before: { loanId: null },
      after: { loanId: 'x' },
    });
  });
});

describe('trackedValues', () => {
  it('shows money as its decimal string and times as ISO-8601', () => {
    expect(
      trackedValues({
        creditLimit: 500050n,
        at: new Date('2026-11-25T10:00:00Z'),
        status: 'active',
        days: 30,
        none: null,
      }),
    ).toEqual({
      creditLimit: '5000.50',
      at: '2026-11-25T10:00:00.000Z',
      status: 'active',
      days: 30,
      none: null,
    });
  });
});

describe('rowChangesAudit', () => {
  it("puts the target row's changes at the top and every other row's under its name", () => {
    expect(
      rowChangesAudit('lr', [
        { table: 'limit_requests', id: 'lr', before: { status: 'pending' }, after: { status: 'approved' } },
        {
          table: 'companies',
          id: 'c',
          before: { creditLimit: 0n, creditStatus: 'pending' },
          after: { creditLimit: 500000n, creditStatus: 'active' },
        },
      ]),
    ).toEqual({
      before: { status: 'pending', company: { creditLimit: '0.00', creditStatus: 'pending' } },
      after: { status: 'approved', company: { creditLimit: '5000.00', creditStatus: 'active' } },
    });
  });
});
