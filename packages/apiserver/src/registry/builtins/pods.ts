/**
 * Pods (core/v1), stored and validated as kube-apiserver does. No scheduler or kubelet runs here: a Pod stays
 * Pending with the QoS class its strategy computes on create, unless a client writes its status subresource
 * (as tests do to play the kubelet).
 */

import { type FieldError, jsonEqual, type StoredObject } from '@certkit/apimachinery';
import { ageColumn, humanAge, nameColumn } from '../printing.ts';
import { age, builtin } from './builtin.ts';
import { defaultPodSpec, type PodSpec, qosClass, validatePodSpec } from './pod-spec.ts';

interface ContainerStatus {
  ready?: boolean;
  restartCount?: number;
  state?: {
    waiting?: { reason?: string };
    terminated?: { reason?: string; exitCode?: number; signal?: number };
  };
  lastState?: { terminated?: { finishedAt?: string } };
}

interface PodStatus {
  phase?: string;
  reason?: string;
  podIP?: string;
  podIPs?: { ip?: string }[];
  nominatedNodeName?: string;
  containerStatuses?: ContainerStatus[];
  conditions?: { type?: string; status?: string }[];
  qosClass?: string;
}

const specOf = (obj: StoredObject) => (obj.spec ??= {}) as PodSpec;
const statusOf = (obj: StoredObject) => (obj.status ?? {}) as PodStatus;

/** The STATUS cell: the phase, or what holds the containers, or Terminating (kubectl's printPod, in short). */
function podStatusCell(obj: StoredObject): string {
  const status = statusOf(obj);
  let reason = status.reason || status.phase || '';
  for (const cs of [...(status.containerStatuses ?? [])].reverse()) {
    const state = cs.state ?? {};
    if (state.waiting?.reason) reason = state.waiting.reason;
    else if (state.terminated?.reason) reason = state.terminated.reason;
    else if (state.terminated) {
      reason = state.terminated.signal
        ? `Signal:${state.terminated.signal}`
        : `ExitCode:${state.terminated.exitCode ?? 0}`;
    }
  }
  if (obj.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function restartsCell(obj: StoredObject, now: number): string {
  let restarts = 0;
  let last: string | undefined;
  for (const cs of statusOf(obj).containerStatuses ?? []) {
    restarts += cs.restartCount ?? 0;
    const finished = cs.lastState?.terminated?.finishedAt;
    if (finished && (!last || finished > last)) last = finished;
  }
  return last && restarts > 0 ? `${restarts} (${humanAge(last, now)} ago)` : String(restarts);
}

/** Everything but what a Pod update may change (ValidatePodUpdate): images, deadlines, new tolerations. */
function immutablePart(spec: PodSpec): PodSpec {
  const copy = structuredClone(spec);
  for (const c of [...(copy.containers ?? []), ...(copy.initContainers ?? [])]) delete c.image;
  delete copy.activeDeadlineSeconds;
  delete copy.tolerations;
  delete copy.terminationGracePeriodSeconds;
  return copy;
}

const POD_UPDATE_DETAIL =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

export const pods = builtin({
  resource: 'pods',
  model: 'V1Pod',
  singular: 'pod',
  kind: 'Pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  statusSubresource: true,
  selectableFields: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  fieldValues(obj) {
    const spec = specOf(obj);
    const status = statusOf(obj);
    return {
      'spec.nodeName': spec.nodeName ?? '',
      'spec.restartPolicy': spec.restartPolicy ?? '',
      'spec.schedulerName': spec.schedulerName ?? '',
      'spec.serviceAccountName': spec.serviceAccountName ?? '',
      'spec.hostNetwork': String(spec.hostNetwork ?? false),
      'status.phase': status.phase ?? '',
      'status.podIP': status.podIP ?? '',
      'status.nominatedNodeName': status.nominatedNodeName ?? '',
    };
  },
  columns: [
    nameColumn,
    {
      name: 'Ready',
      type: 'string',
      description: 'The aggregate readiness state of this pod for accepting traffic.',
    },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.' },
    {
      name: 'Restarts',
      type: 'string',
      description:
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    },
    ageColumn,
    {
      name: 'IP',
      type: 'string',
      priority: 1,
      description: 'IP address allocated to the pod. Routable at least within the cluster.',
    },
    { name: 'Node', type: 'string', priority: 1, description: 'Name of the Node this pod is bound to.' },
    {
      name: 'Nominated Node',
      type: 'string',
      priority: 1,
      description: 'Name of the Node where this pod is nominated to be scheduled.',
    },
    { name: 'Readiness Gates', type: 'string', priority: 1, description: 'The readiness gates of the pod.' },
  ],
  cells(obj, now) {
    const spec = specOf(obj);
    const status = statusOf(obj);
    const total = (spec.containers ?? []).length;
    const ready = (status.containerStatuses ?? []).filter((c) => c.ready).length;
    const gates = (spec as { readinessGates?: { conditionType?: string }[] }).readinessGates ?? [];
    const gatesTrue = gates.filter((g) =>
      (status.conditions ?? []).some((c) => c.type === g.conditionType && c.status === 'True'),
    ).length;
    return [
      obj.metadata.name,
      `${ready}/${total}`,
      podStatusCell(obj),
      restartsCell(obj, now),
      age(obj, now),
      status.podIP || '<none>',
      spec.nodeName || '<none>',
      status.nominatedNodeName || '<none>',
      gates.length ? `${gatesTrue}/${gates.length}` : '<none>',
    ];
  },
  defaults(obj) {
    defaultPodSpec(specOf(obj), true);
  },
  onCreate(obj) {
    // PrepareForCreate: whatever status the client sent, a new Pod is Pending with its QoS class.
    obj.status = { phase: 'Pending', qosClass: qosClass(specOf(obj)) };
  },
  validate(obj, old) {
    const errs: FieldError[] = [];
    validatePodSpec(specOf(obj), 'spec', errs);
    if (old && !jsonEqual(immutablePart(specOf(obj)), immutablePart(specOf(old)))) {
      errs.push({ type: 'FieldValueForbidden', field: 'spec', detail: POD_UPDATE_DETAIL });
    }
    return errs;
  },
});
