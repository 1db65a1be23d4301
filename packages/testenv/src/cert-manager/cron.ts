import { cronParse } from '@certkit/certificates/api/cron-parser';

/** Test helpers for cron schedules: instants as ISO text, and a schedule's first activations. */

export const at = (iso: string) => Date.parse(iso);
export const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The first `count` activations strictly after `from`. */
export function activations(cron: string, timeZone: string, from: string, count: number): string[] {
  const schedule = cronParse(cron, timeZone);
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < count; i++) out.push(iso((t = schedule.next(t))));
  return out;
}
