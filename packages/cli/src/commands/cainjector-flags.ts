import type { CAInjectorOptions } from '@certkit/certificates/cainjector/cainjector';
import type { InjectableName } from '@certkit/certificates/cainjector/injectables';
import type { FeatureGates, FeatureGateTable } from '@certkit/certificates/controllers/feature-gates';
import { bool, featureGates, type LeaderElectionTimings, leaderElectionTimings } from './controller-flags.ts';

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

/** cainjector's gates; ServerSideApply is kept by cert-manager as a no-op, and certkit always applies. */
const CAINJECTOR_FEATURE_GATES: FeatureGateTable = {
  CAInjectorMerging: { default: true, preRelease: 'GA' },
  ServerSideApply: { default: false, preRelease: 'Alpha' },
};

/** `--feature-gates`: cainjector's `Gate=bool` pairs, read as the controller's are. */
export function cainjectorFeatureGates(value: string): FeatureGates {
  return featureGates(value, CAINJECTOR_FEATURE_GATES);
}

export function cainjectorFlags(values: Record<string, string | boolean | undefined>): CAInjectorFlags {
  const injectables = new Set<InjectableName>();
  for (const [flag, name] of Object.entries(INJECTABLE_FLAGS)) {
    if (bool(flag, String(values[flag]))) injectables.add(name);
  }
  const gates = cainjectorFeatureGates(String(values['feature-gates'] ?? ''));
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
      mergeBundles: gates.get('CAInjectorMerging') !== false,
      metricsBindAddress: String(values['metrics-listen-address']),
    },
  };
}
