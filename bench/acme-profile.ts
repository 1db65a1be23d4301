import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where the controller's CPU goes in `bench:acme --cpu-prof` profiles: each sample of the controller's main
 * thread is put in the first category its stack matches (ACME JWS signing, ACME HTTP, the HTTP-01 self-check
 * and listener, DNS-01, API requests, watch decoding, informer handlers, other reconcile work, module
 * loading, GC), and the totals are printed per Certificate. The profile samples wall time of the main thread
 * and covers the whole process (start-up included), so the figures are shares, not the bench's CPU figures.
 *
 * Usage: node bench/acme-profile.ts [--certs=500] [DIR…] (default: bench/results/profiles/acme-*)
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const CATEGORIES: [RegExp, string][] = [
  [/rsaSignVerify|ecdsaSignVerify|acme\/client\/jws/, 'ACME JWS signing'],
  [/acme\/client\/(transport|client)|undici/, 'ACME HTTP (undici, TLS, JSON)'],
  [/http01\/self-check/, 'HTTP-01 self-check GETs'],
  [/challenge-server/, 'HTTP-01 listener'],
  [/acme\/dns01\//, 'DNS-01 (RFC 2136, propagation check)'],
  [/runtime\/src\/client\/(http1|transport|resource-client)/, 'API requests'],
  [/informers\/handlers/, 'informer event handlers'],
  [/informers\/|watch-stream/, 'watch decoding and caches'],
  [/reconcile|controllers\//, 'other reconcile work'],
  [/loader|compile|realm|require/, 'module loading (start-up)'],
];

export function summarize(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const time = new Map<number, number>();
  profile.samples.forEach((id, i) => time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totals = new Map<string, number>();
  for (const [id, micros] of time) {
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === '(idle)') continue;
    let category = leaf === '(garbage collector)' ? 'GC' : leaf === '(program)' ? '(program)' : undefined;
    if (!category) {
      const frames: string[] = [];
      for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
        const frame = byId.get(x)!.callFrame;
        frames.push(`${frame.url} ${frame.functionName}`);
      }
      const stack = frames.join('\n');
      category = CATEGORIES.find(([re]) => re.test(stack))?.[1] ?? 'other (Node internals)';
    }
    totals.set(category, (totals.get(category) ?? 0) + micros / 1000);
  }
  return totals;
}

const certsFlag = process.argv.find((a) => a.startsWith('--certs='));
const certs = Number(certsFlag?.slice('--certs='.length) ?? 500);
const profilesDir = join(import.meta.dirname, 'results', 'profiles');
const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (dirs.length === 0) {
  for (const d of (await readdir(profilesDir)).filter((d) => d.startsWith('acme-')).sort())
    dirs.push(join(profilesDir, d));
}
for (const dir of dirs) {
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))) {
    const totals = summarize(JSON.parse(await readFile(join(dir, file), 'utf8')) as Profile);
    const busy = [...totals.values()].reduce((a, b) => a + b, 0);
    console.log(`${dir}: ${(busy / certs).toFixed(1)} ms busy per Certificate`);
    for (const [category, ms] of [...totals].sort((a, b) => b[1] - a[1])) {
      console.log(
        `  ${(ms / certs).toFixed(2).padStart(7)} ms  ${((100 * ms) / busy).toFixed(1).padStart(5)} %  ${category}`,
      );
    }
  }
}
