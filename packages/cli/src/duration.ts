/** Go-style durations as Kubernetes flags take them: `1m`, `30s`, `1m30s`, `500ms`, `2h`. Returns milliseconds. */
const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

export function parseDuration(text: string): number {
  const match = /^(-?)((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)$/.exec(text.trim());
  if (!match) {
    if (text.trim() === '0') return 0;
    throw new Error(`invalid duration ${JSON.stringify(text)} (examples: 30s, 1m, 1m30s, 500ms)`);
  }
  let total = 0;
  for (const [, value, unit] of match[2].matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(value) * UNITS[unit];
  }
  return match[1] === '-' ? -total : total;
}
