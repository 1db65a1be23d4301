/** Endpoints (core/v1): the addresses behind a Service, with kube-apiserver's validation and printer. */

import type { FieldError, StoredObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import {
  listWithMore,
  required,
  validateDnsLabel,
  validateIp,
  validatePortNumber,
  validateProtocol,
} from './kind-validation.ts';

interface EndpointSubset {
  addresses?: { ip?: string; hostname?: string }[];
  notReadyAddresses?: { ip?: string; hostname?: string }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

const subsetsOf = (obj: StoredObject) => (obj.subsets as EndpointSubset[] | undefined) ?? [];

/** The ENDPOINTS cell: `ip:port` for every ready address and port, three at most (kubectl's formatEndpoints). */
function endpointsCell(obj: StoredObject): string {
  const list: string[] = [];
  let count = 0;
  for (const subset of subsetsOf(obj)) {
    const addresses = (subset.addresses ?? []).map((a) => a.ip ?? '');
    const ports = subset.ports ?? [];
    if (ports.length === 0) {
      count += addresses.length;
      for (const address of addresses) list.push(address);
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const ip of addresses) list.push(ip.includes(':') ? `[${ip}]:${port.port}` : `${ip}:${port.port}`);
    }
  }
  return count === 0 ? '<none>' : listWithMore(list, count);
}

export const endpoints = builtin({
  resource: 'endpoints',
  model: 'V1Endpoints',
  singular: 'endpoints',
  kind: 'Endpoints',
  namespaced: true,
  shortNames: ['ep'],
  columns: [
    nameColumn,
    { name: 'Endpoints', type: 'string', description: 'Endpoints of the service' },
    ageColumn,
  ],
  cells: (obj, now) => [obj.metadata.name, endpointsCell(obj), age(obj, now)],
  defaults(obj) {
    for (const subset of subsetsOf(obj)) for (const port of subset.ports ?? []) port.protocol ??= 'TCP';
  },
  validate(obj) {
    const errs: FieldError[] = [];
    subsetsOf(obj).forEach((subset, i) => {
      const field = `subsets[${i}]`;
      if (!subset.addresses?.length && !subset.notReadyAddresses?.length) {
        errs.push(required(`${field}`, 'must specify `addresses` or `notReadyAddresses`'));
      }
      for (const which of ['addresses', 'notReadyAddresses'] as const) {
        (subset[which] ?? []).forEach((address, j) => {
          validateIp(address.ip, `${field}.${which}[${j}].ip`, errs);
          if (address.hostname) validateDnsLabel(address.hostname, `${field}.${which}[${j}].hostname`, errs);
        });
      }
      const ports = subset.ports ?? [];
      ports.forEach((port, j) => {
        const at = `${field}.ports[${j}]`;
        if (ports.length > 1 && !port.name) errs.push(required(`${at}.name`));
        if (port.name) validateDnsLabel(port.name, `${at}.name`, errs);
        validatePortNumber(port.port, `${at}.port`, errs);
        validateProtocol(port.protocol, `${at}.protocol`, errs);
      });
    });
    return errs;
  },
});
