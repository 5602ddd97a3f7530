import { isSealed, keyId, SealBroken, SecretBox } from './secret-box.js';

const OLD = 'old-secrets-key-0123456789abcdefghijkl';
const NEW = 'new-secrets-key-0123456789abcdefghijkl';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYq=';
const ROW = '7c1e4a52-0b8e-4c1f-9a1d-3f2b6d0e5a11';
const OTHER_ROW = '0d2f5b63-1c9f-4d20-8b2e-4a3c7e1f6b22';

describe('SecretBox', () => {
  it('seals to ASCII that names the newest key and never contains the plain value', () => {
    const sealed = new SecretBox([NEW, OLD]).seal(SECRET, 'partners.signing_secret', ROW);
    expect(sealed).toMatch(new RegExp(`^enc2:${keyId(NEW)}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain('MfKQ9r8');
    expect(isSealed(sealed)).toBe(true);
  });

  it('seals the same value differently each time (random IV)', () => {
    const box = new SecretBox([NEW]);
    expect(box.seal(SECRET, 'partners.signing_secret', ROW)).not.toBe(box.seal(SECRET, 'partners.signing_secret', ROW));
  });

  it('opens a value sealed with an older key still listed, and reports it as not current', () => {
    const sealedOld = new SecretBox([OLD]).seal(SECRET, 'partners.signing_secret', ROW);
    const ring = new SecretBox([NEW, OLD]);
    expect(ring.open(sealedOld, 'partners.signing_secret', ROW)).toBe(SECRET);
    expect(ring.isCurrent(sealedOld)).toBe(false);
    expect(ring.isCurrent(ring.seal(SECRET, 'partners.signing_secret', ROW))).toBe(true);
  });

  it('refuses a value sealed with a key no longer listed, naming only the key id', () => {
    const sealedOld = new SecretBox([OLD]).seal(SECRET, 'partners.signing_secret', ROW);
    expect(() => new SecretBox([NEW]).open(sealedOld, 'partners.signing_secret', ROW)).toThrow(
      `sealed with key ${keyId(OLD)}, which SECRETS_KEY does not list`,
    );
  });

  it("refuses a value moved to another row, naming that row, never the value; the row's own still opens", () => {
    const box = new SecretBox([NEW]);
    const sealed = box.seal(SECRET, 'partners.signing_secret', ROW);
    expect(() => box.open(sealed, 'partners.signing_secret', OTHER_ROW)).toThrow(SealBroken);
    expect(() => box.open(sealed, 'partners.signing_secret', OTHER_ROW)).toThrow(
      `partners.signing_secret of row "${OTHER_ROW}" does not open: ` +
        'it was sealed for another row or column, or altered',
    );
    // Opened (and kept) for its own row first: the copy is still refused, not served from memory.
    expect(box.open(sealed, 'partners.signing_secret', ROW)).toBe(SECRET);
    expect(() => box.open(sealed, 'partners.signing_secret', OTHER_ROW)).toThrow(SealBroken);
    // Row ids are not concatenated: no split of "a b" and "c" meets another's.
    const idem = box.seal(SECRET, 'idempotency_keys.response', 'operator:1 a');
    expect(() => box.open(idem, 'idempotency_keys.response', 'operator:1 a ')).toThrow(SealBroken);
  });

  it('refuses a value moved to another column or tampered with', () => {
    const box = new SecretBox([NEW]);
    const sealed = box.seal(SECRET, 'partners.signing_secret', ROW);
    expect(() => box.open(sealed, 'partner_client_certificates.private_key', ROW)).toThrow(SealBroken);
    // One character of the ciphertext changed (the second-to-last: fully significant in base64url).
    const at = sealed.length - 2;
    const flipped = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
    expect(flipped).not.toBe(sealed);
    expect(() => new SecretBox([NEW]).open(flipped, 'partners.signing_secret', ROW)).toThrow(SealBroken);
  });

  it('opens the form bound to the column only (enc1) for the migration alone', () => {
    const box = new SecretBox([NEW]);
    const unbound = box.sealUnbound(SECRET, 'partners.client_key');
    expect(unbound).toMatch(new RegExp(`^enc1:${keyId(NEW)}:`));
    expect(isSealed(unbound)).toBe(true);
    expect(box.openUnbound(unbound, 'partners.client_key')).toBe(SECRET);
    expect(() => box.openUnbound(unbound, 'partners.signing_secret')).toThrow(SealBroken);
    expect(() => box.open(unbound, 'partner_client_certificates.private_key', ROW)).toThrow(/not bound to its row/);
  });

  it('returns a value written before encryption as it is', () => {
    expect(new SecretBox([NEW]).open(SECRET, 'partners.signing_secret', ROW)).toBe(SECRET);
    expect(isSealed(SECRET)).toBe(false);
  });

  it('round-trips any text, including lone surrogates escaped by JSON', () => {
    const box = new SecretBox([NEW]);
    const text = JSON.stringify({ a: '\ud800', b: 'é', c: '\u0000' });
    expect(box.open(box.seal(text, 'idempotency_keys.response', 'p k'), 'idempotency_keys.response', 'p k')).toBe(text);
  });
});
