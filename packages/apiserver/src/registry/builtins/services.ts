/**
 * Services (core/v1), as kube-apiserver serves them: defaults, validation, a status subresource, and a cluster
 * IP (and node ports) taken from the server's ranges on create (service-ranges.ts), or none for a headless
 * (`clusterIP: None`) or ExternalName Service.
 */

import { type FieldError, goQuote, GoSyntax, goStringSlice, type StoredObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import {
  formatLabels,
  invalid,
  ipFamily,
  required,
  unsupported,
  validateDnsLabel,
  validateLabelMap,
  validatePortNumber,
  validatePortNumOrName,
  validateProtocol,
} from './kind-validation.ts';
import {
  allocateClusterIp,
  allocateNodePort,
  Reservation,
  type ServiceRanges,
  serviceRanges,
} from './service-ranges.ts';
import { dns1123SubdomainErrors } from '@certkit/apimachinery';
import {
  defaultSessionAffinityConfig,
  type ServiceNetworkFields,
  validateServiceNetworkFields,
} from './service-fields.ts';

interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

interface ServiceSpec extends ServiceNetworkFields {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: ServicePort[];
  selector?: Record<string, string>;
  externalName?: string;
  externalIPs?: string[];
  sessionAffinity?: string;
  internalTrafficPolicy?: string;
  externalTrafficPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  healthCheckNodePort?: number;
  ipFamilies?: string[];
}

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const HEADLESS = 'None';

const specOf = (obj: StoredObject): ServiceSpec => (obj.spec ??= {}) as ServiceSpec;
const typeOf = (spec: ServiceSpec) => spec.type ?? 'ClusterIP';
const needsClusterIp = (spec: ServiceSpec) => typeOf(spec) !== 'ExternalName';
/** A LoadBalancer that keeps traffic on the node it lands on has a port for the load balancer's checks. */
const needsHealthCheckPort = (spec: ServiceSpec) =>
  typeOf(spec) === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
const needsNodePorts = (spec: ServiceSpec) => typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';

/** The EXTERNAL-IP cell, as kubectl's service printer writes it. */
function externalIp(obj: StoredObject): string {
  const spec = specOf(obj);
  const external = spec.externalIPs ?? [];
  switch (typeOf(spec)) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress =
        (obj.status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } })?.loadBalancer
          ?.ingress ?? [];
      const all = [...external, ...ingress.map((i) => i.ip || i.hostname || '').filter(Boolean)];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

function portsCell(spec: ServiceSpec): string {
  const ports = spec.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports
    .map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`))
    .join(',');
}

/** The ranges of the server the store belongs to, or kube-apiserver's defaults. */
function rangesOf(context: {
  storage: ServiceRanges['storage'];
  serviceRanges?: ServiceRanges;
}): ServiceRanges {
  return context.serviceRanges ?? serviceRanges(context.storage);
}

/**
 * On an update, values the Service was given keep being its own when the new object leaves them out (kubectl
 * replace and apply of a manifest that never named them), and are dropped when its new type holds none and
 * the client left them as they were (kube's patchAllocatedValues and dropTypeDependentFields).
 */
function carryAllocatedValues(spec: ServiceSpec, old: ServiceSpec): void {
  if (needsClusterIp(old) && needsClusterIp(spec)) {
    if (!spec.clusterIP && !spec.clusterIPs?.length) {
      spec.clusterIP = old.clusterIP;
      spec.clusterIPs = old.clusterIPs;
    }
    spec.ipFamilies ??= old.ipFamilies;
    spec.ipFamilyPolicy ??= old.ipFamilyPolicy;
  }
  if (!needsClusterIp(spec) && needsClusterIp(old) && spec.clusterIP === old.clusterIP) {
    delete spec.clusterIP;
    delete spec.clusterIPs;
    delete spec.ipFamilies;
    delete spec.ipFamilyPolicy;
  }
  const oldPorts = old.ports ?? [];
  if (needsNodePorts(old) && needsNodePorts(spec)) {
    const used = new Set((spec.ports ?? []).map((p) => p.nodePort).filter(Boolean));
    for (const port of spec.ports ?? []) {
      if (port.nodePort) continue;
      const same = oldPorts.find(
        (o) => o.port === port.port && o.protocol === port.protocol && o.nodePort && !used.has(o.nodePort),
      );
      if (same) {
        port.nodePort = same.nodePort;
        used.add(same.nodePort);
      }
    }
  }
  if (!needsNodePorts(spec) && needsNodePorts(old)) {
    for (const port of spec.ports ?? []) {
      if (port.nodePort && oldPorts.some((o) => o.nodePort === port.nodePort)) delete port.nodePort;
    }
  }
  if (needsHealthCheckPort(old) && needsHealthCheckPort(spec))
    spec.healthCheckNodePort ||= old.healthCheckNodePort;
  if (!needsHealthCheckPort(spec) && spec.healthCheckNodePort === old.healthCheckNodePort) {
    delete spec.healthCheckNodePort;
  }
  if (typeOf(spec) !== typeOf(old) && typeOf(spec) !== 'NodePort' && typeOf(spec) !== 'LoadBalancer') {
    delete spec.externalTrafficPolicy;
  }
}

function validatePorts(spec: ServiceSpec, errs: FieldError[]): void {
  const ports = spec.ports ?? [];
  const type = typeOf(spec);
  if (ports.length === 0 && type !== 'ExternalName' && spec.clusterIP !== HEADLESS) {
    errs.push(required('spec.ports'));
  }
  const names = new Set<string>();
  const pairs = new Set<string>();
  ports.forEach((port, i) => {
    const field = `spec.ports[${i}]`;
    // Two ports may not share protocol and number; kube shows the key as the Go struct it compares.
    const pair = `${port.protocol}/${port.port}`;
    if (pairs.has(pair)) {
      errs.push({
        type: 'FieldValueDuplicate',
        field,
        value: new GoSyntax(
          `core.ServicePort{Name:"", Protocol:${goQuote(port.protocol ?? '')}, AppProtocol:(*string)(nil), Port:${port.port ?? 0}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
        ),
      });
    }
    pairs.add(pair);
    if (ports.length > 1 && !port.name) errs.push(required(`${field}.name`));
    if (port.name) {
      validateDnsLabel(port.name, `${field}.name`, errs);
      if (names.has(port.name))
        errs.push({ type: 'FieldValueDuplicate', field: `${field}.name`, value: port.name });
      names.add(port.name);
    }
    validatePortNumber(port.port, `${field}.port`, errs);
    validateProtocol(port.protocol, `${field}.protocol`, errs);
    validatePortNumOrName(port.targetPort, `${field}.targetPort`, errs);
    if (port.nodePort && type !== 'NodePort' && type !== 'LoadBalancer') {
      errs.push({
        type: 'FieldValueForbidden',
        field: `${field}.nodePort`,
        detail: `may not be used when \`type\` is '${type}'`,
      });
    } else if (port.nodePort !== undefined && port.nodePort !== 0) {
      validatePortNumber(port.nodePort, `${field}.nodePort`, errs);
    }
  });
}

