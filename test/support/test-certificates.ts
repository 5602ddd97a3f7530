import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requireExecutable } from './processes.js';

export interface Pem {
  certificate: string;
  key: string;
}

/** `openssl ca`'s least configuration: it alone takes a start date (openssl 3.0's x509 does not). */
const CA_CONFIG = `[ca]
default_ca = test
[test]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = anything
[anything]
commonName = supplied
organizationName = optional
`;

/** YYYYMMDDHHMMSSZ, `days` from now. */
const stamp = (days: number) =>
  `${new Date(Date.now() + days * 86_400_000).toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

/**
 * Test CAs and certificates made by `openssl` (Debian's openssl 3) in a temporary folder, never
 * checked in: P-256 keys. `days` may be negative (expired already); `startDays` > 0 makes one that
 * is not valid yet.
 */
export class TestCertificates {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'funding-mtls-'));

  constructor() {
    requireExecutable(
      'openssl',
      'the mutual TLS tests make their certificates with it',
      'apt-get install -y openssl',
      'openssl',
    );
    writeFileSync(path.join(this.dir, 'ca.cnf'), CA_CONFIG);
    writeFileSync(path.join(this.dir, 'index.txt'), '');
    writeFileSync(path.join(this.dir, 'serial'), '1000\n');
  }

  /** A self-signed CA. */
  ca(name: string): Pem {
    this.openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '30',
      '-subj',
      `/O=Test/CN=${name}`,
    );
    return this.read(name);
  }

  /** A certificate for `name` issued by `ca` (made by ca() first), with these X.509 v3 extensions. */
  issue(name: string, ca: string, extensions: string, { days = 30, startDays = 0 } = {}): Pem {
    this.openssl(
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/O=Test/CN=${name}`,
    );
    writeFileSync(path.join(this.dir, `${name}.ext`), `${extensions}\n`);
    const signer = [
      '-cert',
      `${ca}.crt`,
      '-keyfile',
      `${ca}.key`,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    ];
    if (startDays > 0) {
      this.openssl(
        'ca',
        '-batch',
        '-notext',
        '-config',
        'ca.cnf',
        ...signer,
        '-startdate',
        stamp(startDays),
        '-enddate',
        stamp(startDays + days),
      );
    } else {
      this.openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        `${ca}.crt`,
        '-CAkey',
        `${ca}.key`,
        '-CAcreateserial',
        '-days',
        String(days),
        '-out',
        `${name}.crt`,
        '-extfile',
        `${name}.ext`,
      );
    }
    return this.read(name);
  }

  /** A file of the folder (a receiver's certificate and key, its CA). */
  file(name: string): string {
    return path.join(this.dir, name);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private openssl(...args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: 'pipe' });
  }

  private read(name: string): Pem {
    return {
      certificate: readFileSync(this.file(`${name}.crt`), 'utf8'),
      key: readFileSync(this.file(`${name}.key`), 'utf8'),
    };
  }
}
