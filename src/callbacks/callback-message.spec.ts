import { creditMessages, CreditSnapshot } from '../funding/domain/credit.js';
import { buildCallbackBody, CallbackMessage } from './callback-message.js';

const C = '5b1f0c4e-4a53-4a8e-9d0e-1a2b3c4d5e6f';
const W = '0d6f6b8a-8f7e-4a57-9a3a-2b3c4d5e6f70';
const L = '9e8d7c6b-5a49-4382-a716-151413121110';
const N = '11111111-2222-4333-8444-555555555555';

describe('callback body', () => {
  it.each([
    [
      CallbackMessage.CreditLimitUpdated,
      { withdrawalId: null, companyId: C, limitRequestId: null, loanId: null },
      `{"message":0,"withdrawalId":null,"companyId":"${C}","limitRequestId":null,"loanId":null}`,
    ],
    [
      CallbackMessage.WithdrawalRequestStatusChanged,
      { withdrawalId: W, companyId: C, limitRequestId: null, loanId: N },
      `{"message":1,"withdrawalId":"${W}","companyId":"${C}","limitRequestId":null,"loanId":"${N}"}`,
    ],
    [
      CallbackMessage.CreditBalanceUpdated,
      { withdrawalId: null, companyId: C, limitRequestId: null, loanId: null },
      `{"message":2,"withdrawalId":null,"companyId":"${C}","limitRequestId":null,"loanId":null}`,
    ],
    [
      CallbackMessage.LimitRequestStatusChanged,
      { withdrawalId: null, companyId: C, limitRequestId: L, loanId: null },
      `{"message":3,"withdrawalId":null,"companyId":"${C}","limitRequestId":"${L}","loanId":null}`,
    ],
    [
      CallbackMessage.LoanPaymentRegistered,
      { withdrawalId: W, companyId: C, limitRequestId: null, loanId: N },
      `{"message":4,"withdrawalId":"${W}","companyId":"${C}","limitRequestId":null,"loanId":"${N}"}`,
    ],
  ])('message %s has exactly five keys in the contract order', (message, ids, expected) => {
    expect(buildCallbackBody(message, ids)).toBe(expected);
  });

  it('names the codes as the specification does', () => {
    expect([0, 1, 2, 3, 4].map((c) => CallbackMessage[c])).toEqual([
      'CreditLimitUpdated',
      'WithdrawalRequestStatusChanged',
      'CreditBalanceUpdated',
      'LimitRequestStatusChanged',
      'LoanPaymentRegistered',
    ]);
  });
});

describe('which company messages a credit change calls for', () => {
  const base: CreditSnapshot = {
    creditLimit: 100000n,
    creditStatus: 'active',
    borrowedAmount: 20000n,
    annualInterestRate: '7.50',
    repaymentTermDays: 30,
  };
  it.each<[string, Partial<CreditSnapshot>, CallbackMessage[]]>([
    ['nothing changed', {}, []],
    ['same rate written differently', { annualInterestRate: '7.5' }, []],
    ['limit raised', { creditLimit: 150000n }, [0, 2]],
    ['status suspended', { creditStatus: 'suspended' }, [0]],
    ['rate changed', { annualInterestRate: '8.00' }, [0]],
    ['term changed', { repaymentTermDays: 60 }, [0]],
    ['borrowed more (pay-out)', { borrowedAmount: 30000n }, [2]],
    ['limit and borrowed moved together, balance equal', { creditLimit: 110000n, borrowedAmount: 30000n }, [0]],
  ])('%s → %j', (_, change, expected) => {
    expect(creditMessages(base, { ...base, ...change })).toEqual(expected);
  });
});
