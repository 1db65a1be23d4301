/**
 * APIServices (apiregistration.k8s.io/v1): stored and validated as kube-apiserver's aggregator validates them,
 * so that manifests registering an extension API (and cainjector, which patches their caBundle) work. No
 * aggregation happens: requests for the group they name are not proxied anywhere.
 */

import type { FieldError, StoredObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import { invalid, required, validatePortNumber } from './kind-validation.ts';

interface ApiServiceSpec {
  group?: string;
  version?: string;
  service?: { namespace?: string; name?: string; port?: number };
  caBundle?: string;
  insecureSkipTLSVerify?: boolean;
  groupPriorityMinimum?: number;
  versionPriority?: number;
}

const specOf = (obj: StoredObject) => (obj.spec ??= {}) as ApiServiceSpec;

function availableCell(obj: StoredObject): string {
  const conditions =
    (obj.status as { conditions?: { type?: string; status?: string; reason?: string }[] })?.conditions ?? [];
  const available = conditions.find((c) => c.type === 'Available');
  if (!available) return 'Unknown';
  return available.reason ? `${available.status} (${available.reason})` : (available.status ?? '');
}

export const apiservices = builtin({
  group: 'apiregistration.k8s.io',
  resource: 'apiservices',
  model: 'V1APIService',
  singular: 'apiservice',
  kind: 'APIService',
  namespaced: false,
  categories: ['api-extensions'],
  statusSubresource: true,
  columns: [
    nameColumn,
    {
      name: 'Service',
      type: 'string',
      description: 'The reference to the service that hosts this API endpoint.',
    },
    { name: 'Available', type: 'string', description: 'Whether this service is available.' },
    ageColumn,
  ],
  cells(obj, now) {
    const service = specOf(obj).service;
    return [
      obj.metadata.name,
      service ? `${service.namespace}/${service.name}` : 'Local',
      availableCell(obj),
      age(obj, now),
    ];
  },
  defaults(obj) {
    const service = specOf(obj).service;
    if (service) service.port ??= 443;
  },
  validate(obj) {
    const errs: FieldError[] = [];
    const spec = specOf(obj);
    const expected = `${spec.version ?? ''}.${spec.group ?? ''}`;
    if (obj.metadata.name !== expected) {
      errs.push(
        invalid(
          'metadata.name',
          obj.metadata.name,
          `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(expected)}`,
        ),
      );
    }
    if (!spec.group && spec.version !== 'v1') {
      errs.push(required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
    }
    if (!spec.version) errs.push(required('spec.version'));
    const priority = spec.groupPriorityMinimum ?? 0;
    if (priority <= 0 || priority > 20000) {
      errs.push(invalid('spec.groupPriorityMinimum', priority, 'must be positive and less than 20000'));
    }
    const versionPriority = spec.versionPriority ?? 0;
    if (versionPriority <= 0 || versionPriority > 1000) {
      errs.push(invalid('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
    }
    if (!spec.service) {
      if (spec.caBundle)
        errs.push(
          invalid(
            'spec.caBundle',
            `${spec.caBundle.length} bytes`,
            'local APIServices may not have a caBundle',
          ),
        );
      if (spec.insecureSkipTLSVerify) {
        errs.push(
          invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'),
        );
      }
    } else {
      if (!spec.service.namespace) errs.push(required('spec.service.namespace'));
      if (!spec.service.name) errs.push(required('spec.service.name'));
      validatePortNumber(spec.service.port, 'spec.service.port', errs);
    }
    if (spec.insecureSkipTLSVerify && spec.caBundle) {
      errs.push(invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
    }
    return errs;
  },
});
