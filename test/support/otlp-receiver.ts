import http from 'node:http';
import { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carries it, with its resource's and scope's names flattened in. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  status: { code?: number; message?: string };
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
/** An OTLP/JSON trace export, as far as the tests read it. */
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
  }[];
}
interface OtlpSpan extends Pick<ReceivedSpan, 'traceId' | 'spanId' | 'name' | 'kind'> {
  parentSpanId?: string;
  attributes?: KeyValue[];
  status?: ReceivedSpan['status'];
}

const valueOf = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (kvs: KeyValue[] | undefined) =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

/**
 * An OpenTelemetry collector on 127.0.0.1 for OTEL_EXPORTER_OTLP_PROTOCOL=http/json: it decodes
 * every POST to /v1/traces and keeps the spans. Anything else it answers 404 and counts.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly unexpected: string[] = [];
  port = 0;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).startsWith('application/json')
      ) {
        this.unexpected.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            this.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || null,
              name: s.name,
              kind: s.kind,
              scope: ss.scope?.name ?? '',
              attributes: attributesOf(s.attributes),
              resource,
              status: s.status ?? {},
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  static async start(): Promise<OtlpReceiver> {
    const r = new OtlpReceiver();
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The spans whose parent is `spanId`. */
  childrenOf(spanId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.parentSpanId === spanId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
