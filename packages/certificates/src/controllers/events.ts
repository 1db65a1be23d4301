import type { KubeObject } from '@certkit/apimachinery';
import {
  type Client,
  EventCorrelator,
  EventRecorder as RuntimeEventRecorder,
  type Logger,
} from '@certkit/runtime';

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

export function newEventRecorders(client: Client, log: Logger): EventRecorders {
  const recorders = new Map<string, EventRecorder>();
  // One correlator for all: its caches (4096 keys each) are bounded once for the process, not per controller.
  const correlator = new EventCorrelator();
  return {
    from(controller) {
      let recorder = recorders.get(controller);
      if (!recorder)
        recorders.set(
          controller,
          (recorder = newEventRecorder(client, log, eventComponent(controller), correlator)),
        );
      return recorder;
    },
  };
}

/**
 * A recorder as cert-manager's: client-go's EventRecorder (the runtime's), whose correlator folds repeats into
 * one Event with a growing count, combines similar ones and drops an object's spam, so that a controller
 * failing in a loop writes one Event per failure kind, not one per failure. cert-manager's EventSource has no
 * host, so no reportingInstance.
 */
export function newEventRecorder(
  client: Client,
  log: Logger,
  component: string,
  correlator?: EventCorrelator,
): EventRecorder {
  const recorder = new RuntimeEventRecorder(client, { component }, { log, correlator });
  return {
    normal: (obj, reason, message) => recorder.event(obj, 'Normal', reason, message),
    warning: (obj, reason, message) => recorder.event(obj, 'Warning', reason, message),
  };
}
