import { SecretBox } from '../platform/crypto/secret-box.js';
import { newSigningKey } from '../platform/crypto/signing-keys.js';
import { SigningKeyCache } from './signing-key-cache.js';

describe('SigningKeyCache', () => {
  const box = new SecretBox(['a-secrets-key-for-the-signing-key-cache-0001']);
  const PARTNER = '5b0c9e21-6a7d-4e3f-8c1b-2d4e6f8a0b13';
  const sealed = (key: string) => box.seal(key, 'partners.signing_secret', PARTNER);

  it('opens and prepares each stored key once, however many callbacks it signs', () => {
    const ed = sealed(newSigningKey('ed25519').stored);
    const hmac = sealed(newSigningKey('hmac-sha256').stored);
    const opened = jest.spyOn(box, 'open');
    const cache = new SigningKeyCache(box);
    const first = cache.signersOf(PARTNER, ed, hmac);
    for (let i = 0; i < 100; i++) expect(cache.signersOf(PARTNER, ed, hmac)).toEqual(first);
    expect(cache.signersOf(PARTNER, hmac, null)).toEqual([first[1]]);
    expect(opened).toHaveBeenCalledTimes(2);
    // A rotated key is another sealed value: opened afresh, never mistaken for the old one.
    const rotated = sealed(newSigningKey('ed25519').stored);
    const [next, previous] = cache.signersOf(PARTNER, rotated, ed);
    expect(next).not.toBe(first[0]);
    expect(previous).toBe(first[0]);
    expect(opened).toHaveBeenCalledTimes(3);
    expect(first[0].sign('x')).toMatch(/^v1a,/);
    expect(first[1].sign('x')).toMatch(/^v1,/);
  });

  it('throws for a key sealed with a SECRETS_KEY it does not list (the callback is then not sent)', () => {
    const stranger = new SecretBox(['a-key-nobody-configured-here-000000000']).seal(
      'whsec_x',
      'partners.signing_secret',
      PARTNER,
    );
    expect(() => new SigningKeyCache(box).signersOf(PARTNER, stranger, null)).toThrow(/SECRETS_KEY does not list/);
  });

  it("throws for a partner's key copied to another partner, even once kept for its own", () => {
    const key = sealed(newSigningKey('hmac-sha256').stored);
    const cache = new SigningKeyCache(box);
    expect(cache.signersOf(PARTNER, key, null)).toHaveLength(1);
    const victim = '8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968';
    expect(() => cache.signersOf(victim, key, null)).toThrow(/does not open/);
    // Rotated since: the copy, now its previous key, is left out; its new key signs alone.
    const own = box.seal(newSigningKey('hmac-sha256').stored, 'partners.signing_secret', victim);
    expect(cache.signersOf(victim, own, key)).toHaveLength(1);
  });
});
