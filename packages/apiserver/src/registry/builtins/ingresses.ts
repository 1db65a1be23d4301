/** Ingresses and IngressClasses (networking.k8s.io/v1), with kube-apiserver's validation and printers. */

import type { FieldError, StoredObject } from '@certkit/apimachinery';
import { ageColumn, nameColumn } from '../printing.ts';
import { dns1123SubdomainErrors } from '@certkit/apimachinery';
import { age, builtin } from './builtin.ts';
import {
  invalid,
  ipFamily,
  portNameErrors,
  required,
  unsupported,
  validatePortNumber,
} from './kind-validation.ts';

interface ServiceBackend {
  name?: string;
  port?: { name?: string; number?: number };
}

interface Backend {
  service?: ServiceBackend;
  resource?: { apiGroup?: string; kind?: string; name?: string };
}

interface IngressSpec {
  ingressClassName?: string;
  defaultBackend?: Backend;
  tls?: { hosts?: string[]; secretName?: string }[];
  rules?: {
    host?: string;
    http?: { paths?: { path?: string; pathType?: string; backend?: Backend }[] };
  }[];
}

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
/** Hosts longer than this are cut in the ADDRESS column (kubectl's loadBalancerWidth). */
const LOAD_BALANCER_WIDTH = 16;

const specOf = (obj: StoredObject) => (obj.spec ??= {}) as IngressSpec;

/** HOSTS: up to three rule hosts then `+ N more...`, `*` when no rule names one (kubectl's formatHosts). */
function hostsCell(spec: IngressSpec): string {
  const rules = spec.rules ?? [];
  const hosts: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (hosts.length === 3) more = true;
    if (!more && rule.host) hosts.push(rule.host);
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
}

function addressCell(obj: StoredObject): string {
  const ingress =
    (obj.status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } })?.loadBalancer
      ?.ingress ?? [];
  const text = ingress
    .map((i) => i.ip || i.hostname || '')
    .filter(Boolean)
    .join(',');
  return text.length > LOAD_BALANCER_WIDTH ? `${text.slice(0, LOAD_BALANCER_WIDTH - 3)}...` : text;
}

