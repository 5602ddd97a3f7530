#!/usr/bin/env node
// A loopback OTLP/HTTP trace receiver that accepts everything and keeps nothing, for measuring the
// cost of tracing (docs/benchmarks.md): `node scripts/otlp-sink.mjs [port]` (default 4318), then
// OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 for the service. Prints what it received each
// 10 s and on exit (Ctrl-C).
import http from 'node:http';

const port = Number(process.argv[2] ?? 4318);
let exports = 0;
let bytes = 0;
const server = http.createServer((req, res) => {
  req.on('data', (c) => (bytes += c.length));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') exports += 1;
    // An empty ExportTraceServiceResponse in either encoding.
    const json = String(req.headers['content-type']).startsWith('application/json');
    res
      .writeHead(req.url === '/v1/traces' ? 200 : 404, {
        'content-type': json ? 'application/json' : 'application/x-protobuf',
      })
      .end(json ? '{}' : '');
  });
});
const report = () => console.log(`otlp-sink: ${exports} exports, ${(bytes / 1e6).toFixed(1)} MB`);
setInterval(report, 10_000).unref();
process.on('SIGINT', () => {
  report();
  process.exit(0);
});
server.listen(port, '127.0.0.1', () => console.log(`otlp-sink: listening on http://127.0.0.1:${port}`));
