/**
 * etcd that cannot be reached at start, said as one line naming --etcd-endpoints and the cause in its own
 * words: gRPC's status wrapping (`14 UNAVAILABLE: No connection established. Last error: Error: connect
 * ECONNREFUSED 127.0.0.1:2379. Resolution note: `) is cut down to the socket's or the resolver's error.
 */
export function etcdErrorInWords(err: unknown, endpoints: readonly string[]): Error {
  const message = err instanceof Error ? err.message : String(err);
  const unreachable = /^etcd unreachable after (\d+) ms: (?:\d+ [A-Z_]+: )?(.*)$/s.exec(message);
  if (!unreachable) return new Error(`--etcd-endpoints ${endpoints.join(',')}: ${message}`, { cause: err });
  const [, ms, grpc] = unreachable;
  const cause = /Last error: (?:Error: )?(.+?)\.?(?: Resolution note:.*)?$/s.exec(grpc)?.[1] ?? grpc.trim();
  const seconds = Number(ms) / 1000;
  return new Error(
    `--etcd-endpoints ${endpoints.join(',')}: etcd did not answer within ${seconds} s (${cause}); is it running?`,
    { cause: err },
  );
}
