import { isSealed, keyId, SecretBox } from './secret-box.js';

const OLD = 'old-secrets-key-0123456789abcdefghijkl';
const NEW = 'new-secrets-key-0123456789abcdefghijkl';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYq=';

describe('SecretBox', () => {
  it('seals to ASCII that names the newest key and never contains the plain value', () => {
    const sealed = new SecretBox([NEW, OLD]).seal(SECRET, 'partners.signing_secret');
    expect(sealed).toMatch(new RegExp(`^enc1:${keyId(NEW)}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain('MfKQ9r8');
    expect(isSealed(sealed)).toBe(true);
  });

  it('seals the same value differently each time (random IV)', () => {
    const box = new SecretBox([NEW]);
    expect(box.seal(SECRET, 'partners.signing_secret')).not.toBe(box.seal(SECRET, 'partners.signing_secret'));
  });

  it('opens a value sealed with an older key still listed, and reports it as not current', () => {
    const sealedOld = new SecretBox([OLD]).seal(SECRET, 'partners.signing_secret');
    const ring = new SecretBox([NEW, OLD]);
    expect(ring.open(sealedOld, 'partners.signing_secret')).toBe(SECRET);
    expect(ring.isCurrent(sealedOld)).toBe(false);
    expect(ring.isCurrent(ring.seal(SECRET, 'partners.signing_secret'))).toBe(true);
  });

  it('refuses a value sealed with a key no longer listed, naming only the key id', () => {
    const sealedOld = new SecretBox([OLD]).seal(SECRET, 'partners.signing_secret');
    expect(() => new SecretBox([NEW]).open(sealedOld, 'partners.signing_secret')).toThrow(`sealed with key ${keyId(OLD)}, which SECRETS_KEY does not list`);
  });

  it('refuses a value moved to another column or tampered with', () => {
    const box = new SecretBox([NEW]);
    const sealed = box.seal(SECRET, 'partners.signing_secret');
    expect(() => box.open(sealed, 'idempotency_keys.response')).toThrow();
    // One character of the ciphertext changed (the second-to-last: fully significant in base64url).
    const at = sealed.length - 2;
    const flipped = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
    expect(flipped).not.toBe(sealed);
    expect(() => new SecretBox([NEW]).open(flipped, 'partners.signing_secret')).toThrow();
  });

  it('returns a value written before encryption as it is', () => {
    expect(new SecretBox([NEW]).open(SECRET, 'partners.signing_secret')).toBe(SECRET);
    expect(isSealed(SECRET)).toBe(false);
  });

  it('round-trips any text, including lone surrogates escaped by JSON', () => {
    const box = new SecretBox([NEW]);
    const text = JSON.stringify({ a: '\ud800', b: 'é', c: '\u0000' });
    expect(box.open(box.seal(text, 'idempotency_keys.response'), 'idempotency_keys.response')).toBe(text);
  });
});
