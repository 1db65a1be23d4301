/**
 * A label selector with many requirements, matched in time that grows with the object's labels rather than
 * with the selector. kube evaluates each requirement against each object; a query may carry tens of thousands
 * of requirements (`!a0,!a1,…` in a 150 kB selector), and here every object of a list or every watch event is
 * matched on the one event loop that every client shares: 5,000 requirements on a list of 8,000 objects
 * blocked the server for seconds.
 *
 * The requirements on one key are folded into one test of that key's value (the values it must be among, the
 * values it must not be, the integer bounds), with the same outcome as each requirement in turn. A key the
 * object does not carry then decides nothing except where a requirement needs it (`k`, `k=v`, `k in (…)`,
 * `k>n`, `k<n`); so an object is checked by its own labels and those required keys, fewer than its labels
 * plus one before one is missing.
 */

/** What the requirements on one key ask of its value when the object carries the key. */
interface KeyTest {
  /** `!k`: the key must be absent. */
  absent: boolean;
  /** `k=v`, `k in (…)`: the value must be in each of these sets, i.e. in their intersection. */
  among?: Set<string>;
  /** `k!=v`, `k notin (…)`: the value must be in none. */
  notAmong?: Set<string>;
  /** `k>n`, `k<n`: the value, read as an int64, must be above every lower and below every upper bound. */
  above?: bigint;
  below?: bigint;
  /** A bound that is not an int64: no value passes it (validation refuses such selectors before). */
  unsatisfiable: boolean;
}

/** The requirement shape this needs (labels.ts's LabelRequirement). */
interface Requirement {
  key: string;
  operator: string;
  values: readonly string[];
}

/** strconv.ParseInt(s, 10, 64), as labels.ts reads gt/lt operands and values. */
export function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

function intersect(current: Set<string> | undefined, values: readonly string[]): Set<string> {
  if (!current) return new Set(values);
  const next = new Set<string>();
  for (const v of values) if (current.has(v)) next.add(v);
  return next;
}

export function compileLabelRequirements(
  requirements: readonly Requirement[],
): (labels: Record<string, string> | undefined) => boolean {
  const tests = new Map<string, KeyTest>();
  /** Keys that must be present (a requirement other than `!=`, `notin` and `!` on them). */
  const required = new Set<string>();
  for (const r of requirements) {
    let test = tests.get(r.key);
    if (!test) {
      test = { absent: false, unsatisfiable: false };
      tests.set(r.key, test);
    }
    switch (r.operator) {
      case 'in':
      case '=':
      case '==':
        test.among = intersect(test.among, r.values);
        required.add(r.key);
        break;
      case 'notin':
      case '!=':
        test.notAmong ??= new Set();
        for (const v of r.values) test.notAmong.add(v);
        break;
      case 'exists':
        required.add(r.key);
        break;
      case '!':
        test.absent = true;
        break;
      case 'gt':
      case 'lt': {
        required.add(r.key);
        const bound = r.values.length === 1 ? parseInt64(r.values[0]) : undefined;
        if (bound === undefined) test.unsatisfiable = true;
        else if (r.operator === 'gt')
          test.above = test.above === undefined || bound > test.above ? bound : test.above;
        else test.below = test.below === undefined || bound < test.below ? bound : test.below;
        break;
      }
      default:
        // An operator no requirement can have: it matches nothing, as requirementMatches says.
        test.unsatisfiable = true;
        required.add(r.key);
    }
  }
  const requiredKeys = [...required];

  const valuePasses = (test: KeyTest, value: string): boolean => {
    if (test.absent || test.unsatisfiable) return false;
    if (test.among && !test.among.has(value)) return false;
    if (test.notAmong?.has(value)) return false;
    if (test.above !== undefined || test.below !== undefined) {
      const n = parseInt64(value);
      if (n === undefined) return false;
      if (test.above !== undefined && !(n > test.above)) return false;
      if (test.below !== undefined && !(n < test.below)) return false;
    }
    return true;
  };

  return (labels) => {
    const keys = labels ? Object.keys(labels) : [];
    // Each required key is one of the object's labels: more of them than labels cannot all be there.
    if (requiredKeys.length > keys.length) return false;
    for (const key of requiredKeys) if (!Object.hasOwn(labels!, key)) return false;
    for (const key of keys) {
      const test = tests.get(key);
      if (test && !valuePasses(test, labels![key])) return false;
    }
    return true;
  };
}
