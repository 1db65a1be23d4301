import { readFile } from 'node:fs/promises';

/**
 * What a heap grew by, per managed Certificate, by kind of object: V8's self sizes in two heap snapshots (as
 * `npm run bench:cert-memory -- --heap-snapshots=DIR` writes them: the controller on the empty cluster, after
 * issuance, restarted), each object grouped by what it is and what holds it, the groups then sorted into kinds
 * (metric series, delaying queues, informer stores, strings, …), and the difference divided by N.
 *
 * An object is named by its class, or for a plain object by its first property names (a condition is
 * `Object{type,status,reason,…}`); strings, arrays and hash tables by the object that holds them, found through
 * their first retaining edge (up to three holders up, through arrays and tables), so a Map's table counts for
 * the Map's owner (`Indexer.#items.table`). Self sizes, not retained ones: each byte is counted once.
 *
 * Usage: npm run bench:heap-kinds -- --before=empty.heapsnapshot --after=restarted.heapsnapshot --per=3000
 *        [--top=40: also list the largest groups that grew]
 */

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[]];
      edge_fields: string[];
      edge_types: [string[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** The kinds, first match wins; a group that matches none is "other". */
const KINDS: [string, RegExp][] = [
  ['metric series kept per Certificate', /Object\{values,key,attached|Gauge\.|Branch|values,key,attached/],
  [
    'delaying queues (the trigger and readiness wake-ups)',
    /Object\{key,item|waitingByKey|slotByKey|RateLimitingQueue\.(heap|keys|items|readyAt|seqs)/,
  ],
  ['string sharing tables (bounded)', /StringSharing/],
  [
    'answer caches (invalidSpec, requestMatchesSpec)',
    /validated|requestMatches|Object\{spec,violations|WeakGenerations/,
  ],
  ['informer stores (a Map per informer)', /Indexer\.#items/],
  // The namespace index's Sets sit a level deeper than the holder search goes.
  ['informer indices (incl. the namespace index)', /Indexer\.#indices|^array: <- array:\.#\.table\.#\.table/],
  ['strings (names, keys, uids, versions, facts texts)', /^(string|concatenated string|sliced string) /],
  ['conditions', /Object\{type,status,reason,message,lastTransitionTime|\.conditions/],
  [
    'code and JIT data (not per Certificate)',
    /^code|^hidden:system|^object shape|^array: <- Instance|FeedbackVector/,
  ],
  [
    'the objects: Certificate, request, Secret (metadata, spec, status, data, lists)',
    /^Object\{|^Array|^array:\(object elements\)|^number/,
  ],
];

const CONTAINERS = new Set(['array', 'hidden', 'object shape']);
const HELD_BY_OWNER = new Set([
  'Map',
  'Set',
  'Array',
  'WeakMap',
  'string',
  'concatenated string',
  'sliced string',
]);
const STRINGS = new Set(['string', 'concatenated string', 'sliced string']);

/** Self size by group (what an object is and what holds it), and count. */
async function groups(file: string): Promise<Map<string, { bytes: number; count: number }>> {
  const snap = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  const meta = snap.snapshot.meta;
  const N = meta.node_fields.length;
  const E = meta.edge_fields.length;
  const [nT, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f),
  );
  const [eT, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = snap;
  const count = nodes.length / N;
  const firstEdge = new Uint32Array(count);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * N + nEdges];
  }
  const type = (i: number) => nodeTypes[nodes[i * N + nT]];
  const propertyNames = (i: number) => {
    const names: string[] = [];
    for (let k = firstEdge[i]; k < firstEdge[i] + nodes[i * N + nEdges]; k++) {
      if (edgeTypes[edges[k * E + eT]] === 'property') names.push(strings[edges[k * E + eName]]);
    }
    return names;
  };
  // The first strong retainer of every node, and the edge's name; a named edge wins over an internal one.
  const retainer = new Int32Array(count).fill(-1);
  const via: string[] = new Array<string>(count).fill('');
  for (let i = 0; i < count; i++) {
    for (let k = firstEdge[i]; k < firstEdge[i] + nodes[i * N + nEdges]; k++) {
      const t = edgeTypes[edges[k * E + eT]];
      if (t === 'weak') continue;
      const to = edges[k * E + eTo] / N;
      if (retainer[to] !== -1 && !(via[to].startsWith('(') && (t === 'property' || t === 'element')))
        continue;
      retainer[to] = i;
      const name = edges[k * E + eName];
      via[to] = ['property', 'internal', 'context', 'shortcut'].includes(t)
        ? String(strings[name])
        : t === 'element'
          ? '[]'
          : `(${t})`;
    }
  }
  const label = (i: number): string => {
    const t = type(i);
    const name = strings[nodes[i * N + nName]];
    if (t === 'object') {
      if (name !== 'Object') return name;
      const props = propertyNames(i);
      return `Object{${props.slice(0, 6).join(',')}${props.length > 6 ? '…' : ''}}`;
    }
    return STRINGS.has(t) ? t : `${t}:${name.slice(0, 40)}`;
  };
  const holder = (i: number, depth: number): string => {
    const r = retainer[i];
    if (r < 0) return '(root)';
    const l = label(r);
    if (depth < 3 && (CONTAINERS.has(type(r)) || l.startsWith('array') || HELD_BY_OWNER.has(l))) {
      return `${holder(r, depth + 1)}.${via[r]}`;
    }
    return l;
  };
  const out = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < count; i++) {
    const t = type(i);
    const l = label(i);
    const held =
      STRINGS.has(t) || ['array', 'hidden', 'number', 'object shape', 'code', 'closure'].includes(t);
    const key = (
      held || l.startsWith('array') || HELD_BY_OWNER.has(l)
        ? `${l} <- ${holder(i, 0).slice(0, 90)}.${via[i].slice(0, 30)}`
        : l
    ).replace(/\.\d+/g, '.#');
    const g = out.get(key) ?? { bytes: 0, count: 0 };
    g.bytes += nodes[i * N + nSize];
    g.count++;
    out.set(key, g);
  }
  return out;
}

const before = flag('before');
const after = flag('after');
const per = Number(flag('per') ?? '1');
if (!before || !after) throw new Error('usage: --before=FILE --after=FILE --per=N');
const [a, b] = await Promise.all([groups(before), groups(after)]);
const byKind = new Map<string, number>();
const grown: [number, number, string][] = [];
for (const key of new Set([...a.keys(), ...b.keys()])) {
  const delta = (b.get(key)?.bytes ?? 0) - (a.get(key)?.bytes ?? 0);
  const kind = KINDS.find(([, re]) => re.test(key))?.[0] ?? 'other';
  byKind.set(kind, (byKind.get(kind) ?? 0) + delta);
  grown.push([delta, (b.get(key)?.count ?? 0) - (a.get(key)?.count ?? 0), key]);
}
const perCert = (bytes: number) => Math.round(bytes / per);
console.log(`| kind | bytes per Certificate (${per}) |\n|---|---|`);
for (const [kind, bytes] of [...byKind].sort((x, y) => y[1] - x[1]))
  console.log(`| ${kind} | ${perCert(bytes)} |`);
console.log(`| total | ${perCert([...byKind.values()].reduce((s, v) => s + v, 0))} |`);
const top = Number(flag('top') ?? '0');
if (top > 0) {
  console.log('\nlargest groups grown (bytes per Certificate, objects added, group):');
  for (const [delta, n, key] of grown.sort((x, y) => y[0] - x[0]).slice(0, top)) {
    console.log(`${String(perCert(delta)).padStart(7)} ${String(n).padStart(7)}  ${key}`);
  }
}
