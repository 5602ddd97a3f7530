// CALLBACK_PROXY_URL: every connection to a partner through a CONNECT tunnel of the egress proxy.
import http from 'node:http';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import type { guardedLookup } from './destination-guard.js';

type Lookup = ReturnType<typeof guardedLookup>;
type TunnelOptions = http.ClientRequestArgs & tls.ConnectionOptions;
type Connected = (err: Error | null, socket?: Socket) => void;
/** What runs in the tunnel the proxy opened: plain HTTP as it is, HTTPS inside TLS to the partner. */
type OverTunnel = (socket: Socket, options: TunnelOptions, host: string, callback: Connected) => void;

export const plainHttp: OverTunnel = (socket, _options, _host, callback) => callback(null, socket);

/**
 * TLS to the partner inside the tunnel, with the request's TLS options as they are: the partner's
 * host name for SNI and the certificate check, and its client certificate and CA bundle when it has them.
 */
export const overTls: OverTunnel = (socket, options, host, callback) => {
  const secureSocket = tls.connect({ ...options, socket, servername: options.servername ?? host });
  secureSocket.once('secureConnect', () => callback(null, secureSocket));
  secureSocket.once('error', callback);
};

/**
 * Opens every connection through CONNECT to the proxy, asking for the address our guarded
 * lookup vetted (not the host name), so the proxy cannot be steered to a private address by
 * DNS either. The proxy is trusted to connect where it is asked.
 */
export function tunnelConnection(proxy: URL, lookup: Lookup, localAddress: string | undefined, over: OverTunnel) {
  return (options: TunnelOptions, callback: Connected) => {
    const host = String(options.host ?? options.hostname).replace(/^\[|\]$/g, '');
    const port = Number(options.port);
    lookup(host, {}, (err, address) => {
      if (err) return callback(err);
      const ip = address as string; // asked without `all`: one address, never a list
      const target = ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
      const req = http.request({
        host: proxy.hostname,
        port: Number(proxy.port || 80),
        method: 'CONNECT',
        path: target,
        headers: { host: target },
        localAddress,
        agent: false,
      });
      req.once('connect', (res, socket) => {
        if (res.statusCode !== 200) {
          socket.destroy();
          return callback(new Error(`proxy refused CONNECT ${target}: ${res.statusCode}`));
        }
        over(socket, options, host, callback);
      });
      req.once('error', callback);
      req.end();
    });
  };
}
