import { pemBlocks } from './pem.js';

const block = (label: string, body = 'MIIBkTCB+wIJAKHHIG\n/ABCdef0123==') =>
  `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`;
const cert = block('CERTIFICATE');
const key = block('PRIVATE KEY', 'MC4CAQAwBQYDK2VwBCIEI\nAbc+/==');

describe('pemBlocks: PEM blocks and nothing but whitespace around them', () => {
  it('finds each block in order, with its label and text', () => {
    expect(pemBlocks(`${cert}\n${key}\n`)).toEqual([
      { label: 'CERTIFICATE', text: cert },
      { label: 'PRIVATE KEY', text: key },
    ]);
  });

  it('takes whitespace before, between and after, and CRLF line ends', () => {
    expect(pemBlocks(`\n\t  ${cert}\n\n  \n${cert}  \n\n`)).toHaveLength(2);
    const crlf = `${cert}\n${key}\n`.replace(/\n/g, '\r\n');
    expect(pemBlocks(crlf)?.map((b) => b.label)).toEqual(['CERTIFICATE', 'PRIVATE KEY']);
  });

  it.each([
    ['junk before', `subject=CN=x\n${cert}`],
    ['junk between', `${cert}\nissuer=CN=y\n${cert}`],
    ['junk after', `${key}\njunk`],
    ['junk after, on the END line', `${key}junk`],
    ['a lone BEGIN', '-----BEGIN CERTIFICATE-----\nMIIB\n'],
    ['a lone BEGIN before a block', `-----BEGIN CERTIFICATE-----\n${cert}`],
    ['a lone END', `${cert}\n-----END CERTIFICATE-----`],
    ['an END of another label', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END PRIVATE KEY-----'],
    ['headers inside a block', block('RSA PRIVATE KEY', 'Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nMIIB')],
    ['nothing', ''],
    ['whitespace only', ' \r\n\t'],
    ['no PEM at all', 'MIIBkTCB+wIJAKHHIG'],
  ])('refuses %s', (_what, text) => {
    expect(pemBlocks(text)).toBeNull();
  });
});
