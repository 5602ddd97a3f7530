import { assertJsonDepth, bodyProblem, isStorableText, parseJsonBody } from './json-body.js';
import { redactSecrets } from '../logging/redacting-logger.js';

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
  it.each(
    (
      [
        ['plain', true],
        ['é 漢字 😀', true],
        ['\u0000', false],
        ['a\u0000b', false],
        ['\ud800', false],
        ['x\udc00', false],
        ['\ud83d\ude00', true],
        ['\ude00\ud83d', false],
      ] as [string, boolean][]
    ).map(([s, ok]) => [JSON.stringify(s), s, ok] as const),
  )('%s → %p', (_label, s, ok) => {
    expect(isStorableText(s)).toBe(ok);
  });

  it.each<[unknown, string | null]>([
    [{ name: 'ok', n: 1, b: null, list: [[{ é: '😀' }]] }, null],
    [{ name: 'a\u0000' }, 'name'],
    [{ a: { b: ['x', '\ud800'] } }, 'a.b[1]'],
    [[{ a: [[0, '\u0000']] }], '[0].a[0][1]'],
    [{ ['k\u0000']: 'v' }, 'a property name'],
    [{ a: { ['\ud800']: 1 } }, 'a property name in a'],
    ['\u0000', 'body'],
  ])('%j → %p', (value, path) => {
    expect(bodyProblem(value)).toBe(path === null ? null : `${path} must be valid Unicode text without NUL characters`);
  });

  it('names a property called __proto__ or constructor at any depth', () => {
    expect(bodyProblem({ a: [{ constructor: 1 }] })).toBe('property a[0].constructor should not exist');
    expect(bodyProblem(JSON.parse('{"__proto__":{}}'))).toBe('property __proto__ should not exist');
    expect(bodyProblem({ constructors: 1, proto: 2 })).toBeNull();
  });
});

describe('redactSecrets', () => {
  it.each([
    ['signing secret', 'secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw= leaked', 'secret whsec_[redacted] leaked'],
    [
      'Ed25519 signing key',
      'key whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A= leaked',
      'key whsk_[redacted] leaked',
    ],
    [
      'PEM private key',
      'body {"privateKey":"-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n-----END EC PRIVATE KEY-----"}',
      'body {"privateKey":"-----BEGIN EC PRIVATE KEY-----[redacted]"}',
    ],
    [
      'PEM private key cut short',
      'key -----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMG',
      'key -----BEGIN PRIVATE KEY-----[redacted]',
    ],
    ['API key', 'key fsk_abc-DEF_123 there', 'key fsk_[redacted] there'],
    ['sealed value', 'param enc1:0123abcd:AbC-_x9 end', 'param enc1:[redacted] end'],
    ['sealed value bound to its row', 'param enc2:0123abcd:AbC-_x9 end', 'param enc2:[redacted] end'],
    ['bearer token', 'Authorization: Bearer test-admin-token-0123', 'Authorization: Bearer [redacted]'],
    ['basic credentials', 'authorization: basic YWRtaW46eA==', 'authorization: basic [redacted]'],
    [
      'a URL query string',
      'invalid URL: https://acme.example/hook?token=s3cret&x=1#top',
      'invalid URL: https://acme.example/hook?[redacted]#top',
    ],
    [
      'a URL without a query',
      'circuit opened for https://acme.example:8443',
      'circuit opened for https://acme.example:8443',
    ],
    ['nothing secret', 'callback 42 delivered', 'callback 42 delivered'],
  ])('%s', (_label, text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });
});

describe('parseJsonBody (the bytes of an application/json body)', () => {
  const json = 'application/json';
  const refusal = (text: string | Buffer, type = json) => {
    try {
      parseJsonBody(Buffer.isBuffer(text) ? text : Buffer.from(text), type);
    } catch (e) {
      return (e as { getResponse(): { message: string[] } }).getResponse().message[0];
    }
    return null;
  };

  it.each<[string, string, string]>([
    [
      '__proto__ at the top',
      '{"name":"x","__proto__":{"admin":true}}',
      'Request body must not contain a __proto__ or constructor.prototype property',
    ],
    [
      '__proto__ deeper in',
      '{"extra":[{"__proto__":{}}]}',
      'Request body must not contain a __proto__ or constructor.prototype property',
    ],
    [
      'constructor.prototype',
      '{"constructor":{"prototype":{"admin":true}}}',
      'Request body must not contain a __proto__ or constructor.prototype property',
    ],
    ['a constructor property', '{"name":"x","constructor":1}', 'property constructor should not exist'],
    [
      'a constructor property deeper in',
      '{"extra":{"a":[{"constructor":"x"}]}}',
      'property extra.a[0].constructor should not exist',
    ],
    ['a bare string', '"x"', 'Request body is not valid JSON'],
    ['a bare number', ' 1', 'Request body is not valid JSON'],
    ['null', 'null', 'Request body is not valid JSON'],
    ['broken JSON', '{"a":', 'Request body is not valid JSON'],
    ['a NUL', '{"a":"\\u0000"}', 'a must be valid Unicode text without NUL characters'],
  ])('%s → 400: %s', (_label, text, message) => {
    expect(refusal(text)).toBe(message);
  });

  it.each([['application/json; charset=latin1'], ['application/json; charset="utf-16"']])(
    '%s → 400: not UTF-8',
    (type) => {
      expect(refusal('{"a":1}', type)).toBe('Request body must be JSON in UTF-8');
    },
  );

  it('reads UTF-8 (any spelling), a byte-order mark, and an empty body as an empty object', () => {
    expect(parseJsonBody(Buffer.from('{"a":"é"}'), 'application/json; charset=UTF-8')).toEqual({ a: 'é' });
    expect(parseJsonBody(Buffer.from('{"a":1}'), 'application/json;charset=utf8')).toEqual({ a: 1 });
    expect(parseJsonBody(Buffer.from('\ufeff{"a":1}'), json)).toEqual({ a: 1 });
    expect(parseJsonBody(Buffer.alloc(0), json)).toEqual({});
    expect(parseJsonBody(Buffer.from(' [1]'), json)).toEqual([1]);
  });

  it('refuses bytes that are not UTF-8 and deep nesting before parsing', () => {
    expect(refusal(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]))).toBe('Request body is not valid UTF-8');
    expect(refusal(`${'['.repeat(33)}${']'.repeat(33)}`)).toBe('Request body nests JSON deeper than 32 levels');
  });
});
