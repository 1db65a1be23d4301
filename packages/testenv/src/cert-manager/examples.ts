/** The example manifests under ./examples, parsed: what users apply, as YAML, unchanged. */

import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '@certkit/apimachinery';

export interface Example {
  file: string;
  object: KubeObject & { metadata: { name: string; namespace?: string } };
}

const DIR = new URL('./examples/', import.meta.url);

export function loadExamples(): Example[] {
  return readdirSync(DIR)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(new URL(file, DIR), 'utf8')).map((doc) => ({
        file,
        object: doc.toJSON() as Example['object'],
      })),
    );
}

export function examplesOfKind(kind: string): Example[] {
  return loadExamples().filter((e) => e.object.kind === kind);
}

export function example(kind: string, name: string): Example['object'] {
  const found = loadExamples().find((e) => e.object.kind === kind && e.object.metadata.name === name);
  if (!found) throw new Error(`no example ${kind} ${name}`);
  return structuredClone(found.object);
}
