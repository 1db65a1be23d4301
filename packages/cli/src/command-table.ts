import { SERVE_FLAGS } from './args.ts';
import {
  APPROVE_FLAGS,
  CHECK_API_FLAGS,
  CONVERT_FLAGS,
  CREATE_CERTIFICATE_REQUEST_FLAGS,
  CREATE_CERTIFICATE_SIGNING_REQUEST_FLAGS,
  DENY_FLAGS,
  NAMESPACED_FLAGS,
} from './commands/cmctl-flag-tables.ts';
import {
  CAINJECTOR_FLAG_OPTIONS,
  CAINJECTOR_SCOPE_FLAGS,
  UP_CAINJECTOR_FLAGS,
} from './commands/cainjector-flag-table.ts';
import {
  CONTROLLER_FLAG_OPTIONS,
  CONTROLLER_SCOPE_FLAGS,
  UP_CONTROLLER_FLAGS,
} from './commands/controller-flag-table.ts';
import {
  CLUSTER_FLAGS,
  RENEW_FLAGS,
  SECRETS_AUDIT_FLAGS,
  STATUS_FLAGS,
  VERSION_FLAGS,
} from './commands/flag-tables.ts';
import { type FlagTable, parseFlags } from './flags.ts';
import { load } from './load.ts';
import { LOG_FLAGS } from './log-flags.ts';
import { Progress } from './progress.ts';

/**
 * Every certkit command, with its flags: main.ts dispatches on this table, and `--help` and the completion
 * scripts are generated from it. Each command's module is imported when it runs, not here: `certkit
 * controller` never loads the API server (SQLite, the registry, the Kubernetes models: ~20 MB of RSS it would
 * keep for nothing), `certkit renew` neither the server nor the controllers. The flag tables are data only.
 */
export interface Command {
  name: string;
  /** Other names it answers to, as cobra's aliases (cmctl's `create cr`). */
  aliases?: readonly string[];
  /** What follows the command's name in its usage line, e.g. `NAME...`. */
  args?: string;
  /** One line for the list of commands. */
  summary: string;
  /** More lines for the command's own help. */
  description?: string;
  /** The flags it takes, besides -h/--help. */
  flags: FlagTable;
  /** Words its first argument may be, offered by the completion scripts. */
  words?: readonly string[];
  /**
   * Its arguments are Certificate names, which the completion scripts list from the cluster of the flags typed
   * so far (`certkit status -o name`); `after`: only right after that word.
   */
  certificateNames?: { after?: string };
  subcommands?: readonly Command[];
  /** Runs it with its arguments and its flag table (`flags` above); absent for a group of subcommands. */
  run?(args: string[], flags: FlagTable): Promise<void>;
}

