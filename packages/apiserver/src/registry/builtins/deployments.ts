/**
 * Deployments (apps/v1), stored and validated as kube-apiserver does, with the status and scale
 * subresources. No controller manager runs here: the status stays as clients write it (empty on create).
 */

import {
  type FieldError,
  goQuote,
  GoSyntax,
  jsonEqual,
  type MetaLabelSelector,
  type StoredObject,
} from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import {
  formatLabelSelector,
  invalid,
  required,
  selectorMatches,
  unsupported,
  validateLabelSelector,
} from './kind-validation.ts';
import { defaultPodSpec, type PodSpec, validatePodSpec } from './pod-spec.ts';

interface DeploymentSpec {
  replicas?: number;
  selector?: MetaLabelSelector;
  template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec };
  strategy?: {
    type?: string;
    rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string };
  };
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
  minReadySeconds?: number;
}

interface DeploymentStatus {
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
}

const specOf = (obj: StoredObject) => (obj.spec ??= {}) as DeploymentSpec;
const statusOf = (obj: StoredObject) => (obj.status ?? {}) as DeploymentStatus;
const STRATEGIES = ['Recreate', 'RollingUpdate'];

/** A Go map[string]string printed with %#v, as kube shows template labels in its message. */
function goStringMap(map: Record<string, string>): GoSyntax {
  const entries = Object.keys(map)
    .sort()
    .map((k) => `${goQuote(k)}:${goQuote(map[k])}`);
  return new GoSyntax(`map[string]string{${entries.join(', ')}}`);
}

function validateIntOrPercent(value: unknown, field: string, errs: FieldError[]): void {
  if (value === undefined) return;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0)
      errs.push(invalid(field, value, 'must be greater than or equal to 0'));
  } else if (!/^\d+%$/.test(String(value))) {
    errs.push(
      invalid(
        field,
        value,
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      ),
    );
  } else if (Number(String(value).slice(0, -1)) > 100) {
    errs.push(invalid(field, value, 'must not be greater than 100%'));
  }
}

export const deployments = builtin({
  group: 'apps',
  resource: 'deployments',
  model: 'V1Deployment',
  singular: 'deployment',
  kind: 'Deployment',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  statusSubresource: true,
  tracksGeneration: true,
  scale: {
    specReplicas: (obj) => specOf(obj).replicas ?? 0,
    statusReplicas: (obj) => statusOf(obj).replicas ?? 0,
    selector: (obj) => formatLabelSelector(specOf(obj).selector),
    setReplicas: (obj, replicas) => {
      specOf(obj).replicas = replicas;
    },
  },
  columns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'Number of the pod with ready state' },
    {
      name: 'Up-to-date',
      type: 'string',
      description:
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
    },
    {
      name: 'Available',
      type: 'string',
      description:
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
    },
    ageColumn,
    {
      name: 'Containers',
      type: 'string',
      priority: 1,
      description: 'Names of each container in the template.',
    },
    {
      name: 'Images',
      type: 'string',
      priority: 1,
      description: 'Images referenced by each container in the template.',
    },
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      description:
        'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
    },
  ],
  cells(obj, now) {
    const spec = specOf(obj);
    const status = statusOf(obj);
    const containers = spec.template?.spec?.containers ?? [];
    return [
      obj.metadata.name,
      `${status.readyReplicas ?? 0}/${spec.replicas ?? 0}`,
      status.updatedReplicas ?? 0,
      status.availableReplicas ?? 0,
      age(obj, now),
      containers.map((c) => c.name ?? '').join(','),
      containers.map((c) => c.image ?? '').join(','),
      formatLabelSelector(spec.selector),
    ];
  },
  defaults(obj) {
    // SetDefaults_Deployment (apps/v1).
    const spec = specOf(obj);
    spec.replicas ??= 1;
    spec.strategy ??= {};
    spec.strategy.type ??= 'RollingUpdate';
    if (spec.strategy.type === 'RollingUpdate') {
      spec.strategy.rollingUpdate ??= {};
      spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
      spec.strategy.rollingUpdate.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    if (spec.template) defaultPodSpec((spec.template.spec ??= {}), false);
  },
  onCreate(obj) {
    obj.status = {};
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const spec = specOf(obj);
    if (spec.replicas !== undefined && spec.replicas < 0) {
      errs.push(invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0'));
    }
    if (!spec.selector) errs.push(required('spec.selector'));
    else {
      validateLabelSelector(spec.selector, 'spec.selector', errs);
      const labels = spec.template?.metadata?.labels ?? {};
      if (
        Object.keys(spec.selector.matchLabels ?? {}).length === 0 &&
        !(spec.selector.matchExpressions ?? []).length
      ) {
        errs.push(invalid('spec.selector', spec.selector, 'empty selector is invalid for deployment'));
      } else if (!selectorMatches(spec.selector, labels)) {
        errs.push(
          invalid(
            'spec.template.metadata.labels',
            goStringMap(labels),
            '`selector` does not match template `labels`',
          ),
        );
      }
    }
    if (old && !jsonEqual(specOf(old).selector, spec.selector)) {
      errs.push(invalid('spec.selector', spec.selector, 'field is immutable'));
    }
    if (!spec.template) errs.push(required('spec.template'));
    else {
      const template = spec.template.spec ?? {};
      validatePodSpec(template, 'spec.template.spec', errs);
      if (template.restartPolicy && template.restartPolicy !== 'Always') {
        errs.push(unsupported('spec.template.spec.restartPolicy', template.restartPolicy, ['Always']));
      }
    }
    const strategy = spec.strategy ?? {};
    if (strategy.type && !STRATEGIES.includes(strategy.type)) {
      errs.push(unsupported('spec.strategy.type', strategy.type, STRATEGIES));
    }
    if (strategy.type === 'Recreate' && strategy.rollingUpdate) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'spec.strategy.rollingUpdate',
        detail: "may not be specified when strategy `type` is 'Recreate'",
      });
    }
    validateIntOrPercent(strategy.rollingUpdate?.maxSurge, 'spec.strategy.rollingUpdate.maxSurge', errs);
    validateIntOrPercent(
      strategy.rollingUpdate?.maxUnavailable,
      'spec.strategy.rollingUpdate.maxUnavailable',
      errs,
    );
    for (const field of ['revisionHistoryLimit', 'progressDeadlineSeconds', 'minReadySeconds'] as const) {
      const v = spec[field];
      if (v !== undefined && v < 0)
        errs.push(invalid(`spec.${field}`, v, 'must be greater than or equal to 0'));
    }
    return errs;
  },
});
