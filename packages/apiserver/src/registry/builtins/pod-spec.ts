/**
 * A PodSpec's defaults, validation and QoS class, as kube-apiserver applies them to Pods and to the pod
 * templates of workloads (Deployments): pkg/apis/core/v1 defaults, pkg/apis/core/validation, pkg/apis/core/
 * helper/qos. Only what a stored object needs; no kubelet or scheduler runs behind these.
 */

import type { FieldError } from '@certkit/apimachinery';
import { parseQuantity } from '../../schema/cel/library-quantity.ts';
import {
  invalid,
  required,
  unsupported,
  validateDnsLabel,
  validatePortNumber,
  validatePortNumOrName,
  validateProtocol,
} from './kind-validation.ts';

export interface Container {
  name?: string;
  image?: string;
  imagePullPolicy?: string;
  ports?: { name?: string; containerPort?: number; protocol?: string; hostPort?: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  restartPolicy?: string;
  env?: { name?: string }[];
}

export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  restartPolicy?: string;
  dnsPolicy?: string;
  terminationGracePeriodSeconds?: number;
  schedulerName?: string;
  securityContext?: object;
  serviceAccountName?: string;
  serviceAccount?: string;
  enableServiceLinks?: boolean;
  preemptionPolicy?: string;
  priority?: number;
  tolerations?: {
    key?: string;
    operator?: string;
    effect?: string;
    tolerationSeconds?: number;
    value?: string;
  }[];
  nodeName?: string;
  hostNetwork?: boolean;
  volumes?: { name?: string }[];
  activeDeadlineSeconds?: number;
}

const RESTART_POLICIES = ['Always', 'Never', 'OnFailure'];
const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

