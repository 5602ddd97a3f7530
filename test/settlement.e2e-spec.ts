import { Logger } from '@nestjs/common';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, harness, Partner, TestApp, until } from './support/harness.js';

/** Settlement never loops: a record PostgreSQL keeps refusing is lost, and the others go on. */
describe('settlement of a record PostgreSQL refuses', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;

  const e2e = harness();
  beforeAll(() => ({ t, p, rx } = e2e));

  it('an attempt whose callback was deleted while in flight is counted as lost, named in the log, and other callbacks still settle', async () => {
    let answerSlow = () => {};
    const slowAnswered = new Promise<void>((resolve) => (answerSlow = resolve));
    rx.answer = (h, _req, res) =>
      h.path === '/slow' ? void slowAnswered.then(() => res.writeHead(204).end()) : res.writeHead(204).end();
    const errors = jest.spyOn(Logger.prototype, 'error');
    try {
      const slow = await companyWithCallback(t, p, rx.url('/slow'));
      const gone = await slow.change();
      await until(() => rx.on('/slow').length === 1, { what: 'the slow attempt in flight' });
      // Its record now violates callback_attempts' foreign key, with or without the answer's text.
      await t.sql('DELETE FROM callbacks WHERE id = $1', [gone]);
      answerSlow();

      // Settled after the refused one, by the same process (one settlement batch at a time).
      const fast = await companyWithCallback(t, p, rx.url('/fast'));
      for (let i = 0; i < 3; i++) await fast.change();
      await until(async () => (await fast.statuses()).every((s) => s === 'delivered'), {
        timeoutMs: 15_000,
        what: 'the other callbacks settled',
      });

      const lost = errors.mock.calls.filter(([m]) => String(m).includes(gone));
      expect(lost).toHaveLength(1);
      expect(String(lost[0][0])).toMatch(/not recorded.*left to its lease/);
      const metrics = (await t.http().get('/metrics').expect(200)).text;
      expect(metrics).toMatch(/^funding_callback_record_failures_total\{stage="single"\} 1$/m);
      expect(metrics).toMatch(/^funding_callback_record_failures_total\{stage="lost"\} 1$/m);
      expect(rx.on('/slow')).toHaveLength(1);
    } finally {
      errors.mockRestore();
    }
  });
});
