import { SecretBox } from '../partners/secret-box.js';
import { newSigningKey } from '../partners/signing-keys.js';
import { SigningKeyCache } from './signing-key-cache.js';

describe('SigningKeyCache', () => {
  const box = new SecretBox(['a-secrets-key-for-the-signing-key-cache-0001']);
  const sealed = (key: string) => box.seal(key, 'partners.signing_secret');

  it('opens and prepares each stored key once, however many callbacks it signs', () => {
    const ed = sealed(newSigningKey('ed25519').stored);
    const hmac = sealed(newSigningKey('hmac-sha256').stored);
    const opened = jest.spyOn(box, 'open');
    const cache = new SigningKeyCache(box);
    const first = cache.signersOf(ed, hmac);
    for (let i = 0; i < 100; i++) expect(cache.signersOf(ed, hmac)).toEqual(first);
    expect(cache.signersOf(hmac, null)).toEqual([first[1]]);
    expect(opened).toHaveBeenCalledTimes(2);
    // A rotated key is another sealed value: opened afresh, never mistaken for the old one.
    const rotated = sealed(newSigningKey('ed25519').stored);
    const [next, previous] = cache.signersOf(rotated, ed);
    expect(next).not.toBe(first[0]);
    expect(previous).toBe(first[0]);
    expect(opened).toHaveBeenCalledTimes(3);
    expect(first[0].sign('x')).toMatch(/^v1a,/);
    expect(first[1].sign('x')).toMatch(/^v1,/);
  });

  it('throws for a key sealed with a SECRETS_KEY it does not list (the callback is then not sent)', () => {
    const stranger = new SecretBox(['a-key-nobody-configured-here-000000000']).seal('whsec_x', 'partners.signing_secret');
    expect(() => new SigningKeyCache(box).signersOf(stranger, null)).toThrow(/SECRETS_KEY does not list/);
  });
});
