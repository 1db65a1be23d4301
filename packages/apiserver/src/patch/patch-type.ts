/**
 * The patch formats a PATCH request may carry, named by its Content-Type as kube-apiserver names them
 * (handlers/patch.go): JSON patch, JSON merge patch, strategic merge patch and server-side apply.
 */

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

const patchTypesByMediaType: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

/** Maps a PATCH request's Content-Type to its patch type; parameters such as `; charset=utf-8` are ignored. */
export function patchTypeFromContentType(contentType: string): PatchType | undefined {
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return Object.hasOwn(patchTypesByMediaType, mediaType) ? patchTypesByMediaType[mediaType] : undefined;
}
