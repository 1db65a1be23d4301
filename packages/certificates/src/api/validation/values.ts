/**
 * Reading the fields of an Issuer's spec as the webhook validation meets them: decoded JSON whose types the
 * schema has not yet been trusted to check, so a field of the wrong type reads as absent.
 */

import { isObject, type JsonObject } from '@certkit/apimachinery';

/** The value when it is a JSON object, else undefined. */
export const asObject = (value: unknown): JsonObject | undefined => (isObject(value) ? value : undefined);

/** The value when it is a string, else "" (Go's zero value). */
export const asString = (value: unknown): string => (typeof value === 'string' ? value : '');
