/**
 * A CustomResourceDefinition for server-side apply at scale: `spec.entries`, a list-map keyed by name, and
 * `spec.tags`, a set — the list types whose merges grow with their length. Used by the apply scale test and
 * `bench:apply`.
 */
export function bulkCrd(group: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `bulks.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'bulks', singular: 'bulk', kind: 'Bulk', listKind: 'BulkList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    entries: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: {
                        type: 'object',
                        required: ['name'],
                        properties: { name: { type: 'string' }, value: { type: 'string' } },
                      },
                    },
                    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}
