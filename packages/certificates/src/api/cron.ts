/**
 * Checks renewal-window cron expressions as cert-manager does (util.CronParse → robfig/cron v3 with
 * Minute | Hour | Dom | Month | Dow | Descriptor): five fields or a descriptor such as `@daily`, with
 * robfig's error texts. Only syntax is checked here; computing the schedule belongs to the controller.
 */

import { parseGoDuration } from './duration.ts';

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTHS = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const DAYS = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** minute, hour, day of month, month, day of week. */
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];

const DESCRIPTORS = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);

/** strconv.Atoi plus robfig's negative check. */
function parseNumber(text: string): number {
  if (!/^[+-]?[0-9]+$/.test(text)) {
    throw new Error(
      `failed to parse int from ${text}: strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`,
    );
  }
  const value = Number(text);
  if (value < 0) throw new Error(`negative number (${value}) not allowed: ${text}`);
  return value;
}

function parseNumberOrName(text: string, names: Bounds['names']): number {
  const named = names?.[text.toLowerCase() as keyof typeof names];
  return named ?? parseNumber(text);
}

function checkRange(expression: string, bounds: Bounds): void {
  const rangeAndStep = expression.split('/');
  const lowAndHigh = rangeAndStep[0].split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = bounds.min;
    end = bounds.max;
  } else {
    start = parseNumberOrName(lowAndHigh[0], bounds.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseNumberOrName(lowAndHigh[1], bounds.names);
    else throw new Error(`too many hyphens: ${expression}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseNumber(rangeAndStep[1]);
    // `N/step` means `N-max/step`.
    if (lowAndHigh.length === 1) end = bounds.max;
  } else if (rangeAndStep.length > 2) throw new Error(`too many slashes: ${expression}`);
  if (start < bounds.min)
    throw new Error(`beginning of range (${start}) below minimum (${bounds.min}): ${expression}`);
  if (end > bounds.max) throw new Error(`end of range (${end}) above maximum (${bounds.max}): ${expression}`);
  if (start > end)
    throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expression}`);
  if (step === 0) throw new Error(`step of range should be a positive number: ${expression}`);
}

/** Throws robfig/cron's error for an expression it would not parse. */
export function checkCronSyntax(spec: string): void {
  if (spec === '') throw new Error('empty spec string');
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return;
    if (spec.startsWith('@every ')) {
      try {
        parseGoDuration(spec.slice('@every '.length));
      } catch (err) {
        throw new Error(`failed to parse duration ${spec}: ${(err as Error).message}`);
      }
      return;
    }
    throw new Error(`unrecognized descriptor: ${spec}`);
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== FIELDS.length) {
    throw new Error(
      `expected exactly ${FIELDS.length} fields, found ${fields.length}: [${fields.join(' ')}]`,
    );
  }
  fields.forEach((field, i) => {
    for (const expression of field.split(',').filter((e) => e !== '')) checkRange(expression, FIELDS[i]);
  });
}

/** The validation detail cert-manager's webhook gives for a bad `renewal.windows[].cron`. */
export function cronError(spec: string): string | undefined {
  try {
    checkCronSyntax(spec);
    return undefined;
  } catch (err) {
    return `failed to parse cron spec '${spec}': ${(err as Error).message}`;
  }
}
