/**
 * field.Error constructors (apimachinery's, re-exported for the validators beside this file) and field.Path
 * helpers, so that our messages read as cert-manager's webhook's do once newInvalid/formatFieldError
 * renders them.
 */

export { duplicate, forbidden, invalid, notSupported, required, tooLong } from '@certkit/apimachinery';

/** field.Path.Index. */
export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

/** field.Path.Key. */
export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}
