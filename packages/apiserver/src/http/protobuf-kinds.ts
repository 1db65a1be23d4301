/**
 * The protobuf tables of the workload, networking and certificates kinds (k8s.io/api core/v1 Service, apps/v1
 * Deployment, networking/v1 Ingress, certificates/v1 CertificateSigningRequest), field numbers from the
 * upstream generated.proto files. kubectl's typed commands send these: `create service|deployment|ingress`,
 * `expose`, `certificate approve|deny`. A Deployment template's PodSpec, Container, EnvVar and
 * ResourceRequirements tables hold the fields such commands and common manifests use and are `partial`: any
 * other field is refused with 415 (send JSON), never dropped (docs/adr/1711-csr-and-protobuf-checks-by-hand.md).
 *
 * The table builder and the shared messages come from protobuf.ts as arguments, so that this module needs
 * nothing of it at run time (protobuf.ts builds its map of kinds from these).
 */

import type { FieldRow, Message } from './protobuf.ts';

export interface MessageParts {
  message(rows: FieldRow[], convert?: Message['convert'], partial?: string): Message;
  Time: Message;
  ObjectMeta: Message;
  LocalObjectReference: Message;
  LabelSelector: Message;
}

/** The kinds' tables, by `apiVersion/kind`. */
export function workloadKinds({
  message,
  Time,
  ObjectMeta,
  LocalObjectReference,
  LabelSelector,
}: MessageParts): [string, Message][] {
  /** intstr.IntOrString: type 1 is a string. */
  const IntOrString = message(
    [
      [1, 'type', 'int64', 'keep'],
      [2, 'intVal', 'int32', 'keep'],
      [3, 'strVal', 'string', 'keep'],
    ],
    (v) => (v.type === 1 ? ((v.strVal as string) ?? '') : ((v.intVal as number) ?? 0)),
  );

  /** resource.Quantity: its string form. */
  const Quantity = message([[1, 'string', 'string', 'keep']], (q) => q.string ?? '');

  const MetaCondition = message([
    [1, 'type', 'string', 'keep'],
    [2, 'status', 'string', 'keep'],
    [3, 'observedGeneration', 'int64'],
    [4, 'lastTransitionTime', Time],
    [5, 'reason', 'string', 'keep'],
    [6, 'message', 'string', 'keep'],
  ]);

  /** core/v1 PortStatus, which networking/v1 IngressPortStatus repeats field for field. */
  const PortStatus = message([
    [1, 'port', 'int32', 'keep'],
    [2, 'protocol', 'string', 'keep'],
    [3, 'error', 'string'],
  ]);

  const Service = message([
    [1, 'metadata', ObjectMeta],
    [
      2,
      'spec',
      message([
        [
          1,
          'ports',
          message([
            [1, 'name', 'string'],
            [2, 'protocol', 'string'],
            [6, 'appProtocol', 'string'],
            [3, 'port', 'int32', 'keep'],
            [4, 'targetPort', IntOrString],
            [5, 'nodePort', 'int32'],
          ]),
          'repeated',
        ],
        [2, 'selector', 'string', 'map'],
        [3, 'clusterIP', 'string'],
        [18, 'clusterIPs', 'string', 'repeated'],
        [4, 'type', 'string'],
        [5, 'externalIPs', 'string', 'repeated'],
        [7, 'sessionAffinity', 'string'],
        [8, 'loadBalancerIP', 'string'],
        [9, 'loadBalancerSourceRanges', 'string', 'repeated'],
        [10, 'externalName', 'string'],
        [11, 'externalTrafficPolicy', 'string'],
        [12, 'healthCheckNodePort', 'int32'],
        [13, 'publishNotReadyAddresses', 'bool'],
        [
          14,
          'sessionAffinityConfig',
          message([[1, 'clientIP', message([[1, 'timeoutSeconds', 'int32', 'keep']])]]),
        ],
        [19, 'ipFamilies', 'string', 'repeated'],
        [17, 'ipFamilyPolicy', 'string'],
        [20, 'allocateLoadBalancerNodePorts', 'bool', 'keep'],
        [21, 'loadBalancerClass', 'string'],
        [22, 'internalTrafficPolicy', 'string'],
        [23, 'trafficDistribution', 'string'],
      ]),
    ],
    [
      3,
      'status',
      message([
        [
          1,
          'loadBalancer',
          message([
            [
              1,
              'ingress',
              message([
                [1, 'ip', 'string'],
                [2, 'hostname', 'string'],
                [3, 'ipMode', 'string'],
                [4, 'ports', PortStatus, 'repeated'],
              ]),
              'repeated',
            ],
          ]),
        ],
        [2, 'conditions', MetaCondition, 'repeated'],
      ]),
    ],
  ]);

  const ResourceRequirements = message(
    [
      [1, 'limits', Quantity, 'map'],
      [2, 'requests', Quantity, 'map'],
    ],
    undefined,
    'ResourceRequirements',
  );

  const Container = message(
    [
      [1, 'name', 'string', 'keep'],
      [2, 'image', 'string'],
      [3, 'command', 'string', 'repeated'],
      [4, 'args', 'string', 'repeated'],
      [5, 'workingDir', 'string'],
      [
        6,
        'ports',
        message([
          [1, 'name', 'string'],
          [2, 'hostPort', 'int32'],
          [3, 'containerPort', 'int32', 'keep'],
          [4, 'protocol', 'string'],
          [5, 'hostIP', 'string'],
        ]),
        'repeated',
      ],
      [
        7,
        'env',
        message(
          [
            [1, 'name', 'string', 'keep'],
            [2, 'value', 'string'],
          ],
          undefined,
          'EnvVar',
        ),
        'repeated',
      ],
      [8, 'resources', ResourceRequirements],
      [
        9,
        'volumeMounts',
        message([
          [1, 'name', 'string', 'keep'],
          [2, 'readOnly', 'bool'],
          [7, 'recursiveReadOnly', 'string'],
          [3, 'mountPath', 'string', 'keep'],
          [4, 'subPath', 'string'],
          [5, 'mountPropagation', 'string'],
          [6, 'subPathExpr', 'string'],
        ]),
        'repeated',
      ],
      [13, 'terminationMessagePath', 'string'],
      [20, 'terminationMessagePolicy', 'string'],
      [14, 'imagePullPolicy', 'string'],
      [24, 'restartPolicy', 'string'],
      [16, 'stdin', 'bool'],
      [17, 'stdinOnce', 'bool'],
      [18, 'tty', 'bool'],
    ],
    undefined,
    'Container',
  );

  const PodSpec = message(
    [
      [20, 'initContainers', Container, 'repeated'],
      [2, 'containers', Container, 'repeated'],
      [3, 'restartPolicy', 'string'],
      [4, 'terminationGracePeriodSeconds', 'int64', 'keep'],
      [5, 'activeDeadlineSeconds', 'int64', 'keep'],
      [6, 'dnsPolicy', 'string'],
      [7, 'nodeSelector', 'string', 'map'],
      [8, 'serviceAccountName', 'string'],
      [9, 'serviceAccount', 'string'],
      [21, 'automountServiceAccountToken', 'bool', 'keep'],
      [10, 'nodeName', 'string'],
      [11, 'hostNetwork', 'bool'],
      [12, 'hostPID', 'bool'],
      [13, 'hostIPC', 'bool'],
      [27, 'shareProcessNamespace', 'bool', 'keep'],
      [15, 'imagePullSecrets', LocalObjectReference, 'repeated'],
      [16, 'hostname', 'string'],
      [17, 'subdomain', 'string'],
      [19, 'schedulerName', 'string'],
      [
        22,
        'tolerations',
        message([
          [1, 'key', 'string'],
          [2, 'operator', 'string'],
          [3, 'value', 'string'],
          [4, 'effect', 'string'],
          [5, 'tolerationSeconds', 'int64', 'keep'],
        ]),
        'repeated',
      ],
      [24, 'priorityClassName', 'string'],
      [25, 'priority', 'int32', 'keep'],
      [29, 'runtimeClassName', 'string'],
      [30, 'enableServiceLinks', 'bool', 'keep'],
      [31, 'preemptionPolicy', 'string'],
    ],
    undefined,
    'PodSpec',
  );

  const Deployment = message([
    [1, 'metadata', ObjectMeta],
    [
      2,
      'spec',
      message([
        [1, 'replicas', 'int32', 'keep'],
        [2, 'selector', LabelSelector],
        [
          3,
          'template',
          message([
            [1, 'metadata', ObjectMeta],
            [2, 'spec', PodSpec],
          ]),
        ],
        [
          4,
          'strategy',
          message([
            [1, 'type', 'string'],
            [
              2,
              'rollingUpdate',
              message([
                [1, 'maxUnavailable', IntOrString],
                [2, 'maxSurge', IntOrString],
              ]),
            ],
          ]),
        ],
        [5, 'minReadySeconds', 'int32'],
        [6, 'revisionHistoryLimit', 'int32', 'keep'],
        [7, 'paused', 'bool'],
        [9, 'progressDeadlineSeconds', 'int32', 'keep'],
      ]),
    ],
    [
      3,
      'status',
      message([
        [1, 'observedGeneration', 'int64'],
        [2, 'replicas', 'int32'],
        [3, 'updatedReplicas', 'int32'],
        [7, 'readyReplicas', 'int32'],
        [4, 'availableReplicas', 'int32'],
        [5, 'unavailableReplicas', 'int32'],
        [9, 'terminatingReplicas', 'int32', 'keep'],
        [
          6,
          'conditions',
          message([
            [1, 'type', 'string', 'keep'],
            [2, 'status', 'string', 'keep'],
            [6, 'lastUpdateTime', Time],
            [7, 'lastTransitionTime', Time],
            [4, 'reason', 'string'],
            [5, 'message', 'string'],
          ]),
          'repeated',
        ],
        [8, 'collisionCount', 'int32', 'keep'],
      ]),
    ],
  ]);

  const IngressBackend = message([
    [
      4,
      'service',
      message([
        [1, 'name', 'string', 'keep'],
        [
          2,
          'port',
          message([
            [1, 'name', 'string'],
            [2, 'number', 'int32'],
          ]),
        ],
      ]),
    ],
    [
      3,
      'resource',
      message([
        [1, 'apiGroup', 'string', 'keep'],
        [2, 'kind', 'string', 'keep'],
        [3, 'name', 'string', 'keep'],
      ]),
    ],
  ]);

  const Ingress = message([
    [1, 'metadata', ObjectMeta],
    [
      2,
      'spec',
      message([
        [4, 'ingressClassName', 'string', 'keep'],
        [1, 'defaultBackend', IngressBackend],
        [
          2,
          'tls',
          message([
            [1, 'hosts', 'string', 'repeated'],
            [2, 'secretName', 'string'],
          ]),
          'repeated',
        ],
        [
          3,
          'rules',
          message(
            [
              [1, 'host', 'string'],
              [
                2,
                'ingressRuleValue',
                message([
                  [
                    1,
                    'http',
                    message([
                      [
                        1,
                        'paths',
                        message([
                          [1, 'path', 'string'],
                          [3, 'pathType', 'string', 'keep'],
                          [2, 'backend', IngressBackend],
                        ]),
                        'repeated',
                      ],
                    ]),
                  ],
                ]),
              ],
            ],
            // IngressRuleValue is embedded: its `http` sits on the rule in JSON.
            ({ ingressRuleValue, ...rule }) => ({ ...rule, ...(ingressRuleValue as object) }),
          ),
          'repeated',
        ],
      ]),
    ],
    [
      3,
      'status',
      message([
        [
          1,
          'loadBalancer',
          message([
            [
              1,
              'ingress',
              message([
                [1, 'ip', 'string'],
                [2, 'hostname', 'string'],
                [4, 'ports', PortStatus, 'repeated'],
              ]),
              'repeated',
            ],
          ]),
        ],
      ]),
    ],
  ]);

  /** certificates/v1: `kubectl certificate approve|deny` sends the whole CSR to its approval subresource. */
  const CertificateSigningRequest = message([
    [1, 'metadata', ObjectMeta],
    [
      2,
      'spec',
      message([
        [1, 'request', 'bytes', 'keep'],
        [7, 'signerName', 'string', 'keep'],
        [8, 'expirationSeconds', 'int32'],
        [5, 'usages', 'string', 'repeated'],
        [2, 'username', 'string'],
        [3, 'uid', 'string'],
        [4, 'groups', 'string', 'repeated'],
        // ExtraValue is a []string, in JSON a plain array.
        [6, 'extra', message([[1, 'items', 'string', 'repeated']], (v) => v.items ?? []), 'map'],
      ]),
    ],
    [
      3,
      'status',
      message([
        [
          1,
          'conditions',
          message([
            [1, 'type', 'string', 'keep'],
            [6, 'status', 'string', 'keep'],
            [2, 'reason', 'string'],
            [3, 'message', 'string'],
            [4, 'lastUpdateTime', Time],
            [5, 'lastTransitionTime', Time],
          ]),
          'repeated',
        ],
        [2, 'certificate', 'bytes'],
      ]),
    ],
  ]);

  return [
    ['v1/Service', Service],
    ['apps/v1/Deployment', Deployment],
    ['networking.k8s.io/v1/Ingress', Ingress],
    ['certificates.k8s.io/v1/CertificateSigningRequest', CertificateSigningRequest],
  ];
}
