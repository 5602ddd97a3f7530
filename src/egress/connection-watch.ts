// What an attempt's own connection had done when it failed, for attempts that present a client
// certificate: a receiver that refuses the certificate may send no alert and just close the
// connection — during the handshake (TLS 1.2), or after it, before any answer (TLS 1.3, where the
// client's handshake is over before the receiver has checked its certificate). Node reports both
// as ECONNRESET; the socket's state tells them from a network failure.
import type http from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { EventEmitter } from 'node:events';

/** Where a new connection was when it ended: in its handshake, or after it with nothing read. */
export type ClosedAt = 'handshake' | 'before-answer';

export class ConnectionWatch {
  private socket: TLSSocket | null = null;
  private answered = false;

  /**
   * Watches the connection got's request stream is given, when it is a new one (a reused one has
   * had its certificate accepted).
   */
  constructor(stream: EventEmitter) {
    stream.once('request', (req: http.ClientRequest) =>
      req.once('socket', (socket) => {
        if (req.reusedSocket) return;
        this.socket = socket as TLSSocket;
        socket.once('data', () => (this.answered = true));
      }),
    );
  }

  /**
   * Null when no new connection was made or the receiver sent something back. `authorized`
   * (public, kept after the socket is destroyed) is set once the handshake has completed: the
   * sender always rejects a receiver whose certificate does not verify.
   */
  closedAt(): ClosedAt | null {
    if (!this.socket || this.answered) return null;
    return this.socket.authorized ? 'before-answer' : 'handshake';
  }
}
