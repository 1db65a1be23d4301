/**
 * deploy/cainjector-rbac.yaml, shipped inside the package: `certkit up` applies it and runs its cainjector
 * under the ServiceAccount it binds, so the permissions users deploy are the ones every local run exercises.
 * The grants are those of cert-manager's chart for its cainjector. Edit the YAML below, then write the file:
 *
 *   npx node packages/certificates/src/cainjector/rbac-manifest.ts
 *
 * rbac-manifest.test.ts fails while deploy/cainjector-rbac.yaml differs from this text.
 */

import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const CAINJECTOR_RBAC_YAML_PATH = fileURLToPath(
  new URL('../../../../deploy/cainjector-rbac.yaml', import.meta.url),
);

export const CAINJECTOR_RBAC_YAML = `# What certkit's cainjector needs in a real cluster (cert-manager's chart grants its cainjector the same): read
# Certificates and Secrets, and write the caBundle of webhook configurations, APIServices and CRDs. certkit up
# applies this file and runs its cainjector under the service account below.
apiVersion: v1
kind: Namespace
metadata:
  name: certkit
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: certkit-cainjector
  namespace: certkit
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: certkit-cainjector
rules:
  # The sources: a Certificate names its Secret; Secrets are watched as metadata and read one at a time.
  - apiGroups: [cert-manager.io]
    resources: [certificates]
    verbs: [get, list, watch]
  - apiGroups: ['']
    resources: [secrets]
    verbs: [get, list, watch]
  - apiGroups: ['']
    resources: [events]
    verbs: [get, create, update, patch]
  # The targets, written by server-side apply (a patch).
  - apiGroups: [admissionregistration.k8s.io]
    resources: [validatingwebhookconfigurations, mutatingwebhookconfigurations]
    verbs: [get, list, watch, update, patch]
  - apiGroups: [apiregistration.k8s.io]
    resources: [apiservices]
    verbs: [get, list, watch, update, patch]
  - apiGroups: [apiextensions.k8s.io]
    resources: [customresourcedefinitions]
    verbs: [get, list, watch, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: certkit-cainjector
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: certkit-cainjector
subjects:
  - kind: ServiceAccount
    name: certkit-cainjector
    namespace: certkit
---
# Leader election: cainjector's Lease (and the -core one older cainjectors held), in the namespace the
# Deployment passes as --leader-election-namespace. A Lease's name is not known before it is created, so create
# cannot be limited to it.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: certkit-cainjector:leaderelection
  namespace: certkit
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [cert-manager-cainjector-leader-election, cert-manager-cainjector-leader-election-core]
    verbs: [get, update, patch]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: certkit-cainjector:leaderelection
  namespace: certkit
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: certkit-cainjector:leaderelection
subjects:
  - kind: ServiceAccount
    name: certkit-cainjector
    namespace: certkit
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(CAINJECTOR_RBAC_YAML_PATH, CAINJECTOR_RBAC_YAML);
  console.log(`wrote ${CAINJECTOR_RBAC_YAML_PATH}`);
}
