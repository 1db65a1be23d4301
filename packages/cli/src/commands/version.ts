import { stringify } from 'yaml';
import packageJson from '../../package.json' with { type: 'json' };
import { parseFlags, UsageError } from '../flags.ts';
import { VERSION_FLAGS } from './flag-tables.ts';

/** What `certkit version` reports: the package's version and the Node.js it runs on. */
export function versionInfo(): { version: string; nodeVersion: string; platform: string } {
  return {
    version: packageJson.version,
    nodeVersion: process.version,
    platform: `${process.platform}/${process.arch}`,
  };
}

/** `certkit version` and `certkit --version`. */
export function version(args: string[]): string {
  const { values } = parseFlags(VERSION_FLAGS, args);
  const info = versionInfo();
  switch (values.output) {
    case undefined:
      if (values.short === true) return `Client Version: v${info.version}\n`;
      return `certkit ${info.version} (Node.js ${info.nodeVersion}, ${info.platform})\n`;
    // cmctl's shape: the client's version under clientVersion.
    case 'json':
      return `${JSON.stringify({ clientVersion: info }, null, 2)}\n`;
    case 'yaml':
      return stringify({ clientVersion: info });
    default:
      throw new UsageError(`--output must be json or yaml, got ${JSON.stringify(values.output)}`);
  }
}
