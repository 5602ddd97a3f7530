import { buildCallbackBody, CallbackMessage } from './callback-message.js';
import { CALLBACK_MESSAGES, OPERATIONAL_EVENTS, readNextText } from './event-catalogue.js';
import { OPERATIONAL_EVENT_TYPES } from './operational-events/operational-event.js';

/** The keys of a callback body, in the contract's order (API §5, "The request"). */
const FIVE_KEYS = ['message', 'withdrawalId', 'companyId', 'limitRequestId', 'loanId'];

/** The ids each message sets (API §5, "When one is created"); the others are null. */
const IDS_SET: Record<CallbackMessage, string[]> = {
  [CallbackMessage.CreditLimitUpdated]: ['companyId'],
  [CallbackMessage.WithdrawalRequestStatusChanged]: ['withdrawalId', 'companyId', 'loanId'],
  [CallbackMessage.CreditBalanceUpdated]: ['companyId'],
  [CallbackMessage.LimitRequestStatusChanged]: ['companyId', 'limitRequestId'],
  [CallbackMessage.LoanPaymentRegistered]: ['withdrawalId', 'companyId', 'loanId'],
};

describe('the event catalogue', () => {
  it('lists every message once, in code order, named as the specification names it', () => {
    expect(CALLBACK_MESSAGES.map((e) => [e.code, e.name])).toEqual([0, 1, 2, 3, 4].map((c) => [c, CallbackMessage[c]]));
  });

  it.each(CALLBACK_MESSAGES.map((e) => [e.code, e] as const))(
    'message %s: its example is the five keys in order, as the body builder writes them',
    (code, e) => {
      expect(Object.keys(e.example)).toEqual(FIVE_KEYS);
      expect(e.example.message).toBe(code);
      const { message, ...ids } = e.example;
      expect(JSON.stringify(e.example)).toBe(buildCallbackBody(message, ids));
      const set = Object.entries(ids)
        .filter(([, v]) => v !== null)
        .map(([k]) => k);
      expect(set).toEqual(IDS_SET[code]);
    },
  );

  it('names a read for every message, per variant where the paths differ', () => {
    for (const e of CALLBACK_MESSAGES) {
      for (const variant of ['A', 'B'] as const)
        expect(readNextText(e, variant)).toMatch(/^GET \/v1\/companies\/\{companyId\}/);
    }
    const withdrawal = CALLBACK_MESSAGES[CallbackMessage.WithdrawalRequestStatusChanged];
    expect(readNextText(withdrawal, 'A')).toBe('GET /v1/companies/{companyId}/withdrawal-requests/{withdrawalId}');
    expect(readNextText(withdrawal, 'B')).toBe('GET /v1/companies/{companyId}/withdrawal/{withdrawalId}');
    expect(readNextText(CALLBACK_MESSAGES[0], 'A')).not.toContain('/terms');
  });

  it('lists every operational event once, its data described key for key as its example carries them', () => {
    expect(OPERATIONAL_EVENTS.map((e) => e.type)).toEqual([...OPERATIONAL_EVENT_TYPES]);
    for (const e of OPERATIONAL_EVENTS) {
      expect(Object.keys(e.example)).toEqual(['type', 'timestamp', 'data']);
      expect(e.example.type).toBe(e.type);
      expect(Object.keys(e.example.data)).toEqual(Object.keys(e.data));
      expect(new Date(e.example.timestamp).toISOString()).toBe(e.example.timestamp);
    }
  });
});
