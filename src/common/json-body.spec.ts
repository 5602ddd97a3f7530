import { assertJsonDepth, findUnstorableText, isStorableText } from './json-body.js';
import { redactSecrets } from './redacting-logger.js';

describe('assertJsonDepth (on the bytes, before parsing)', () => {
  it.each<[string, string, boolean]>([
    ['flat object', '{"a":1}', true],
    ['32 levels', `${'['.repeat(32)}${']'.repeat(32)}`, true],
    ['33 levels', `${'['.repeat(33)}${']'.repeat(33)}`, false],
    ['brackets inside strings do not count', `{"a":"${'['.repeat(100)}"}`, true],
    ['an escaped quote does not end the string', `{"a":"\\"${'{'.repeat(100)}"}`, true],
    ['an escaped backslash before the closing quote', `{"a":"\\\\",${'"b":{'.repeat(33)}1${'}'.repeat(33)}}`, false],
    ['siblings do not add up', `[${'[[]],'.repeat(100)}[]]`, true],
  ])('%s → %p', (_label, text, ok) => {
    const run = () => assertJsonDepth(Buffer.from(text));
    if (ok) expect(run).not.toThrow();
    else expect(run).toThrow('Request body nests JSON deeper than 32 levels');
  });
});

describe('storable text', () => {
  it.each(([
    ['plain', true],
    ['é 漢字 😀', true],
    ['\u0000', false],
    ['a\u0000b', false],
    ['\ud800', false],
    ['x\udc00', false],
    ['\ud83d\ude00', true],
    ['\ude00\ud83d', false],
  ] as [string, boolean][]).map(([s, ok]) => [JSON.stringify(s), s, ok] as const))('%s → %p', (_label, s, ok) => {
    expect(isStorableText(s)).toBe(ok);
  });

  it.each<[unknown, string | null]>([
    [{ name: 'ok', n: 1, b: null }, null],
    [{ name: 'a\u0000' }, 'name'],
    [{ a: { b: ['x', '\ud800'] } }, 'a.b[1]'],
    [{ ['k\u0000']: 'v' }, 'a property name'],
    [{ a: { ['\ud800']: 1 } }, 'a property name in a'],
    ['\u0000', 'body'],
  ])('%j → %p', (value, path) => {
    expect(findUnstorableText(value)).toBe(path);
  });
});

describe('redactSecrets', () => {
  it.each([
    ['signing secret', 'secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw= leaked', 'secret whsec_[redacted] leaked'],
    ['API key', 'key fsk_abc-DEF_123 there', 'key fsk_[redacted] there'],
    ['sealed value', 'param enc1:0123abcd:AbC-_x9 end', 'param enc1:[redacted] end'],
    ['bearer token', 'Authorization: Bearer test-admin-token-0123', 'Authorization: Bearer [redacted]'],
    ['basic credentials', 'authorization: basic YWRtaW46eA==', 'authorization: basic [redacted]'],
    ['nothing secret', 'callback 42 delivered', 'callback 42 delivered'],
  ])('%s', (_label, text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });
});
