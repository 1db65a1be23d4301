/**
 * A listener that could not bind, said as one line naming the flag that chose its address and what to do
 * about it, instead of Node's `listen EADDRINUSE: address already in use 127.0.0.1:9402`, which names neither
 * the flag nor the way out. The API server's --port, the controller's --metrics-bind-address and
 * --acme-http01-listen-address all fail this way: another process on the port, a port below 1024 without the
 * privilege, an address that is not this machine's.
 */

/** A listening flag as the user gave it, and what to say about it. */
export interface ListenFlag {
  /** The flag's name without dashes: `port`, `metrics-bind-address`. */
  flag: string;
  /** Its value as given: `6443`, `127.0.0.1:9402`, `:80`. */
  value: string;
  /** The port it binds, to tell which flag a listen error is about (undefined: nothing binds). */
  port: number | undefined;
  /** Who usually holds the port: "another certkit up or apiserver". */
  usualHolder: string;
  /** The other choice the flag offers: "0 picks a free one". */
  alternative: string;
}

/** Node's error for a failed listen(): the code, and the address and port it tried. */
type ListenErrno = NodeJS.ErrnoException & { address?: string; port?: number };

/** The listen() error in `err` or its causes, if that is what it is. */
function listenErrno(err: unknown): ListenErrno | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    if ((e as ListenErrno).syscall === 'listen') return e as ListenErrno;
  }
  return undefined;
}

/**
 * The one line for a listen error of one of `flags` (the one whose port it tried, or the only one given), or
 * undefined when `err` is something else.
 */
export function describeListenError(err: unknown, flags: readonly ListenFlag[]): string | undefined {
  const errno = listenErrno(err);
  if (!errno) return undefined;
  const flag =
    flags.length === 1 ? flags[0] : flags.find((f) => f.port !== undefined && f.port === errno.port);
  if (!flag) return undefined;
  const host = errno.address ?? '';
  const address = `${host.includes(':') ? `[${host}]` : host}:${errno.port ?? flag.port}`;
  const named = `--${flag.flag} ${flag.value}`;
  switch (errno.code) {
    case 'EADDRINUSE':
      return (
        `${named}: ${address} is already in use (EADDRINUSE), perhaps by ${flag.usualHolder}; ` +
        `stop it or choose another --${flag.flag} (${flag.alternative})`
      );
    case 'EACCES':
      return `${named}: not allowed to listen on ${address} (EACCES); ports below 1024 need privileges`;
    case 'EADDRNOTAVAIL':
      return `${named}: ${host} is not an address of this machine (EADDRNOTAVAIL)`;
    default:
      return undefined;
  }
}

/** `err` with its message replaced by the one line for a listen error of `flags`, else `err` itself. */
export function withListenErrorInWords(err: unknown, flags: readonly ListenFlag[]): unknown {
  const line = describeListenError(err, flags);
  return line === undefined ? err : new Error(line, { cause: err });
}

/** The port of `host:port`, `:port` or `[v6]:port`; undefined for `0` (off) or no port. */
function portOf(address: string | undefined): number | undefined {
  const m = address === undefined ? null : /:(\d+)$/.exec(address);
  return m ? Number(m[1]) : undefined;
}

/** The certificate controller's listening flags, as `certkit controller` and `certkit up` were given them. */
export function controllerListenFlags(options: {
  metricsBindAddress?: string;
  acmeHTTP01ListenAddress?: string;
}): ListenFlag[] {
  const flags: ListenFlag[] = [];
  if (options.metricsBindAddress !== undefined && portOf(options.metricsBindAddress) !== undefined) {
    flags.push({
      flag: 'metrics-bind-address',
      value: options.metricsBindAddress,
      port: portOf(options.metricsBindAddress),
      usualHolder: 'another certkit controller',
      alternative: '0 turns /metrics off',
    });
  }
  if (options.acmeHTTP01ListenAddress !== undefined) {
    flags.push({
      flag: 'acme-http01-listen-address',
      value: options.acmeHTTP01ListenAddress,
      port: portOf(options.acmeHTTP01ListenAddress),
      usualHolder: 'a web server or another certkit controller',
      alternative: 'the ACME server must reach it on port 80, forwarded if need be',
    });
  }
  return flags;
}
