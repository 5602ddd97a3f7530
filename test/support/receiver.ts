import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remoteAddress: string | undefined;
}

export type Answer = (hit: Received, req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real partner endpoint on 127.0.0.1 that records every request; the answer is per test. */
export class Receiver {
  readonly hits: Received[] = [];
  answer: Answer = (_h, _req, res) => res.writeHead(204).end();
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit: Received = {
        at: Date.now(),
        path: req.url ?? '',
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remoteAddress: req.socket.remoteAddress,
      };
      this.hits.push(hit);
      this.answer(hit, req, res);
    });
  });
  port = 0;

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string): Received[] {
    return this.hits.filter((h) => h.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Standard Webhooks headers as the standardwebhooks package wants them. */
export function webhookHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  return {
    'webhook-id': String(h['webhook-id']),
    'webhook-timestamp': String(h['webhook-timestamp']),
    'webhook-signature': String(h['webhook-signature']),
  };
}