function validateClusterIps(spec: ServiceSpec, old: ServiceSpec | undefined, errs: FieldError[]): void {
  const ips = spec.clusterIPs ?? [];
  if (typeOf(spec) === 'ExternalName') {
    if (spec.clusterIP || ips.length > 0) {
      errs.push({
        type: 'FieldValueForbidden',
        field: 'spec.clusterIPs',
        detail: 'may not be set for ExternalName services',
      });
    }
    return;
  }
  if (ips.length > 0 && spec.clusterIP && ips[0] !== spec.clusterIP) {
    errs.push(invalid('spec.clusterIPs', goStringSlice(ips), 'first value must match `clusterIP`'));
  }
  if (ips.length > 1) {
    errs.push(
      invalid(
        'spec.clusterIPs',
        goStringSlice(ips),
        'dual-stack services are not served: only one cluster IP may be given',
      ),
    );
  }
  ips.forEach((ip, i) => {
    if (ip !== HEADLESS && !ipFamily(ip)) {
      errs.push(
        invalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
      );
    } else if (ip !== HEADLESS && ipFamily(ip) !== 'IPv4') {
      errs.push(invalid(`spec.clusterIPs[${i}]`, ip, 'only IPv4 cluster IPs are served here'));
    }
  });
  if (old && needsClusterIp(old) && old.clusterIP && spec.clusterIP !== old.clusterIP) {
    errs.push(invalid('spec.clusterIPs[0]', spec.clusterIP ?? '', 'may not change once set'));
  }
}