function print(text: string): void {
  process.stdout.write(text);
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'up',
    summary: 'the API server and the certificate controller in one process (what npm start runs)',
    flags: { ...SERVE_FLAGS, ...UP_CONTROLLER_FLAGS, ...UP_CAINJECTOR_FLAGS, ...LOG_FLAGS },
    run: async (args, flags) => (await import('./commands/serve-command.ts')).serve('up', args, flags),
  },
  {
    name: 'apiserver',
    summary: 'the Kubernetes-compatible API server alone',
    flags: { ...SERVE_FLAGS, ...LOG_FLAGS },
    run: async (args, flags) => (await import('./commands/serve-command.ts')).serve('apiserver', args, flags),
  },
  {
    name: 'controller',
    summary: 'the certificate controller against any cluster, until SIGTERM',
    flags: { ...CLUSTER_FLAGS, ...CONTROLLER_SCOPE_FLAGS, ...CONTROLLER_FLAG_OPTIONS, ...LOG_FLAGS },
    run: async (args, flags) => (await load(import('./commands/controller.ts'))).controller(args, flags),
  },
  {
    name: 'cainjector',
    summary:
      'cert-manager’s cainjector: caBundles of annotated webhooks, CRDs and APIServices, until SIGTERM',
    description:
      'Fills the caBundle of ValidatingWebhookConfigurations, MutatingWebhookConfigurations, CRD conversion\n' +
      'webhooks and APIServices annotated cert-manager.io/inject-ca-from: NS/CERTIFICATE,\n' +
      'cert-manager.io/inject-ca-from-secret: NS/SECRET (the Secret annotated\n' +
      'cert-manager.io/allow-direct-injection: "true") or cert-manager.io/inject-apiserver-ca: "true".',
    flags: { ...CLUSTER_FLAGS, ...CAINJECTOR_SCOPE_FLAGS, ...CAINJECTOR_FLAG_OPTIONS, ...LOG_FLAGS },
    run: async (args, flags) => (await load(import('./commands/cainjector.ts'))).cainjector(args, flags),
  },
  {
    name: 'status',
    args: '[certificate [NAME]]',
    summary: 'Certificates with readiness, issuer, expiry and renewal time; one in detail with a NAME',
    description:
      'With a NAME: the Certificate, its conditions and Events, its Issuer, the certificate in its Secret, and\n' +
      'the CertificateRequest of the issuance in progress (or of the current revision).',
    flags: { ...CLUSTER_FLAGS, ...STATUS_FLAGS },
    words: ['certificate'],
    certificateNames: { after: 'certificate' },
    run: async (args, flags) => print(await (await load(import('./commands/status.ts'))).status(args, flags)),
  },
  {
    name: 'renew',
    args: '[NAME...]',
    summary: 're-issue Certificates now: NAMEs, or --all, or -l/--selector SEL, in -n NS or -A',
    flags: { ...CLUSTER_FLAGS, ...RENEW_FLAGS },
    certificateNames: {},
    run: async (args, flags) => {
      const progress = new Progress(process.stderr);
      await (
        await load(import('./commands/renew.ts'))
      ).renew(args, flags, {
        out: (text) => progress.print(process.stdout, text),
        err: (text) => progress.print(process.stderr, text),
        progress,
      });
    },
  },
  {
    name: 'approve',
    args: 'NAME',
    summary: 'approve a CertificateRequest (its Approved condition), as cmctl approve',
    flags: { ...NAMESPACED_FLAGS, ...APPROVE_FLAGS },
    run: async (args, flags) =>
      print(await (await load(import('./commands/approval.ts'))).decide('approve', args, flags)),
  },
  {
    name: 'deny',
    args: 'NAME',
    summary: 'deny a CertificateRequest (its Denied condition), as cmctl deny',
    flags: { ...NAMESPACED_FLAGS, ...DENY_FLAGS },
    run: async (args, flags) =>
      print(await (await load(import('./commands/approval.ts'))).decide('deny', args, flags)),
  },
  {
    name: 'inspect',
    summary: 'decode what is stored in the cluster',
    flags: {},
    subcommands: [
      {
        name: 'secret',
        args: 'NAME',
        summary: 'the certificate of a kubernetes.io/tls Secret: names, validity, chain, key match, ca.crt',
        flags: NAMESPACED_FLAGS,
        run: async (args, flags) =>
          print(await (await load(import('./commands/inspect-secret.ts'))).inspectSecret(args, flags)),
      },
    ],
  },
  {
    name: 'check',
    summary: 'check that certkit is ready',
    flags: {},
    subcommands: [
      {
        name: 'api',
        summary: 'whether the cert-manager API answers (a dry-run CertificateRequest); exit 0 once it does',
        description:
          'With --wait, checks every --interval until the API is ready or the time is up; on a terminal,\n' +
          'a status line says what it waits for.',
        flags: { ...NAMESPACED_FLAGS, ...CHECK_API_FLAGS },
        run: async (args, flags) => {
          const progress = new Progress(process.stderr);
          print(await (await load(import('./commands/check-api.ts'))).checkApi(args, flags, progress));
        },
      },
    ],
  },
  {
    name: 'create',
    summary: 'create cert-manager resources',
    flags: {},
    subcommands: [
      {
        name: 'certificaterequest',
        aliases: ['cr'],
        args: 'NAME',
        summary: 'a CertificateRequest from a Certificate manifest, with a new private key in a file',
        flags: { ...NAMESPACED_FLAGS, ...CREATE_CERTIFICATE_REQUEST_FLAGS },
        run: async (args, flags) =>
          (await load(import('./commands/create-certificaterequest.ts'))).createCertificateRequest(
            args,
            flags,
            {
              err: (text) => process.stderr.write(text),
            },
          ),
      },
    ],
  },
  {
    name: 'convert',
    summary: 'convert cert-manager manifests between API versions (to cert-manager.io/v1), as cmctl convert',
    description:
      'Reads -f files, directories or URLs (YAML or JSON) and prints them converted, without a cluster:\n' +
      'v1alpha2, v1alpha3 and v1beta1 objects of cert-manager.io and acme.cert-manager.io become v1, or the\n' +
      'version --output-version names. Objects of other groups are printed unchanged.',
    flags: CONVERT_FLAGS,
    run: async (args, flags) =>
      print(await (await load(import('./commands/convert.ts'))).convert(args, flags)),
  },
  {
    name: 'x',
    summary: 'experimental commands, as cmctl x',
    flags: {},
    subcommands: [
      {
        name: 'create',
        summary: 'create Kubernetes resources for cert-manager',
        flags: {},
        subcommands: [
          {
            name: 'certificatesigningrequest',
            aliases: ['csr'],
            args: 'NAME',
            summary:
              'a Kubernetes CertificateSigningRequest from a Certificate manifest, with a new private key in a file',
            description:
              'For the CertificateSigningRequest signers (certkit controller --feature-gates=\n' +
              'ExperimentalCertificateSigningRequestControllers=true); someone approves it: kubectl certificate approve NAME.',
            flags: { ...NAMESPACED_FLAGS, ...CREATE_CERTIFICATE_SIGNING_REQUEST_FLAGS },
            run: async (args, flags) =>
              (
                await load(import('./commands/create-certificatesigningrequest.ts'))
              ).createCertificateSigningRequest(args, flags, {
                err: (text) => process.stderr.write(text),
              }),
          },
        ],
      },
    ],
  },
  {
    name: 'secrets',
    summary: 'Secrets the controller reads',
    flags: {},
    subcommands: [
      {
        name: 'audit',
        summary: 'Secrets referenced by issuers or keystores, not labelled for the controller’s cache',
        flags: { ...CLUSTER_FLAGS, ...SECRETS_AUDIT_FLAGS },
        run: async (args, flags) =>
          print(await (await load(import('./commands/secrets-audit.ts'))).secretsAudit(args, flags)),
      },
    ],
  },
  {
    name: 'version',
    summary: 'the version of certkit and of the Node.js it runs on',
    flags: VERSION_FLAGS,
    run: async (args) => print((await import('./commands/version.ts')).version(args)),
  },
  {
    name: 'completion',
    summary: 'a shell completion script: source <(certkit completion bash)',
    flags: {},
    subcommands: (['bash', 'zsh', 'fish'] as const).map((shell) => ({
      name: shell,
      summary: `the ${shell} completion script`,
      description: {
        bash:
          'Load it in the current shell with `source <(certkit completion bash)`, or for every shell\n' +
          'with `certkit completion bash > /etc/bash_completion.d/certkit`.',
        zsh:
          'Load it in the current shell (after compinit) with `source <(certkit completion zsh)`, or\n' +
          'write it as `_certkit` into a directory of $fpath.',
        fish:
          'Load it in the current shell with `certkit completion fish | source`, or for every shell\n' +
          'with `certkit completion fish > ~/.config/fish/completions/certkit.fish`.',
      }[shell],
      flags: {},
      run: async (args) => {
        parseFlags({}, args);
        print((await import('./completion.ts')).completionScript(shell, COMMANDS));
      },
    })),
  },
];
