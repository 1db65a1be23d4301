import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { npm } from './npm.ts';

/**
 * The published form of the packages: `npm pack` of each product package, as `npm publish` would upload it,
 * and an install of those tarballs into an empty directory with nothing but `npm install`, as a user's project
 * gets them from the registry. The build (`npm run build`) must be current: `npm pack` ships `dist/` as it is.
 */

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The packages published, in dependency order (testenv is test support and stays private). */
export const PUBLISHED_PACKAGES = ['apimachinery', 'runtime', 'apiserver', 'certificates', 'cli'] as const;

/** One tarball, as `npm pack --json` describes it. */
export interface PackedPackage {
  name: string;
  version: string;
  /** Absolute path of the .tgz. */
  tarball: string;
  /** Compressed and unpacked sizes in bytes. */
  size: number;
  unpackedSize: number;
  /** The paths in the tarball, relative to the package root. */
  files: string[];
}

/** Packs every published package into `destination` (a new temporary directory when not given). */
export async function packWorkspaces(destination?: string): Promise<PackedPackage[]> {
  const dir = destination ?? (await mkdtemp(join(tmpdir(), 'certkit-tarballs-')));
  const workspaces = PUBLISHED_PACKAGES.flatMap((pkg) => ['-w', `packages/${pkg}`]);
  const out = await npm(['pack', '--json', '--pack-destination', dir, ...workspaces], ROOT);
  const packed = JSON.parse(out) as {
    name: string;
    version: string;
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  return packed.map((p) => ({
    name: p.name,
    version: p.version,
    tarball: join(dir, p.filename),
    size: p.size,
    unpackedSize: p.unpackedSize,
    files: p.files.map((f) => f.path),
  }));
}

/**
 * An empty project (`package.json` with `"type": "module"` and nothing else) in a new temporary directory,
 * with the tarballs installed by `npm install <tarballs>`: dependencies come from the registry, the
 * @certkit packages from the tarballs (their ^0.1.0 ranges between each other resolve to them).
 */
export async function installTarballs(tarballs: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-install-'));
  await writeFile(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'certkit-install-test', private: true, type: 'module' }, null, 2)}\n`,
  );
  // --prefer-offline: what the npm cache holds is used without asking the registry again (misses still go
  // there), which keeps a warm run quick.
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], dir);
  return dir;
}