export const services = builtin({
  resource: 'services',
  model: 'V1Service',
  singular: 'service',
  kind: 'Service',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  statusSubresource: true,
  selectableFields: ['spec.clusterIP', 'spec.type'],
  fieldValues: (obj) => ({ 'spec.clusterIP': specOf(obj).clusterIP ?? '', 'spec.type': typeOf(specOf(obj)) }),
  columns: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'type determines how the Service is exposed.' },
    { name: 'Cluster-IP', type: 'string', description: 'clusterIP is the IP address of the service.' },
    {
      name: 'External-IP',
      type: 'string',
      description:
        'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic.',
    },
    { name: 'Port(s)', type: 'string', description: 'The list of ports that are exposed by this service.' },
    ageColumn,
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      description: 'Route service traffic to pods with label keys and values matching this selector.',
    },
  ],
  cells(obj, now) {
    const spec = specOf(obj);
    return [
      obj.metadata.name,
      typeOf(spec),
      spec.clusterIP || '<none>',
      externalIp(obj),
      portsCell(spec),
      age(obj, now),
      formatLabels(spec.selector),
    ];
  },
  defaults(obj) {
    // SetDefaults_Service, and the ipFamily fields the registry sets for a single-stack IPv4 server.
    const spec = specOf(obj);
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    defaultSessionAffinityConfig(spec);
    for (const port of spec.ports ?? []) {
      port.protocol ??= 'TCP';
      if (
        port.targetPort === undefined ||
        port.targetPort === null ||
        port.targetPort === 0 ||
        port.targetPort === ''
      )
        port.targetPort = port.port;
    }
    if (spec.type !== 'ExternalName') spec.internalTrafficPolicy ??= 'Cluster';
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
    if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
    if (spec.clusterIP && !spec.clusterIPs?.length) spec.clusterIPs = [spec.clusterIP];
    if (!spec.clusterIP && spec.clusterIPs?.length) spec.clusterIP = spec.clusterIPs[0];
  },
  admit(obj, _version, old) {
    if (old) carryAllocatedValues(specOf(obj), specOf(old));
    return [];
  },
  onCreate(obj) {
    // A new Service has no load balancer yet, whatever the client wrote (PrepareForCreate).
    obj.status = { loadBalancer: {} };
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const spec = specOf(obj);
    const type = typeOf(spec);
    if (!SERVICE_TYPES.includes(type)) errs.push(unsupported('spec.type', type, SERVICE_TYPES));
    if (type === 'ExternalName') {
      if (!spec.externalName) errs.push(required('spec.externalName'));
      else {
        for (const msg of dns1123SubdomainErrors(spec.externalName.replace(/\.$/, ''))) {
          errs.push(invalid('spec.externalName', spec.externalName, msg));
        }
      }
    }
    validateClusterIps(spec, old ? specOf(old) : undefined, errs);
    validatePorts(spec, errs);
    validateLabelMap(spec.selector, 'spec.selector', errs);
    (spec.externalIPs ?? []).forEach((ip, i) => {
      if (!ipFamily(ip))
        errs.push(
          invalid(
            `spec.externalIPs[${i}]`,
            ip,
            'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
          ),
        );
    });
    if (spec.healthCheckNodePort) {
      if (!needsHealthCheckPort(spec)) {
        errs.push(
          invalid(
            'spec.healthCheckNodePort',
            spec.healthCheckNodePort,
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
          ),
        );
      } else validatePortNumber(spec.healthCheckNodePort, 'spec.healthCheckNodePort', errs);
    }
    if (!['ClientIP', 'None'].includes(spec.sessionAffinity ?? 'None')) {
      errs.push(unsupported('spec.sessionAffinity', spec.sessionAffinity, ['ClientIP', 'None']));
    }
    validateServiceNetworkFields(spec, errs);
    if (spec.internalTrafficPolicy && !['Cluster', 'Local'].includes(spec.internalTrafficPolicy)) {
      errs.push(unsupported('spec.internalTrafficPolicy', spec.internalTrafficPolicy, ['Cluster', 'Local']));
    }
    if (spec.externalTrafficPolicy) {
      if (type !== 'NodePort' && type !== 'LoadBalancer') {
        errs.push(
          invalid(
            'spec.externalTrafficPolicy',
            spec.externalTrafficPolicy,
            "may only be set when `type` is 'NodePort' or 'LoadBalancer'",
          ),
        );
      } else if (!['Cluster', 'Local'].includes(spec.externalTrafficPolicy)) {
        errs.push(
          unsupported('spec.externalTrafficPolicy', spec.externalTrafficPolicy, ['Cluster', 'Local']),
        );
      }
    }
    return errs;
  },
  async reserve(obj, old, context, dryRun) {
    const ranges = rangesOf(context);
    const spec = specOf(obj);
    const before = old ? specOf(old) : undefined;
    const reservation = new Reservation(ranges.storage);
    try {
      if (needsClusterIp(spec)) {
        if (spec.clusterIP === HEADLESS) spec.clusterIPs = [HEADLESS];
        else if (!(
          before &&
          needsClusterIp(before) &&
          before.clusterIP &&
          before.clusterIP === spec.clusterIP
        )) {
          const ip = await allocateClusterIp(ranges, obj, spec.clusterIP || undefined, reservation, dryRun);
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        }
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
      }
      const held = new Set(
        before && needsNodePorts(before) ? (before.ports ?? []).map((p) => p.nodePort) : [],
      );
      const allocates =
        typeOf(spec) === 'NodePort' ||
        (typeOf(spec) === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
      if (needsNodePorts(spec)) {
        for (const [i, port] of (spec.ports ?? []).entries()) {
          if (port.nodePort && held.has(port.nodePort)) continue;
          if (!port.nodePort && !allocates) continue;
          port.nodePort = await allocateNodePort(
            ranges,
            obj,
            `spec.ports[${i}].nodePort`,
            port.nodePort || undefined,
            reservation,
            dryRun,
          );
        }
      }
      const heldHealthCheck = before && needsHealthCheckPort(before) ? before.healthCheckNodePort : undefined;
      if (
        needsHealthCheckPort(spec) &&
        !(spec.healthCheckNodePort && spec.healthCheckNodePort === heldHealthCheck)
      ) {
        spec.healthCheckNodePort = await allocateNodePort(
          ranges,
          obj,
          'spec.healthCheckNodePort',
          spec.healthCheckNodePort || undefined,
          reservation,
          dryRun,
        );
      }
    } catch (err) {
      await reservation.release();
      throw err;
    }
    return () => reservation.release();
  },
});
