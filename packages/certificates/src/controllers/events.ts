import { formatTime, type KubeObject } from '@certkit/apimachinery';
import { builtins, type Client, type Logger } from '@certkit/runtime';

/**
 * Records Kubernetes Events about objects (core/v1 Events, as client-go's EventRecorder writes them), so users
 * see what the controller did with `kubectl describe`. Failures to record are logged, never thrown: an event
 * is a courtesy, not part of reconciliation.
 */
export interface EventRecorder {
  normal(obj: KubeObject, reason: string, message: string): void;
  warning(obj: KubeObject, reason: string, message: string): void;
}

/**
 * One EventRecorder per controller, as cert-manager builds one per controller: each Event names the
 * controller that recorded it, `cert-manager-<controller>` (cert-manager's user agent prefix, which its
 * ContextFactory gives each controller's recorder as `source.component`; client-go copies it into
 * `reportingComponent`, which events.k8s.io/v1 shows as `reportingController`). `kubectl get events` shows it
 * in its SOURCE column and `kubectl describe` in From, and users filter on it (`--field-selector
 * source=cert-manager-certificates-issuing`), so the name is cert-manager's controller name, not certkit's.
 */
export interface EventRecorders {
  /** The recorder of the controller cert-manager names `controller` (e.g. `certificates-issuing`, `orders`). */
  from(controller: string): EventRecorder;
}

/** The component an Event of cert-manager's controller `controller` carries. */
export function eventComponent(controller: string): string {
  return `cert-manager-${controller}`;
}

let lastNanos = 0n;

/**
 * client-go's Event name suffix: the time in Unix nanoseconds, in hex. Our clock has milliseconds, so the
 * value is kept increasing to keep names unique within the process.
 */
function eventNameSuffix(): string {
  let nanos = BigInt(Date.now()) * 1_000_000n;
  if (nanos <= lastNanos) nanos = lastNanos + 1n;
  lastNanos = nanos;
  return nanos.toString(16);
}

export function newEventRecorders(client: Client, log: Logger): EventRecorders {
  const recorders = new Map<string, EventRecorder>();
  return {
    from(controller) {
      let recorder = recorders.get(controller);
      if (!recorder)
        recorders.set(controller, (recorder = newEventRecorder(client, log, eventComponent(controller))));
      return recorder;
    },
  };
}

export function newEventRecorder(client: Client, log: Logger, component: string): EventRecorder {
  const events = client.resource(builtins.events);
  const record = (type: 'Normal' | 'Warning', obj: KubeObject, reason: string, message: string) => {
    const meta = obj.metadata ?? {};
    const namespace = meta.namespace || 'default';
    const now = formatTime(new Date());
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${meta.name}.${eventNameSuffix()}`, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      reason,
      message,
      type,
      // client-go sets both from the recorder's EventSource; cert-manager's has no host, so no
      // reportingInstance.
      source: { component },
      reportingComponent: component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    events.create(namespace, event).catch((err: unknown) => {
      log({ level: 'warn', msg: 'could not record event', reason, object: meta.name, err: String(err) });
    });
  };
  return {
    normal: (obj, reason, message) => record('Normal', obj, reason, message),
    warning: (obj, reason, message) => record('Warning', obj, reason, message),
  };
}
