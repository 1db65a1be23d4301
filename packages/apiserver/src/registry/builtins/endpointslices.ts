/** EndpointSlices (discovery.k8s.io/v1): the addresses behind a Service, in slices, as kube-apiserver validates them. */

import { type FieldError, type StoredObject, tooMany } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import {
  invalid,
  ipFamily,
  listWithMore,
  required,
  unsupported,
  validateDnsLabel,
  validatePortNumber,
  validateProtocol,
} from './kind-validation.ts';
import { dns1123SubdomainErrors } from '@certkit/apimachinery';

interface Endpoint {
  addresses?: string[];
  hostname?: string;
}

interface EndpointPort {
  name?: string;
  port?: number;
  protocol?: string;
}

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;

const endpointsOf = (obj: StoredObject) => (obj.endpoints as Endpoint[] | undefined) ?? [];
const portsOf = (obj: StoredObject) => (obj.ports as EndpointPort[] | undefined) ?? [];

/** The PORTS cell (kubectl's formatPorts for slices): numbers, a name for a port without one, `<unset>`. */
function portsCell(obj: StoredObject): string {
  const ports = portsOf(obj);
  if (ports.length === 0) return '<unset>';
  return listWithMore(
    ports.map((p) => (p.port !== undefined ? String(p.port) : (p.name ?? '*'))),
    ports.length,
  );
}

function endpointsCell(obj: StoredObject): string {
  const endpoints = endpointsOf(obj);
  if (endpoints.length === 0) return '<unset>';
  const addresses = endpoints.flatMap((e) => e.addresses ?? []);
  return listWithMore(addresses, addresses.length);
}

function validateAddress(type: string, address: string, field: string, errs: FieldError[]): void {
  if (type === 'FQDN') {
    for (const msg of dns1123SubdomainErrors(address)) errs.push(invalid(field, address, msg));
  } else if (ipFamily(address) !== type) {
    errs.push(invalid(field, address, `must be a valid ${type} address`));
  }
}

export const endpointslices = builtin({
  group: 'discovery.k8s.io',
  resource: 'endpointslices',
  model: 'V1EndpointSlice',
  singular: 'endpointslice',
  kind: 'EndpointSlice',
  namespaced: true,
  columns: [
    nameColumn,
    {
      name: 'AddressType',
      type: 'string',
      description: 'addressType specifies the type of address carried by this EndpointSlice.',
    },
    {
      name: 'Ports',
      type: 'string',
      description: 'ports specifies the list of network ports exposed by each endpoint in this slice.',
    },
    {
      name: 'Endpoints',
      type: 'string',
      description: 'endpoints is a list of unique endpoints in this slice.',
    },
    ageColumn,
  ],
  cells: (obj, now) => [
    obj.metadata.name,
    obj.addressType ?? '',
    portsCell(obj),
    endpointsCell(obj),
    age(obj, now),
  ],
  defaults(obj) {
    // SetDefaults_EndpointPort: a port without name or protocol gets "" and TCP.
    for (const port of portsOf(obj)) {
      port.name ??= '';
      port.protocol ??= 'TCP';
    }
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const type = obj.addressType as string | undefined;
    if (!type) errs.push(required('addressType'));
    else if (!ADDRESS_TYPES.includes(type)) errs.push(unsupported('addressType', type, ADDRESS_TYPES));
    if (old && old.addressType !== type) errs.push(invalid('addressType', type, 'field is immutable'));
    const endpoints = endpointsOf(obj);
    if (endpoints.length > MAX_ENDPOINTS) errs.push(tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
    endpoints.forEach((endpoint, i) => {
      const field = `endpoints[${i}]`;
      const addresses = endpoint.addresses ?? [];
      if (addresses.length === 0)
        errs.push(required(`${field}.addresses`, 'must contain at least 1 address'));
      else if (addresses.length > MAX_ADDRESSES)
        errs.push(tooMany(`${field}.addresses`, addresses.length, MAX_ADDRESSES));
      if (type && ADDRESS_TYPES.includes(type)) {
        addresses.forEach((a, j) => validateAddress(type, a, `${field}.addresses[${j}]`, errs));
      }
      if (endpoint.hostname) validateDnsLabel(endpoint.hostname, `${field}.hostname`, errs);
    });
    const ports = portsOf(obj);
    if (ports.length > MAX_PORTS) errs.push(tooMany('ports', ports.length, MAX_PORTS));
    const names = new Set<string>();
    ports.forEach((port, i) => {
      const field = `ports[${i}]`;
      if (port.name) validateDnsLabel(port.name, `${field}.name`, errs);
      if (names.has(port.name ?? ''))
        errs.push({ type: 'FieldValueDuplicate', field: `${field}.name`, value: port.name ?? '' });
      names.add(port.name ?? '');
      if (port.port !== undefined) validatePortNumber(port.port, `${field}.port`, errs);
      validateProtocol(port.protocol, `${field}.protocol`, errs);
    });
    return errs;
  },
});
