# An https receiver for the mutual TLS tests (test/support/tls-receiver.ts starts it). Python's
# ssl module verifies the client certificate inside OpenSSL's handshake, so a refused certificate
# gets the TLS alert a bank's TLS terminator sends (unknown CA, certificate required...). Node's own
# https server cannot: it checks the certificate after the handshake and just closes the socket.
# Usage: python3 tls-receiver.py CERT KEY CLIENT_CA. Prints {"port"} once listening, then one JSON
# line per request: path, the client certificate's subject CN, the webhook headers and the body.
import http.server
import json
import ssl
import sys

cert, key, client_ca = sys.argv[1:4]


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the tests check which certificate each reused connection carries

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0))).decode("utf-8")
        subject = dict(pair for rdn in self.connection.getpeercert().get("subject", ()) for pair in rdn)
        headers = {k: v for k, v in self.headers.items() if k.lower().startswith("webhook-")}
        print(json.dumps({"path": self.path, "client": subject.get("commonName"), "headers": headers, "body": body}), flush=True)
        self.send_response(204)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
context.load_verify_locations(client_ca)
context.verify_mode = ssl.CERT_REQUIRED
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
server.socket = context.wrap_socket(server.socket, server_side=True)
print(json.dumps({"port": server.server_address[1]}), flush=True)
server.serve_forever()
