import { parseBasic } from './operator-credentials.js';

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

describe('parseBasic', () => {
  it('splits at the first colon: the name holds none, the token may', () => {
    expect(parseBasic(basic('alice:fso_abc'))).toEqual({ name: 'alice', token: 'fso_abc' });
    expect(parseBasic(basic('admin:to:ken'))).toEqual({ name: 'admin', token: 'to:ken' });
    expect(parseBasic(`basic   ${Buffer.from('bob:t').toString('base64')}  `)).toEqual({ name: 'bob', token: 't' });
  });

  it('refuses anything else: no name, no colon, not Basic, not base64', () => {
    for (const header of [
      undefined,
      '',
      basic(':token'),
      basic('nocolon'),
      'Bearer abc',
      'Basic',
      'Basic !!!',
      `Basic ${basic('a:b')}`,
    ]) {
      expect(parseBasic(header)).toBeNull();
    }
  });
});
