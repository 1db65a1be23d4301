import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { type FlagTable, parseFlags, UsageError } from '../flags.ts';
import {
  ConversionError,
  convertObject,
  type ManifestObject,
  parseOutputVersion,
  type Version,
} from './convert-versions.ts';

/**
 * `certkit convert`, as `cmctl convert`: cert-manager manifests read from files, directories (their .yaml,
 * .yml and .json files) or http(s) URLs, converted to cert-manager.io/v1 (or --output-version), and printed as
 * YAML or JSON. Nothing is sent to a cluster. One object prints as itself, several as a v1 List, as kubectl
 * and cmctl print them, keys sorted as theirs are.
 *
 * One difference on purpose: objects of other groups (a Secret or a Namespace beside the Certificates) are
 * printed unchanged, where cmctl stops at the first one it does not know, so a whole directory of manifests
 * can be converted at once.
 */

/** The text of one -f source: a URL fetched, a file read; a directory is expanded by sources(). */
async function readSource(source: string): Promise<string> {
  if (/^https?:\/\//.test(source)) {
    let response: Response;
    try {
      response = await fetch(source);
    } catch (err) {
      throw new Error(`error reading ${source}: ${(err as Error).message}`, { cause: err });
    }
    if (!response.ok) throw new Error(`error reading ${source}: ${response.status} ${response.statusText}`);
    return await response.text();
  }
  try {
    return await readFile(source, 'utf8');
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    if (code === 'ENOENT') throw new Error(`the path "${source}" does not exist`, { cause: err });
    throw new Error(`error reading ${source}: ${message}`, { cause: err });
  }
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** The files a -f value names: itself, or a directory's manifest files (recursively with -R), sorted. */
async function sources(value: string, recursive: boolean): Promise<string[]> {
  if (/^https?:\/\//.test(value)) return [value];
  const info = await stat(value).catch(() => undefined);
  if (!info?.isDirectory()) return [value];
  const found: string[] = [];
  for (const entry of (await readdir(value, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(value, entry.name);
    if (entry.isDirectory()) {
      if (recursive) found.push(...(await sources(path, recursive)));
    } else if (MANIFEST_EXTENSIONS.has(extname(entry.name))) {
      found.push(path);
    }
  }
  return found;
}

/** The objects of one source's text, a List's items included; a YAML error names the source. */
function objectsOf(text: string, source: string): ManifestObject[] {
  const objects: ManifestObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) {
      throw new Error(`error parsing ${source}: ${document.errors[0].message.split('\n')[0]}`);
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new Error(`error parsing ${source}: a document is not a Kubernetes object`);
    }
    const object = value as ManifestObject;
    if (typeof object.kind === 'string' && object.kind.endsWith('List') && Array.isArray(object.items)) {
      objects.push(...(object.items as ManifestObject[]));
    } else {
      if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') {
        throw new Error(`error parsing ${source}: an object has no apiVersion or kind`);
      }
      objects.push(object);
    }
  }
  return objects;
}

/** A copy of `value` with every object's keys sorted, as Go's YAML and JSON printers write maps. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as ManifestObject)[key])]),
  );
}

/** The printed form of the converted objects. */
export function printObjects(objects: ManifestObject[], list: boolean, output: 'yaml' | 'json'): string {
  const printed = list
    ? { apiVersion: 'v1', items: objects, kind: 'List', metadata: { resourceVersion: '' } }
    : objects[0];
  const sorted = sortKeys(printed);
  return output === 'json' ? `${JSON.stringify(sorted, null, 4)}\n` : stringify(sorted, { lineWidth: 0 });
}

/** Runs `certkit convert`: the converted manifests' text for stdout. */
export async function convert(args: string[], table: FlagTable): Promise<string> {
  const { values, positionals } = parseFlags(table, args, { positionals: true });
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}" (give files with -f)`);
  const filenames = (values.filename as unknown as string[] | undefined) ?? [];
  if (filenames.length === 0) {
    throw new UsageError('must specify -f: a file, a directory or a URL of manifests');
  }
  const output = values.output as string;
  if (output !== 'yaml' && output !== 'json') {
    throw new UsageError(`--output ${output}: unable to match a printer (yaml or json)`);
  }
  let target: Version = 'v1';
  try {
    if (typeof values['output-version'] === 'string') target = parseOutputVersion(values['output-version']);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const objects: ManifestObject[] = [];
  let files = 0;
  for (const filename of filenames) {
    for (const source of await sources(filename, values.recursive === true)) {
      files++;
      objects.push(...objectsOf(await readSource(source), source));
    }
  }
  if (objects.length === 0) throw new Error('no objects passed to convert');
  let converted: ManifestObject[];
  try {
    converted = objects.map((object) => convertObject(object, target));
  } catch (err) {
    if (err instanceof ConversionError) throw new Error(err.message, { cause: err });
    throw err;
  }
  // One object from one file prints as itself; from a directory, several files or a List, as a List (cmctl).
  const single = converted.length === 1 && files === 1 && filenames.length === 1;
  return printObjects(converted, !single, output);
}
