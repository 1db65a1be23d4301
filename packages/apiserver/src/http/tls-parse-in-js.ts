import type { Server } from 'node:http';

/**
 * The one place the API server touches a private Node.js field (ADR 1831). Node's HTTP server reads a TLS
 * socket natively (its C++ parser consumes the socket's handle) unless the handle is already marked
 * `_consumed`. Read natively, a request that arrives on a connection while the answer before it is still
 * draining fails: Node stops reading until the answer drains, more of the request still reaches the parser
 * after it was told to stop, and it fails with HPE_PAUSED, dropping the connection and the request (Node 26;
 * a bare https server does the same, a plain http one does not). Parsed in JavaScript, the pause holds that
 * data until the connection resumes; the cost is within noise (`bench:apiserver-mix`).
 *
 * Node has no option for this. The public alternative, handing the server a JavaScript Duplex that wraps the
 * TLS socket (`server.emit('connection', duplex)`), copies every chunk and hides the TLSSocket the
 * authenticator reads the client certificate from. tls-parse-in-js.e2e.test.ts fails when either fact this
 * relies on changes: that Node still marks natively read handles `_consumed` (the field name), and that a bare
 * https server still drops such a request (once Node fixes that, this module can go).
 */
export function parseTlsConnectionsInJs(server: Server): void {
  // Runs before the server's own listener, which then sees the handle as taken and leaves it alone.
  server.prependListener('secureConnection', (socket: { _handle?: { _consumed?: boolean } | null }) => {
    if (socket._handle) socket._handle._consumed = true;
  });
}