/** Always for `:latest` or an untagged image (digests aside), IfNotPresent otherwise (SetDefaults_Container). */
function defaultPullPolicy(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const tag = lastSegment.includes(':') ? lastSegment.slice(lastSegment.indexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Container): void {
  c.imagePullPolicy ??= defaultPullPolicy(c.image);
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  for (const port of c.ports ?? []) port.protocol ??= 'TCP';
  // Limits without requests request what they limit (SetDefaults_Pod).
  const { limits, requests } = c.resources;
  if (limits && Object.keys(limits).length > 0) {
    c.resources.requests = { ...limits, ...requests };
  }
}

/**
 * The defaults of a PodSpec, with those kube-apiserver's default admission plugins add on a cluster
 * (ServiceAccount: the `default` account; DefaultTolerationSeconds: 300 s for not-ready and unreachable
 * nodes; Priority: 0). A pod template gets the PodSpec's defaults only (`admission` false).
 */
export function defaultPodSpec(spec: PodSpec, admission: boolean): void {
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  if (!admission) return;
  spec.enableServiceLinks ??= true;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  spec.priority ??= 0;
  spec.serviceAccountName ||= spec.serviceAccount || 'default';
  spec.serviceAccount = spec.serviceAccountName;
  const tolerations = (spec.tolerations ??= []);
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const has = tolerations.some(
      (t) =>
        (t.key === key || (!t.key && t.operator === 'Exists')) && (!t.effect || t.effect === 'NoExecute'),
    );
    if (!has) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
}

function validateResources(c: Container, field: string, errs: FieldError[]): void {
  const requests = c.resources?.requests ?? {};
  const limits = c.resources?.limits ?? {};
  for (const [which, map] of [
    ['requests', requests],
    ['limits', limits],
  ] as const) {
    for (const [name, value] of Object.entries(map)) {
      const q = parseQuantity(String(value));
      if (!q) {
        errs.push(
          invalid(
            `${field}.resources.${which}[${name}]`,
            value,
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
          ),
        );
      } else if (q.numerator < 0n) {
        errs.push(
          invalid(`${field}.resources.${which}[${name}]`, value, 'must be greater than or equal to 0'),
        );
      }
    }
  }
  for (const [name, request] of Object.entries(requests)) {
    const limit = limits[name];
    const r = parseQuantity(String(request));
    const l = limit === undefined ? undefined : parseQuantity(String(limit));
    if (r && l && r.compare(l) > 0) {
      errs.push(
        invalid(
          `${field}.resources.requests`,
          request,
          `must be less than or equal to ${name} limit of ${limit}`,
        ),
      );
    }
  }
}

function validateContainers(
  containers: Container[],
  field: string,
  names: Set<string>,
  errs: FieldError[],
): void {
  containers.forEach((c, i) => {
    const at = `${field}[${i}]`;
    if (!c.name) errs.push(required(`${at}.name`));
    else {
      validateDnsLabel(c.name, `${at}.name`, errs);
      if (names.has(c.name)) errs.push({ type: 'FieldValueDuplicate', field: `${at}.name`, value: c.name });
      names.add(c.name);
    }
    if (!c.image) errs.push(required(`${at}.image`));
    if (c.imagePullPolicy && !PULL_POLICIES.includes(c.imagePullPolicy)) {
      errs.push(unsupported(`${at}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
    }
    (c.ports ?? []).forEach((port, j) => {
      const p = `${at}.ports[${j}]`;
      validatePortNumber(port.containerPort, `${p}.containerPort`, errs);
      validateProtocol(port.protocol, `${p}.protocol`, errs);
      if (port.name) validatePortNumOrName(port.name, `${p}.name`, errs);
      if (port.hostPort) validatePortNumber(port.hostPort, `${p}.hostPort`, errs);
    });
    (c.env ?? []).forEach((e, j) => {
      if (!e.name) errs.push(required(`${at}.env[${j}].name`));
    });
    validateResources(c, at, errs);
  });
}

/** ValidatePodSpec, for the parts a stored Pod or template needs; `field` is the spec's path. */
export function validatePodSpec(spec: PodSpec, field: string, errs: FieldError[]): void {
  const names = new Set<string>();
  if (!spec.containers?.length) errs.push(required(`${field}.containers`));
  else validateContainers(spec.containers, `${field}.containers`, names, errs);
  validateContainers(spec.initContainers ?? [], `${field}.initContainers`, names, errs);
  if (spec.restartPolicy && !RESTART_POLICIES.includes(spec.restartPolicy)) {
    errs.push(unsupported(`${field}.restartPolicy`, spec.restartPolicy, RESTART_POLICIES));
  }
  if (spec.dnsPolicy && !DNS_POLICIES.includes(spec.dnsPolicy)) {
    errs.push(unsupported(`${field}.dnsPolicy`, spec.dnsPolicy, DNS_POLICIES));
  }
  const volumes = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    if (!v.name) errs.push(required(`${field}.volumes[${i}].name`));
    else {
      validateDnsLabel(v.name, `${field}.volumes[${i}].name`, errs);
      if (volumes.has(v.name)) {
        errs.push({ type: 'FieldValueDuplicate', field: `${field}.volumes[${i}].name`, value: v.name });
      }
      volumes.add(v.name);
    }
  });
  if (spec.terminationGracePeriodSeconds !== undefined && spec.terminationGracePeriodSeconds < 0) {
    errs.push(
      invalid(
        `${field}.terminationGracePeriodSeconds`,
        spec.terminationGracePeriodSeconds,
        'must be greater than or equal to 0',
      ),
    );
  }
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds < 1) {
    errs.push(
      invalid(
        `${field}.activeDeadlineSeconds`,
        spec.activeDeadlineSeconds,
        'must be between 1 and 2147483647, inclusive',
      ),
    );
  }
}

/**
 * The Pod's QoS class (qos.GetPodQOS): BestEffort without any request or limit, Guaranteed when every
 * container limits CPU and memory and requests what it limits, Burstable otherwise.
 */
export function qosClass(spec: PodSpec): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const containers = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    const isCompute = (name: string) => name === 'cpu' || name === 'memory';
    const nonZero = (v: string) => {
      const q = parseQuantity(String(v));
      return q !== undefined && q.numerator !== 0n;
    };
    if (Object.entries(requests).some(([k, v]) => isCompute(k) && nonZero(v))) any = true;
    if (Object.entries(limits).some(([k, v]) => isCompute(k) && nonZero(v))) any = true;
    for (const name of ['cpu', 'memory']) {
      const limit = limits[name];
      const request = requests[name];
      if (limit === undefined || !nonZero(limit)) {
        guaranteed = false;
        continue;
      }
      const l = parseQuantity(String(limit));
      const r = request === undefined ? l : parseQuantity(String(request));
      if (!l || !r || l.compare(r) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
