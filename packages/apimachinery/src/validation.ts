/**
 * Name and value checks of k8s.io/apimachinery/pkg/util/validation, with upstream's messages, because the
 * errors a client sees embed them: label selectors' parse errors, ObjectMeta and field validation in the API
 * server, cert-manager's webhook checks. Each returns the problems, empty when the value is valid.
 */

const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;
const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueRe = new RegExp(`^${labelValueFmt}$`);
const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);

/** validation.RegexError, including its doubled space before "or". */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

/** Lengths are checked in bytes, as Go's len(). */
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');
const maxLenError = (n: number): string => `must be no more than ${n} characters`;

/** Problems with a DNS label such as a namespace name (validation.IsDNS1123Label). */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (!dns1123LabelRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        dns1123LabelFmt,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}

/** Problems with a DNS subdomain such as most object names (validation.IsDNS1123Subdomain). */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        dns1123SubdomainFmt,
        'example.com',
      ),
    );
  }
  return errs;
}

const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
// Built once: a body can hold 190,000 bad label keys, each reported with this text; one shared string rather
// than one 280-byte copy per key (5.7 µs and 53 MB for that body).
const qualifiedNamePartError = `name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`;
const qualifiedNameSlashesError = `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;

/**
 * Problems with a qualified name, `[prefix/]name` (validation.IsQualifiedName): what label and annotation keys
 * and finalizers must be.
 */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  if (parts.length > 2) {
    return [qualifiedNameSlashesError];
  }
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix === '') errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!qualifiedNameRe.test(name)) errs.push(qualifiedNamePartError);
  return errs;
}

/** Problems with a label value (validation.IsValidLabelValue); '' is valid. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!labelValueRe.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        labelValueFmt,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/**
 * IsValidPathSegmentName (k8s.io/apimachinery/pkg/api/validation/path): what a name or namespace may not be
 * to stand as one segment of a request path. `.` and `..` would be resolved away with the segment before
 * them (a Secret named `..` addresses its namespace), `/` and `%` would split or escape it.
 */
export function pathSegmentNameErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errors: string[] = [];
  for (const illegal of ['/', '%']) if (name.includes(illegal)) errors.push(`may not contain '${illegal}'`);
  return errors;
}
