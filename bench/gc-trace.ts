import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Sums V8's `--trace-gc-nvp` lines of a process (one JSON object per collection, as node 26's V8 prints them)
 * into what docs/adr/1225 compares between runs: how many scavenges and mark-compacts, and how many bytes the
 * scavenges and the mark-compacts promoted into the old generation. Promoted bytes that later die are what
 * spaces the controller's full collections (ADR 1190): the count of mark-compacts follows them.
 *
 * Usage: npm run bench:gc-trace -- --results=NAME LABEL=FILE [LABEL=FILE …]
 * where FILE is a controller's stdout from e.g. `npm run bench:scale -- --counts=2000 --phases=issuance
 * --controller-node-args=<shipped flags>,--trace-gc-nvp --controller-stdout=FILE`. Pause times are left out:
 * they are wall time, and on a shared machine they measure the load more than the collector.
 */

interface NvpRecord {
  gc: string;
  reduce_memory?: boolean;
  promoted?: number;
  new_space_survived?: number;
  allocated?: number;
  start_object_size?: number;
  end_object_size?: number;
}

export interface GcTraceSummary {
  label: string;
  scavenges: number;
  markCompacts: number;
  memoryReducingMarkCompacts: number;
  /** MB (10^6 bytes) moved from the young into the old generation by scavenges. */
  promotedByScavengesMB: number;
  /** MB of young objects a mark-compact moved into the old generation. */
  promotedByMarkCompactsMB: number;
  /** MB scavenges copied within the young generation (objects that survived their first scavenge). */
  survivedInYoungMB: number;
  /** MB allocated between collections, summed. */
  allocatedMB: number;
  /** Median KB promoted per scavenge. */
  medianPromotedPerScavengeKB: number;
  /** Heap size after the last mark-compact, MB. */
  heapAfterLastMarkCompactMB: number;
}

const MB = 1e6;
/** A byte count as printed; V8 sometimes prints a size that wrapped below zero (2^64 − n), read as 0. */
const bytes = (n: number | undefined) => (n !== undefined && n >= 0 && n < 2 ** 48 ? n : 0);
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

function records(text: string): NvpRecord[] {
  const out: NvpRecord[] = [];
  for (const line of text.split('\n')) {
    const at = line.indexOf('GC: {');
    if (at < 0) continue;
    try {
      out.push(JSON.parse(line.slice(at + 4)) as NvpRecord);
    } catch {
      // A line cut by the process's end.
    }
  }
  return out;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export function summarize(label: string, text: string): GcTraceSummary {
  const all = records(text);
  const scavenges = all.filter((r) => r.gc === 's');
  const markCompacts = all.filter((r) => r.gc === 'mc');
  const sum = (rs: NvpRecord[], f: (r: NvpRecord) => number) => rs.reduce((n, r) => n + f(r), 0);
  return {
    label,
    scavenges: scavenges.length,
    markCompacts: markCompacts.length,
    memoryReducingMarkCompacts: markCompacts.filter((r) => r.reduce_memory).length,
    promotedByScavengesMB: round(sum(scavenges, (r) => bytes(r.promoted)) / MB),
    promotedByMarkCompactsMB: round(sum(markCompacts, (r) => bytes(r.promoted)) / MB),
    survivedInYoungMB: round(sum(scavenges, (r) => bytes(r.new_space_survived)) / MB),
    allocatedMB: round(sum(all, (r) => bytes(r.allocated)) / MB),
    medianPromotedPerScavengeKB: round(median(scavenges.map((r) => bytes(r.promoted))) / 1e3),
    heapAfterLastMarkCompactMB: round((markCompacts.at(-1)?.end_object_size ?? 0) / MB),
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const name = args.find((a) => a.startsWith('--results='))?.slice('--results='.length) ?? 'gc-trace';
  const inputs = args.filter((a) => !a.startsWith('--'));
  if (inputs.length === 0) throw new Error('usage: npm run bench:gc-trace -- --results=NAME LABEL=FILE …');
  const summaries: GcTraceSummary[] = [];
  for (const input of inputs) {
    const eq = input.indexOf('=');
    const [label, file] = eq < 0 ? [input, input] : [input.slice(0, eq), input.slice(eq + 1)];
    summaries.push(summarize(label, await readFile(file, 'utf8')));
  }
  const rows: [string, keyof GcTraceSummary][] = [
    ['scavenges', 'scavenges'],
    ['mark-compacts (of them memory-reducing)', 'markCompacts'],
    ['promoted by scavenges (MB)', 'promotedByScavengesMB'],
    ['promoted by mark-compacts (MB)', 'promotedByMarkCompactsMB'],
    ['survived a first scavenge (MB)', 'survivedInYoungMB'],
    ['allocated (MB)', 'allocatedMB'],
    ['median promoted per scavenge (KB)', 'medianPromotedPerScavengeKB'],
    ['heap after the last mark-compact (MB)', 'heapAfterLastMarkCompactMB'],
  ];
  const md = [
    `| ${['V8 --trace-gc-nvp', ...summaries.map((s) => s.label)].join(' | ')} |`,
    `|---|${summaries.map(() => '---|').join('')}`,
    ...rows.map(
      ([title, key]) =>
        `| ${title} | ${summaries
          .map((s) =>
            key === 'markCompacts' ? `${s.markCompacts} (${s.memoryReducingMarkCompacts})` : String(s[key]),
          )
          .join(' | ')} |`,
    ),
    '',
    'Sums of the lines V8 prints with `--trace-gc-nvp` (`npm run bench:gc-trace`); MB = 10⁶ bytes.',
    '',
  ].join('\n');
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'results');
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(summaries, null, 2)}\n`);
  await writeFile(join(dir, `${name}.md`), md);
  process.stdout.write(md);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
