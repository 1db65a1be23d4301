/** A CustomResourceDefinition as the store holds it. */
import type { StoredObject } from '@certkit/apimachinery';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.d.ts';

export type Crd = CustomResourceDefinition & StoredObject;
