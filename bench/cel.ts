import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoredObject } from '@certkit/apimachinery';
import { parse } from 'yaml';
import { definitionFromCrd } from '../packages/apiserver/src/crd/custom-resource.ts';
import { validateCustomResourceDefinition } from '../packages/apiserver/src/crd/validation.ts';
import { median, writeResults } from './lib.ts';

/**
 * What CEL validation rules cost, in process (no server: the figures are the rules' own cost): compiling the
 * Gateway API v1.6.1 standard CRDs when they are written, and admitting a Gateway and an HTTPRoute on create
 * and on update, each against the same CRD with its x-kubernetes-validations removed, alternately in one run.
 *
 * Usage: npm run bench:cel [-- --rounds=8]
 */

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 8);
const DIR = join(import.meta.dirname, '../packages/testenv/src/gateway-api');

type Crd = StoredObject & { spec: { versions: { schema?: { openAPIV3Schema?: unknown } }[] } };

function loadCrd(name: string): Crd {
  return parse(readFileSync(join(DIR, `gateway.networking.k8s.io_${name}.yaml`), 'utf8')) as Crd;
}

function withoutRules(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRules);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'x-kubernetes-validations')
      .map(([key, item]) => [key, withoutRules(item)]),
  );
}

const gateway = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'bench', namespace: 'default' },
  spec: {
    gatewayClassName: 'example',
    listeners: Array.from({ length: 8 }, (_, i) => ({
      name: `https-${i}`,
      protocol: 'HTTPS',
      port: 443,
      hostname: `host-${i}.example.com`,
      tls: { mode: 'Terminate', certificateRefs: [{ name: `cert-${i}` }] },
    })),
  },
};

const httpRoute = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'bench', namespace: 'default' },
  spec: {
    parentRefs: [{ name: 'bench' }],
    hostnames: ['www.example.com'],
    rules: Array.from({ length: 4 }, (_, i) => ({
      matches: [{ path: { type: 'PathPrefix', value: `/api/${i}` } }],
      filters: [
        { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: 'b' }] } },
      ],
      backendRefs: [{ name: 'api', port: 8080 }],
      timeouts: { request: '10s', backendRequest: '5s' },
    })),
  },
};

/** Microseconds per call of fn, over `calls` calls. */
function perCall(calls: number, fn: () => void): number {
  const started = performance.now();
  for (let i = 0; i < calls; i++) fn();
  return ((performance.now() - started) * 1000) / calls;
}

interface Row {
  operation: string;
  withRules: number;
  withoutRules: number;
}

function measure(crd: Crd, object: Record<string, unknown>, label: string, unit: string): Row[] {
  const bare = withoutRules(crd) as Crd;
  const compile: [number[], number[]] = [[], []];
  const create: [number[], number[]] = [[], []];
  const update: [number[], number[]] = [[], []];
  const ratios: [number[], number[], number[]] = [[], [], []];
  for (let round = 0; round < ROUNDS; round++) {
    // ABBA: which variant goes first alternates, against drift on a shared machine.
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    const figures: number[][] = [[], []];
    for (const which of order) {
      const subject = which === 0 ? crd : bare;
      const compileUs = perCall(3, () => {
        if (validateCustomResourceDefinition(subject, undefined).length > 0) throw new Error('CRD refused');
        definitionFromCrd(subject as never);
      });
      const definition = definitionFromCrd(subject as never);
      const createUs = perCall(2000, () => {
        const copy = structuredClone(object) as StoredObject;
        if (definition.admit!(copy, 'v1').length > 0) throw new Error('object refused');
      });
      // The stored object is the admitted one (pruned and defaulted); the update changes only a label.
      const stored = structuredClone(object) as StoredObject;
      definition.admit!(stored, 'v1');
      const changed = structuredClone(stored) as { metadata: { labels?: Record<string, string> } };
      changed.metadata.labels = { changed: 'yes' };
      const updateUs = perCall(2000, () => {
        const copy = structuredClone(changed) as StoredObject;
        if (definition.admit!(copy, 'v1', stored).length > 0) throw new Error('update refused');
      });
      figures[which] = [compileUs / 1000, createUs, updateUs];
    }
    compile[0].push(figures[0][0]);
    compile[1].push(figures[1][0]);
    create[0].push(figures[0][1]);
    create[1].push(figures[1][1]);
    update[0].push(figures[0][2]);
    update[1].push(figures[1][2]);
    for (let i = 0; i < 3; i++) ratios[i].push(figures[0][i] / figures[1][i]);
  }
  return [
    {
      operation: `${label}: CRD validated and served (ms)`,
      withRules: median(compile[0]),
      withoutRules: median(compile[1]),
    },
    {
      operation: `${label}: create, ${unit} (µs)`,
      withRules: median(create[0]),
      withoutRules: median(create[1]),
    },
    {
      operation: `${label}: update, ${unit} unchanged (µs)`,
      withRules: median(update[0]),
      withoutRules: median(update[1]),
    },
  ].map((row, i) => ({ ...row, ratio: median(ratios[i]) }));
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function main(): void {
  const rows = [
    ...measure(loadCrd('gateways'), gateway, 'Gateway', '8 listeners'),
    ...measure(loadCrd('httproutes'), httpRoute, 'HTTPRoute', '4 rules'),
  ] as (Row & { ratio: number })[];
  const table = [
    `CEL validation rules of the Gateway API v1.6.1 standard CRDs, in process (median of ${ROUNDS} ABBA rounds; ratio = median of per-round ratios)`,
    '',
    '| operation | with rules | rules removed | ratio |',
    '|---|---|---|---|',
    ...rows.map(
      (r) => `| ${r.operation} | ${round2(r.withRules)} | ${round2(r.withoutRules)} | ${round2(r.ratio)} |`,
    ),
    '',
    `Node ${process.version}; @marcbachmann/cel-js; 2 CPUs shared with whatever else runs. Create and update include`,
    'structuredClone of the object, pruning, defaulting and schema validation, as the store runs them.',
  ].join('\n');
  void writeResults('cel', { rounds: ROUNDS, node: process.version, rows }, table);
}

main();
