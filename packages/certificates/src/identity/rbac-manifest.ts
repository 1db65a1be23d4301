/**
 * deploy/rbac.yaml, shipped inside the package: `certkit up` applies it at startup and runs its controller
 * under the ServiceAccount it binds, so the permissions users deploy are the ones every local run exercises.
 * Edit the YAML below, then write the file:
 *
 *   npx node packages/certificates/src/identity/rbac-manifest.ts
 *
 * rbac-manifest.test.ts fails while deploy/rbac.yaml differs from this text.
 */

import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const RBAC_YAML_PATH = fileURLToPath(new URL('../../../../deploy/rbac.yaml', import.meta.url));

export const CONTROLLER_RBAC_YAML = `# What the certkit controller needs in a real cluster: its namespace, a service account, and the permissions
# cert-manager's controller has for the SelfSigned, CA and ACME issuers and its ingress-shim and gateway-shim
# (no HTTP-01 solver pods: challenges are answered in-process). certkit up applies this file and runs its controller under the
# service account below, and the conformance tests run under it too, so a missing permission fails a test.
apiVersion: v1
kind: Namespace
metadata:
  name: certkit
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: certkit
  namespace: certkit
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: certkit-controller
rules:
  # Certificates are the users': the controller reads them and writes their status, never creates or
  # deletes one.
  - apiGroups: [cert-manager.io]
    resources: [certificates, issuers, clusterissuers]
    verbs: [get, list, watch, update, patch]
  # CertificateRequests are the controller's: one per issuance, old revisions deleted.
  - apiGroups: [cert-manager.io]
    resources: [certificaterequests]
    verbs: [get, list, watch, create, update, patch, delete]
  - apiGroups: [cert-manager.io]
    resources: [certificates/status, certificaterequests/status, issuers/status, clusterissuers/status]
    verbs: [get, update, patch]
  # Owner references with blockOwnerDeletion need update on the owner's finalizers where the API server
  # enforces it (OwnerReferencesPermissionEnforcement), as cert-manager's chart grants.
  - apiGroups: [cert-manager.io]
    resources:
      [certificates/finalizers, certificaterequests/finalizers, issuers/finalizers, clusterissuers/finalizers]
    verbs: [update]
  # ACME: Orders (owned by CertificateRequests) and Challenges (owned by Orders).
  - apiGroups: [acme.cert-manager.io]
    resources: [orders, challenges]
    verbs: [get, list, watch, create, update, patch, delete]
  - apiGroups: [acme.cert-manager.io]
    resources: [orders/status, challenges/status]
    verbs: [get, update, patch]
  - apiGroups: [acme.cert-manager.io]
    resources: [orders/finalizers, challenges/finalizers]
    verbs: [update]
  - apiGroups: ['']
    resources: [secrets]
    verbs: [get, list, watch, create, update, patch, delete]
  - apiGroups: ['']
    resources: [events]
    verbs: [create, patch]
  # Whether a Challenge's namespace is being deleted, when its clean-up cannot run (docs/adr/1016).
  - apiGroups: ['']
    resources: [namespaces]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: certkit-controller
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: certkit-controller
subjects:
  - kind: ServiceAccount
    name: certkit
    namespace: certkit
---
# The ingress-shim and gateway-shim (cert-manager's controller-ingress-shim role): they read Ingresses and
# Gateways and create, update and delete the Certificates those ask for. Update on their finalizers lets the
# Certificates' owner references block the owner's deletion under OwnerReferencesPermissionEnforcement.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: certkit-controller-ingress-shim
rules:
  - apiGroups: [cert-manager.io]
    resources: [certificates]
    verbs: [create, update, delete]
  - apiGroups: [cert-manager.io]
    resources: [certificates, issuers, clusterissuers]
    verbs: [get, list, watch]
  - apiGroups: [networking.k8s.io]
    resources: [ingresses]
    verbs: [get, list, watch]
  - apiGroups: [networking.k8s.io]
    resources: [ingresses/finalizers]
    verbs: [update]
  - apiGroups: [gateway.networking.k8s.io]
    resources: [gateways, httproutes, listenersets]
    verbs: [get, list, watch]
  - apiGroups: [gateway.networking.k8s.io]
    resources: [gateways/finalizers, httproutes/finalizers, listenersets/finalizers]
    verbs: [update]
  - apiGroups: ['']
    resources: [events]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: certkit-controller-ingress-shim
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: certkit-controller-ingress-shim
subjects:
  - kind: ServiceAccount
    name: certkit
    namespace: certkit
---
# The CertificateSigningRequest signers (cert-manager's controller-certificatesigningrequests role), when the
# ExperimentalCertificateSigningRequestControllers gate runs them: they read Kubernetes CSRs, write the
# certificate or a Failed condition through status (which the API server allows only with sign on the signer),
# and ask with a SubjectAccessReview whether a CSR's requester may reference a namespaced Issuer.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: certkit-controller-certificatesigningrequests
rules:
  - apiGroups: [certificates.k8s.io]
    resources: [certificatesigningrequests]
    verbs: [get, list, watch, update]
  - apiGroups: [certificates.k8s.io]
    resources: [certificatesigningrequests/status]
    verbs: [update, patch]
  - apiGroups: [certificates.k8s.io]
    resources: [signers]
    resourceNames: [issuers.cert-manager.io/*, clusterissuers.cert-manager.io/*]
    verbs: [sign]
  - apiGroups: [authorization.k8s.io]
    resources: [subjectaccessreviews]
    verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: certkit-controller-certificatesigningrequests
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: certkit-controller-certificatesigningrequests
subjects:
  - kind: ServiceAccount
    name: certkit
    namespace: certkit
---
# Approval of CertificateRequests for cert-manager.io issuers (cert-manager's controller-approve:cert-manager-io
# role): what the certificaterequests-approver holds, so that approval policies checking the approver's
# permission on cert-manager.io signers find it.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: certkit-controller-approve:cert-manager-io
rules:
  - apiGroups: [cert-manager.io]
    resources: [signers]
    resourceNames: [issuers.cert-manager.io/*, clusterissuers.cert-manager.io/*]
    verbs: [approve]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: certkit-controller-approve:cert-manager-io
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: certkit-controller-approve:cert-manager-io
subjects:
  - kind: ServiceAccount
    name: certkit
    namespace: certkit
---
# Leader election: the Lease certkit-controller in the controller's own namespace. A Lease's name is not known
# before it is created, so create cannot be limited to it (as in cert-manager's chart).
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: certkit-leader-election
  namespace: certkit
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    resourceNames: [certkit-controller]
    verbs: [get, update]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: certkit-leader-election
  namespace: certkit
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: certkit-leader-election
subjects:
  - kind: ServiceAccount
    name: certkit
    namespace: certkit
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(RBAC_YAML_PATH, CONTROLLER_RBAC_YAML);
  console.log(`wrote ${RBAC_YAML_PATH}`);
}
