import type { FlagTable } from '../flags.ts';
import { CLUSTER_FLAGS } from './flag-tables.ts';

/**
 * The flags of cmctl's day-to-day commands (approve, deny, check api, create certificaterequest), with
 * cmctl's names and defaults, as data only: `--help` and the completion scripts read them without loading
 * the commands.
 */

/**
 * kubectl's flags for one namespace: these commands act on one named object, so -A/--all-namespaces is not
 * offered (given anyway, it is refused with one line).
 */
export const NAMESPACED_FLAGS: FlagTable = Object.fromEntries(
  Object.entries(CLUSTER_FLAGS).filter(([name]) => name !== 'all-namespaces'),
);

/** `certkit approve`'s flags: cmctl's reason, and its message naming the tool that approved. */
export const APPROVE_FLAGS = {
  reason: {
    type: 'string',
    default: 'KubectlCertManager',
    value: 'REASON',
    help: 'the reason given as to who approved this CertificateRequest',
  },
  message: {
    type: 'string',
    default: 'manually approved by "certkit"',
    value: 'TEXT',
    help: 'the message given as to why this CertificateRequest was approved',
  },
} as const satisfies FlagTable;

/** `certkit deny`'s flags, as approve's. */
export const DENY_FLAGS = {
  reason: {
    type: 'string',
    default: 'KubectlCertManager',
    value: 'REASON',
    help: 'the reason given as to who denied this CertificateRequest',
  },
  message: {
    type: 'string',
    default: 'manually denied by "certkit"',
    value: 'TEXT',
    help: 'the message given as to why this CertificateRequest was denied',
  },
} as const satisfies FlagTable;

/** `certkit check api`'s flags: Go durations, as cmctl's. */
export const CHECK_API_FLAGS = {
  wait: {
    type: 'string',
    default: '0s',
    value: 'DURATION',
    help: 'keep checking until the API is ready or this long has passed (0s: check once)',
  },
  interval: {
    type: 'string',
    default: '5s',
    value: 'DURATION',
    help: 'time between checks when waiting, e.g. 1s or 1m',
  },
  // cmctl's (and cert-manager's startupapicheck Job's `check api --wait=1m -v`): -v alone is 2.
  v: {
    type: 'string',
    short: 'v',
    value: 'N',
    help: 'log verbosity, as cmctl (-v alone: 2); from 2, the reason of each failed check on stderr',
  },
} as const satisfies FlagTable;

/** `certkit create certificaterequest`'s flags. */
export const CREATE_CERTIFICATE_REQUEST_FLAGS = {
  'from-certificate-file': {
    type: 'string',
    value: 'FILE',
    help: 'a file with a Certificate (YAML or JSON), the template of the request (required)',
  },
  'output-key-file': {
    type: 'string',
    value: 'FILE',
    help: 'where the generated private key is written (default: NAME.key)',
  },
  'output-certificate-file': {
    type: 'string',
    value: 'FILE',
    help: 'where the signed certificate is written, with --fetch-certificate (default: NAME.crt)',
  },
  'fetch-certificate': {
    type: 'boolean',
    default: false,
    help: 'wait until the request is signed and write its certificate to a file',
  },
  timeout: {
    type: 'string',
    default: '5m',
    value: 'DURATION',
    help: 'how long to wait for the signature with --fetch-certificate, e.g. 10m or 1h',
  },
} as const satisfies FlagTable;

/** `certkit convert`'s flags: kubectl's -f/-R and cmctl's --output-version, -o yaml|json. */
export const CONVERT_FLAGS = {
  filename: {
    type: 'string',
    short: 'f',
    multiple: true,
    value: 'FILE',
    help: 'a file, a directory of .yaml/.yml/.json files or an http(s) URL of cert-manager resources (repeatable)',
  },
  recursive: {
    type: 'boolean',
    short: 'R',
    default: false,
    help: 'read the directories of -f and those under them',
  },
  'output-version': {
    type: 'string',
    value: 'GROUP/VERSION',
    help: 'the version to convert to, e.g. cert-manager.io/v1alpha2 (default: cert-manager.io/v1)',
  },
  output: {
    type: 'string',
    short: 'o',
    default: 'yaml',
    value: 'yaml|json',
    help: 'the output format',
  },
} as const satisfies FlagTable;

/** `certkit x create certificatesigningrequest`'s flags: cmctl's, with its short names. */
export const CREATE_CERTIFICATE_SIGNING_REQUEST_FLAGS = {
  'from-certificate-file': {
    type: 'string',
    short: 'f',
    value: 'FILE',
    help: 'a file with a Certificate (YAML or JSON), the template of the CSR (required)',
  },
  'output-key-file': {
    type: 'string',
    short: 'k',
    value: 'FILE',
    help: 'where the generated private key is written (default: NAME.key)',
  },
  'output-certificate-file': {
    type: 'string',
    short: 'c',
    value: 'FILE',
    help: 'where the signed certificate is written, with --fetch-certificate (default: NAME.crt)',
  },
  'fetch-certificate': {
    type: 'boolean',
    short: 'w',
    default: false,
    help: 'wait until the CSR is approved and signed, and write its certificate to a file',
  },
  timeout: {
    type: 'string',
    default: '5m',
    value: 'DURATION',
    help: 'how long to wait for the signature with --fetch-certificate, e.g. 10m or 1h',
  },
} as const satisfies FlagTable;
