/**
 * The built-in resources certkit serves, with kube-apiserver's names, columns and validation: one file each.
 */

import { type ResourceDefinition } from '../resource.ts';
import { configmaps } from './configmaps.ts';
import { customresourcedefinitions } from './customresourcedefinitions.ts';
import { events } from './events.ts';
import { eventsV1 } from './events-v1.ts';
import { leases } from './leases.ts';
import { clusterrolebindings, clusterroles, rolebindings, roles } from './rbac.ts';
import {
  localsubjectaccessreviews,
  selfsubjectaccessreviews,
  selfsubjectreviews,
  selfsubjectrulesreviews,
  subjectaccessreviews,
} from './reviews.ts';
import { namespaces } from './namespaces.ts';
import { secrets } from './secrets.ts';
import { serviceaccounts } from './serviceaccounts.ts';
import { mutatingwebhookconfigurations, validatingwebhookconfigurations } from './webhookconfigurations.ts';
import { services } from './services.ts';
import { endpoints } from './endpoints.ts';
import { endpointslices } from './endpointslices.ts';
import { pods } from './pods.ts';
import { deployments } from './deployments.ts';
import { ingressclasses, ingresses } from './ingresses.ts';
import { certificatesigningrequests } from './certificatesigningrequests.ts';
import { apiservices } from './apiservices.ts';

export const builtinResources: ResourceDefinition[] = [
  namespaces,
  secrets,
  configmaps,
  events,
  serviceaccounts,
  leases,
  customresourcedefinitions,
  roles,
  clusterroles,
  rolebindings,
  clusterrolebindings,
  subjectaccessreviews,
  localsubjectaccessreviews,
  selfsubjectaccessreviews,
  selfsubjectrulesreviews,
  selfsubjectreviews,
  mutatingwebhookconfigurations,
  validatingwebhookconfigurations,
  services,
  endpoints,
  endpointslices,
  pods,
  deployments,
  ingresses,
  ingressclasses,
  certificatesigningrequests,
  apiservices,
  eventsV1,
];
