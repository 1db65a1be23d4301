import { parseArgs } from 'node:util';

/** A command-line mistake: printed as one line, exit status 2. */
export class UsageError extends Error {}

export interface ServeFlags {
  dataDir: string;
  port: number;
  host: string;
}

/** Flags shared by `up` and `apiserver`. */
export function parseServeFlags(args: string[]): ServeFlags {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'data-dir': { type: 'string', default: '.certkit' },
        port: { type: 'string', default: '6443' },
        host: { type: 'string', default: '127.0.0.1' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
  }
  const dataDir = String(values['data-dir']);
  if (dataDir === '') throw new UsageError('--data-dir must not be empty');
  return { dataDir, port, host: String(values.host) };
}
