import type { CAInjectorOptions } from '@certkit/certificates/cainjector/cainjector';
import type { InjectableName } from '@certkit/certificates/cainjector/injectables';
import { UsageError } from '../args.ts';
import { bool, type LeaderElectionTimings, leaderElectionTimings } from './controller-flags.ts';

export { CAINJECTOR_FLAG_OPTIONS } from './cainjector-flag-table.ts';

/** What `certkit cainjector`'s flags ask for. */
export interface CAInjectorFlags {
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionTimings: LeaderElectionTimings;
  options: Pick<
    CAInjectorOptions,
    'injectables' | 'certificatesDataSource' | 'ignoreNamespaces' | 'mergeBundles' | 'metricsBindAddress'
  >;
}

/** Each `--enable-<plural>-injectable` flag and the kind it turns on. */
const INJECTABLE_FLAGS: Record<string, InjectableName> = {
  'enable-validatingwebhookconfigurations-injectable': 'validatingwebhookconfiguration',
  'enable-mutatingwebhookconfigurations-injectable': 'mutatingwebhookconfiguration',
  'enable-customresourcedefinitions-injectable': 'customresourcedefinition',
  'enable-apiservices-injectable': 'apiservice',
};

/** cainjector's gates; ServerSideApply is kept by cert-manager as a no-op and always on here too. */
const FEATURE_GATES = ['CAInjectorMerging', 'ServerSideApply'] as const;

/** `--feature-gates`: `Gate=bool` pairs, comma-separated, as component-base reads them. */
export function featureGates(value: string): Map<string, boolean> {
  const gates = new Map<string, boolean>();
  for (const entry of value.split(',').map((e) => e.trim())) {
    if (!entry) continue;
    const [name, setting, ...rest] = entry.split('=');
    if (setting === undefined || rest.length > 0)
      throw new UsageError(`--feature-gates: missing bool value for ${name}`);
    if (!(FEATURE_GATES as readonly string[]).includes(name!))
      throw new UsageError(
        `--feature-gates: unrecognized feature gate: ${name} (known: ${FEATURE_GATES.join(', ')})`,
      );
    if (setting !== 'true' && setting !== 'false')
      throw new UsageError(
        `--feature-gates: invalid value of ${name}=${setting}, err: must be true or false`,
      );
    gates.set(name!, setting === 'true');
  }
  return gates;
}

export function cainjectorFlags(values: Record<string, string | boolean | undefined>): CAInjectorFlags {
  const injectables = new Set<InjectableName>();
  for (const [flag, name] of Object.entries(INJECTABLE_FLAGS)) {
    if (bool(flag, String(values[flag]))) injectables.add(name);
  }
  const gates = featureGates(String(values['feature-gates'] ?? ''));
  return {
    leaderElect: bool('leader-elect', String(values['leader-elect'])),
    leaderElectionNamespace: String(values['leader-election-namespace']),
    leaderElectionTimings: leaderElectionTimings(values),
    options: {
      injectables,
      certificatesDataSource: bool(
        'enable-certificates-data-source',
        String(values['enable-certificates-data-source']),
      ),
      ignoreNamespaces: String(values['ignore-namespaces'] ?? '')
        .split(',')
        .map((ns) => ns.trim())
        .filter(Boolean),
      mergeBundles: gates.get('CAInjectorMerging') ?? true,
      metricsBindAddress: String(values['metrics-listen-address']),
    },
  };
}
