import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SecureVersion } from 'node:tls';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { requireExecutable } from './processes.js';
import type { TestCertificates } from './test-certificates.js';

/** One request the receiver answered: the client certificate's CN it was made with. */
export interface TlsHit {
  path: string;
  client: string | null;
  headers: Record<string, string>;
  body: string;
}

/**
 * An https receiver on 127.0.0.1 that requires a client certificate issued by `clientCa` and
 * serves `cert` (files of a TestCertificates folder): tls-receiver.py, whose handshake sends the
 * alerts a refused certificate gets from a real TLS terminator. Answers every POST 204.
 */
export class TlsReceiver {
  readonly hits: TlsHit[] = [];
  port = 0;

  private constructor(private readonly child: ChildProcess) {}

  static async start(cert: string, key: string, clientCa: string): Promise<TlsReceiver> {
    requireExecutable(
      'python3',
      "the mutual TLS tests' receiver is a Python https server (its handshake sends TLS alerts)",
      'apt-get install -y python3',
      'python3',
    );
    const child = spawn('python3', [path.join(__dirname, 'tls-receiver.py'), cert, key, clientCa], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const receiver = new TlsReceiver(child);
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`tls-receiver.py exited with ${code}`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as { port?: number } & TlsHit;
        if (message.port) {
          receiver.port = message.port;
          resolve();
        } else receiver.hits.push(message);
      });
    });
    return receiver;
  }

  url(p: string): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  on(p: string): TlsHit[] {
    return this.hits.filter((h) => h.path === p);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/**
 * Node's own https server on 127.0.0.1, serving `receiver.crt` of `certs` and requiring a client
 * certificate issued by `clientCa`: it refuses any other by closing the connection with no alert
 * — in TLS 1.3 after the client's handshake is over, in TLS 1.2 within it. Answers 204 to a
 * certificate it accepts; `hits` are the paths it answered.
 */
export class NodeTlsReceiver {
  readonly hits: string[] = [];

  private constructor(private readonly server: https.Server) {}

  static async start(certs: TestCertificates, clientCa: string, maxVersion: SecureVersion): Promise<NodeTlsReceiver> {
    const options = {
      key: readFileSync(certs.file('receiver.key')),
      cert: readFileSync(certs.file('receiver.crt')),
      ca: clientCa,
      requestCert: true,
      rejectUnauthorized: true,
      maxVersion,
    };
    const receiver = new NodeTlsReceiver(
      https.createServer(options, (req, res) => (receiver.hits.push(req.url!), res.writeHead(204).end())),
    );
    await new Promise<void>((res) => receiver.server.listen(0, '127.0.0.1', res));
    return receiver;
  }

  url = (p: string): string => `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${p}`;

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((res) => this.server.close(() => res()));
  }
}
