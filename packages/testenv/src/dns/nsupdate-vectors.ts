/**
 * TSIG test vectors: an UPDATE signed by BIND's `nsupdate` and BIND's signed answer, one per HMAC algorithm,
 * captured through a relay by `capture-nsupdate.ts` (run it again to regenerate `nsupdate-tsig.json`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface NsupdateVector {
  algorithm: string;
  keyName: string;
  secret: string;
  /** The request as nsupdate sent it, hex. */
  request: string;
  /** BIND's signed answer, hex. */
  response: string;
}

export const nsupdateVectors: readonly NsupdateVector[] = JSON.parse(
  readFileSync(join(import.meta.dirname, 'nsupdate-tsig.json'), 'utf8'),
) as NsupdateVector[];