/** A host or TLS host: a DNS subdomain, optionally with a `*.` wildcard first label, never an IP. */
function validateHost(host: string, field: string, errs: FieldError[]): void {
  if (ipFamily(host)) {
    errs.push(invalid(field, host, 'must be a DNS name, not an IP address'));
    return;
  }
  const name = host.startsWith('*.') ? host.slice(2) : host;
  for (const msg of dns1123SubdomainErrors(name)) {
    errs.push(
      invalid(
        field,
        host,
        host.startsWith('*.')
          ? `a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
          : msg,
      ),
    );
  }
}

function validateBackend(backend: Backend, field: string, errs: FieldError[]): void {
  if (backend.service && backend.resource) {
    errs.push(invalid(field, '', 'cannot set both resource and service backends'));
  } else if (backend.service) {
    const service = backend.service;
    if (!service.name) errs.push(required(`${field}.service.name`));
    else if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(service.name) || service.name.length > 63) {
      errs.push(
        invalid(
          `${field}.service.name`,
          service.name,
          "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
      );
    }
    const port = service.port ?? {};
    if (port.name && port.number) {
      errs.push(invalid(`${field}.service.port`, port, 'cannot set both port name & port number'));
    } else if (port.name) {
      for (const msg of portNameErrors(port.name))
        errs.push(invalid(`${field}.service.port.name`, port.name, msg));
    } else if (port.number !== undefined) {
      validatePortNumber(port.number, `${field}.service.port.number`, errs);
    } else {
      errs.push(required(`${field}.service.port`, 'port name or number is required'));
    }
  } else if (backend.resource) {
    if (!backend.resource.kind) errs.push(required(`${field}.resource.kind`));
    if (!backend.resource.name) errs.push(required(`${field}.resource.name`));
  } else {
    errs.push(invalid(field, '', 'resource or service backend is required'));
  }
}

export const ingresses = builtin({
  group: 'networking.k8s.io',
  resource: 'ingresses',
  model: 'V1Ingress',
  singular: 'ingress',
  kind: 'Ingress',
  namespaced: true,
  shortNames: ['ing'],
  statusSubresource: true,
  tracksGeneration: true,
  columns: [
    nameColumn,
    { name: 'Class', type: 'string', description: 'The name of the IngressClass resource.' },
    {
      name: 'Hosts',
      type: 'string',
      description: 'Hosts that incoming requests are matched against before the ingress rule',
    },
    {
      name: 'Address',
      type: 'string',
      description: 'Address is a list containing ingress points for the load-balancer',
    },
    { name: 'Ports', type: 'string', description: 'Ports of TLS configurations that open' },
    ageColumn,
  ],
  cells(obj, now) {
    const spec = specOf(obj);
    return [
      obj.metadata.name,
      spec.ingressClassName || '<none>',
      hostsCell(spec),
      addressCell(obj),
      (spec.tls ?? []).length > 0 ? '80, 443' : '80',
      age(obj, now),
    ];
  },
  onCreate(obj) {
    obj.status = {};
  },
  validate(obj) {
    const errs: FieldError[] = [];
    const spec = specOf(obj);
    if (!spec.defaultBackend && !(spec.rules ?? []).length) {
      errs.push(invalid('spec', spec, 'either `defaultBackend` or `rules` must be specified'));
    }
    if (spec.defaultBackend) validateBackend(spec.defaultBackend, 'spec.defaultBackend', errs);
    if (spec.ingressClassName) {
      for (const msg of dns1123SubdomainErrors(spec.ingressClassName)) {
        errs.push(invalid('spec.ingressClassName', spec.ingressClassName, msg));
      }
    }
    (spec.tls ?? []).forEach((tls, i) => {
      (tls.hosts ?? []).forEach((host, j) => validateHost(host, `spec.tls[${i}].hosts[${j}]`, errs));
      if (tls.secretName) {
        for (const msg of dns1123SubdomainErrors(tls.secretName))
          errs.push(invalid(`spec.tls[${i}].secretName`, tls.secretName, msg));
      }
    });
    (spec.rules ?? []).forEach((rule, i) => {
      const at = `spec.rules[${i}]`;
      if (rule.host) validateHost(rule.host, `${at}.host`, errs);
      if (!rule.http) return;
      const paths = rule.http.paths ?? [];
      if (paths.length === 0) errs.push(required(`${at}.http.paths`));
      paths.forEach((path, j) => {
        const p = `${at}.http.paths[${j}]`;
        if (!path.pathType) errs.push(required(`${p}.pathType`, 'pathType must be specified'));
        else if (!PATH_TYPES.includes(path.pathType))
          errs.push(unsupported(`${p}.pathType`, path.pathType, PATH_TYPES));
        else if (path.pathType !== 'ImplementationSpecific' || path.path) {
          if (!path.path?.startsWith('/'))
            errs.push(invalid(`${p}.path`, path.path ?? '', 'must be an absolute path'));
          else if (
            path.pathType !== 'ImplementationSpecific' &&
            /\/\/|\/\.\.?(\/|$)|%2f|%2F/.test(path.path)
          ) {
            errs.push(invalid(`${p}.path`, path.path, "must not contain '//', '/./', '/../', or '%2f'"));
          }
        }
        validateBackend(path.backend ?? {}, `${p}.backend`, errs);
      });
    });
    return errs;
  },
});

export const ingressclasses = builtin({
  group: 'networking.k8s.io',
  resource: 'ingressclasses',
  model: 'V1IngressClass',
  singular: 'ingressclass',
  kind: 'IngressClass',
  namespaced: false,
  columns: [
    nameColumn,
    {
      name: 'Controller',
      type: 'string',
      description: 'Controller that is responsible for handling this class',
    },
    {
      name: 'Parameters',
      type: 'string',
      description: 'A reference to a resource with additional parameters',
    },
    ageColumn,
  ],
  cells(obj, now) {
    const spec = (obj.spec ?? {}) as {
      controller?: string;
      parameters?: { apiGroup?: string; kind?: string; name?: string };
    };
    const p = spec.parameters;
    const parameters = p ? `${p.kind}${p.apiGroup ? `.${p.apiGroup}` : ''}/${p.name}` : '<none>';
    return [obj.metadata.name, spec.controller ?? '', parameters, age(obj, now)];
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    const spec = (obj.spec ?? {}) as {
      controller?: string;
      parameters?: { kind?: string; name?: string; scope?: string; namespace?: string };
    };
    if (!spec.controller) errs.push(required('spec.controller'));
    else {
      // IsDomainPrefixedPath: a DNS subdomain, then a path.
      const slash = spec.controller.indexOf('/');
      if (slash < 0) {
        errs.push(
          invalid(
            'spec.controller',
            spec.controller,
            'must be a domain-prefixed path (such as "acme.io/foo")',
          ),
        );
      } else {
        const host = spec.controller.slice(0, slash);
        for (const msg of dns1123SubdomainErrors(host)) errs.push(invalid('spec.controller', host, msg));
      }
    }
    const oldController = (old?.spec as { controller?: string } | undefined)?.controller;
    if (old && oldController !== spec.controller) {
      errs.push(invalid('spec.controller', spec.controller ?? '', 'field is immutable'));
    }
    const p = spec.parameters;
    if (p) {
      if (!p.kind) errs.push(required('spec.parameters.kind'));
      if (!p.name) errs.push(required('spec.parameters.name'));
      if (p.scope && !['Cluster', 'Namespace'].includes(p.scope)) {
        errs.push(unsupported('spec.parameters.scope', p.scope, ['Cluster', 'Namespace']));
      }
      if (p.scope === 'Namespace' && !p.namespace) {
        errs.push(required('spec.parameters.namespace', "`parameters.scope` is set to 'Namespace'"));
      }
    }
    return errs;
  },
});
