import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeader } from './callback-signature.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_dGhlIG90aGVyIHNlY3JldCBvZiB0aGlzIHBhcnRuZXI=';
const BODY = '{"message":0,"withdrawalId":null,"companyId":"5b1f0c4e-4a53-4a8e-9d0e-1a2b3c4d5e6f","limitRequestId":null,"loanId":null}';

describe('callback signature (Standard Webhooks)', () => {
  it('matches a fixed vector', () => {
    // Computed independently: HMAC-SHA256 keyed by the base64-decoded secret.
    const expected = createHmac('sha256', Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))
      .update(`msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.${BODY}`)
      .digest('base64');
    expect(signatureHeader([SECRET], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, BODY)).toBe(`v1,${expected}`);
  });

  it('is the vector of the Standard Webhooks reference', () => {
    // From the Standard Webhooks specification's example.
    expect(signatureHeader([SECRET], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verifies with the standardwebhooks package, with either secret during a rotation', () => {
    const ts = Math.floor(Date.now() / 1000);
    const header = signatureHeader([OTHER, SECRET], 'cb-1', ts, BODY);
    expect(header.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'cb-1', 'webhook-timestamp': String(ts), 'webhook-signature': header };
    for (const secret of [SECRET, OTHER]) {
      expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    }
    expect(() => new Webhook('whsec_' + Buffer.from('x'.repeat(32)).toString('base64')).verify(BODY, headers)).toThrow();
    expect(() => new Webhook(SECRET).verify(BODY.replace('0', '1'), headers)).toThrow();
  });
});
