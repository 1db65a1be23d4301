/**
 * A wait that ran out of time: the command exits with status 124, as cmctl's do when their deadline passes
 * (`check api --wait`, `create certificaterequest --fetch-certificate --timeout`) and as timeout(1) does, so
 * that a script can tell "not ready in time" from "failed".
 */
export class TimedOut extends Error {}

/** Exit status 124, for a TimedOut error. */
export const TIMED_OUT_STATUS = 124;
