import { answerText, kindLabel, requestText } from './attempt-exchange.js';

describe("an attempt's page: what it was, what was sent, what came back", () => {
  it.each([
    [{ kind: 'first', scheduleNumber: 1, scheduleAllows: 8 }, 'first attempt'],
    [{ kind: 'retry', scheduleNumber: 3, scheduleAllows: 8 }, 'retry 2 of 7'],
    [
      { kind: 'probe', scheduleNumber: 2, scheduleAllows: 8 },
      'probe of its open destination (attempt 2 of the 8 its schedule allows)',
    ],
    [{ kind: 'redelivery', scheduleNumber: 1, scheduleAllows: 8 }, 'first attempt after a redelivery'],
    [{ kind: 'replay', scheduleNumber: 1, scheduleAllows: 8 }, 'first attempt after a replay'],
    [{ kind: 'test', scheduleNumber: 1, scheduleAllows: 1 }, "a test callback's one attempt"],
    [{ kind: null, scheduleNumber: null, scheduleAllows: null }, null],
  ] as const)('%o reads %p', (stored, label) => expect(kindLabel(stored)).toBe(label));

  it('lists the request headers in the guide’s order, then any other by name', () => {
    const sent = { 'user-agent': 'ua', 'x-b': '2', 'content-type': 'application/json', 'webhook-id': 'id', 'x-a': '1' };
    expect(requestText({ ...sent, 'webhook-signature': 'v1,s', 'webhook-timestamp': '1' })).toBe(
      'webhook-id: id\nwebhook-timestamp: 1\nwebhook-signature: v1,s\n' +
        'content-type: application/json\nuser-agent: ua\nx-a: 1\nx-b: 2',
    );
    expect(requestText(null)).toBeNull();
  });

  it('shows the status line, then the headers as they came; nothing without an answer', () => {
    expect(
      answerText('HTTP/1.1 500 Oops', [
        ['Date', 'x'],
        ['X-Id', '1'],
      ]),
    ).toBe('HTTP/1.1 500 Oops\nDate: x\nX-Id: 1');
    expect(answerText(null, null)).toBeNull();
  });
});
