import { createHmac, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ed25519PrivateKey, ed25519PublicKey, newSigningKey, publicKeyText } from './signing-keys.js';
import { signatureHeader, signerFor } from './callback-signature.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_dGhlIG90aGVyIHNlY3JldCBvZiB0aGlzIHBhcnRuZXI=';
const BODY =
  '{"message":0,"withdrawalId":null,"companyId":"5b1f0c4e-4a53-4a8e-9d0e-1a2b3c4d5e6f",' +
  '"limitRequestId":null,"loanId":null}';
/** RFC 8032 section 7.1, TEST 2: the seed, its public key, and its signature of the one byte 0x72 ("r"). */
const RFC8032 = {
  seed: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
  publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
  signature:
    '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da' +
    '085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
};
const RFC_WHSK = `whsk_${Buffer.from(RFC8032.seed, 'hex').toString('base64')}`;
const RFC_WHPK = `whpk_${Buffer.from(RFC8032.publicKey, 'hex').toString('base64')}`;
const sign = (keys: string[], id: string, ts: number, body: string) =>
  signatureHeader(keys.map(signerFor), id, ts, body);

describe('callback signature (Standard Webhooks)', () => {
  it('matches a fixed vector', () => {
    // Computed independently: HMAC-SHA256 keyed by the base64-decoded secret.
    const expected = createHmac('sha256', Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))
      .update(`msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.${BODY}`)
      .digest('base64');
    expect(sign([SECRET], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, BODY)).toBe(`v1,${expected}`);
  });

  it('is the vector of the Standard Webhooks reference', () => {
    // From the Standard Webhooks specification's example.
    expect(sign([SECRET], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verifies with the standardwebhooks package, with either secret during a rotation', () => {
    const ts = Math.floor(Date.now() / 1000);
    const header = sign([OTHER, SECRET], 'cb-1', ts, BODY);
    expect(header.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'cb-1', 'webhook-timestamp': String(ts), 'webhook-signature': header };
    for (const secret of [SECRET, OTHER]) {
      expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    }
    expect(() =>
      new Webhook('whsec_' + Buffer.from('x'.repeat(32)).toString('base64')).verify(BODY, headers),
    ).toThrow();
    expect(() => new Webhook(SECRET).verify(BODY.replace('0', '1'), headers)).toThrow();
  });
});

describe('v1a: Ed25519 signatures', () => {
  it('signs as RFC 8032 says (its test vector 2), and whsk_/whpk_ carry the raw seed and public key', () => {
    expect(signerFor(RFC_WHSK).sign('r')).toBe(`v1a,${Buffer.from(RFC8032.signature, 'hex').toString('base64')}`);
    expect(publicKeyText(ed25519PrivateKey(RFC_WHSK))).toBe(RFC_WHPK);
  });

  it('signs "{id}.{timestamp}.{body}", verifiable with crypto.verify(null, …) and the whpk_ key alone', () => {
    const header = sign([RFC_WHSK], 'cb-7', 1764046800, BODY);
    expect(header).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const signature = Buffer.from(header.slice('v1a,'.length), 'base64');
    expect(verify(null, Buffer.from(`cb-7.1764046800.${BODY}`), ed25519PublicKey(RFC_WHPK), signature)).toBe(true);
    expect(verify(null, Buffer.from(`cb-7.1764046801.${BODY}`), ed25519PublicKey(RFC_WHPK), signature)).toBe(false);
  });

  it('lists both schemes during an overlap, the current key first, each verifiable on its own', () => {
    const fresh = newSigningKey('ed25519');
    const ts = Math.floor(Date.now() / 1000);
    const header = sign([fresh.stored, SECRET], 'cb-8', ts, BODY).split(' ');
    expect(header.map((s) => s.split(',')[0])).toEqual(['v1a', 'v1']);
    expect(
      verify(
        null,
        Buffer.from(`cb-8.${ts}.${BODY}`),
        ed25519PublicKey(fresh.publicKey!),
        Buffer.from(header[0].slice(4), 'base64'),
      ),
    ).toBe(true);
    // A receiver still on its whsec_ secret: the standardwebhooks package finds its v1 in the list.
    const headers = { 'webhook-id': 'cb-8', 'webhook-timestamp': String(ts), 'webhook-signature': header.join(' ') };
    expect(new Webhook(SECRET).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it('makes a new key pair each time: whsk_ (stored) and whpk_ (shown), never the private key shown', () => {
    const a = newSigningKey('ed25519');
    const b = newSigningKey('ed25519');
    expect(a.stored).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
    expect(a.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(a.shown).toEqual({ signingPublicKey: a.publicKey });
    expect(a.publicKey).not.toBe(b.publicKey);
    expect(publicKeyText(ed25519PrivateKey(a.stored))).toBe(a.publicKey);
    expect(newSigningKey('hmac-sha256')).toMatchObject({ publicKey: null, stored: expect.stringMatching(/^whsec_/) });
  });
});
