/**
 * What client-go's EventCorrelator (packages/runtime/src/events) holds and costs in the controller: the Events
 * of `--certs` Certificates' issuances (six Events each, from six controllers, as an issuance records them),
 * correlated by one correlator shared by the six recorders (what the controller does) against one correlator
 * per recorder (client-go's one per broadcaster). Heap after a full collection, and CPU per Event; the two
 * arms alternate, `--repeat` times each, in one process.
 *
 * Usage: npm run bench:event-correlator [-- --certs=10000 --repeat=2]
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EventCorrelator } from '@certkit/runtime/events/correlator';
import type { CoreEvent } from '@certkit/runtime/events/correlator';
import { flag, median, writeResults } from './lib.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CERTS = Number(flag('certs') ?? 10_000);
const REPEAT = Number(flag('repeat') ?? 2);
/** The six Events of an issuance, by the controller recording each. */
const ISSUANCE: [string, string, string][] = [
  ['certificates-trigger', 'Issuing', 'Issuing certificate as Secret does not exist'],
  ['certificates-key-manager', 'Generated', 'Stored new private key in temporary Secret resource'],
  ['certificates-request-manager', 'Requested', 'Created new CertificateRequest resource'],
  ['certificaterequests-issuer-ca', 'CertificateIssued', 'Certificate fetched from issuer successfully'],
  ['certificates-issuing', 'Issuing', 'The certificate has been successfully issued'],
  [
    'certificaterequests-approver',
    'cert-manager.io',
    'Certificate request has been approved by cert-manager.io',
  ],
];

function event(i: number, uid: string, [controller, reason, message]: [string, string, string]): CoreEvent {
  const component = `cert-manager-${controller}`;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `cert-${i}.18a7b3c4d5e6f7a8`, namespace: 'bench' },
    involvedObject: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      name: `cert-${i}`,
      namespace: 'bench',
      uid,
      resourceVersion: String(100_000 + i),
    },
    reason,
    message,
    source: { component },
    firstTimestamp: '2026-11-26T23:00:00Z',
    lastTimestamp: '2026-11-26T23:00:00Z',
    count: 1,
    type: 'Normal',
    reportingComponent: component,
    reportingInstance: '',
  };
}

interface Run {
  heapMB: number;
  usPerEvent: number;
}

function run(shared: boolean): Run {
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const correlators = shared
    ? Array<EventCorrelator>(ISSUANCE.length).fill(new EventCorrelator())
    : ISSUANCE.map(() => new EventCorrelator());
  let events = 0;
  const started = process.cpuUsage();
  for (let i = 0; i < CERTS; i++) {
    const uid = crypto.randomUUID();
    ISSUANCE.forEach((recorded, r) => {
      const result = correlators[r].correlate(event(i, uid, recorded));
      if (!result.skip) {
        const e = result.event;
        correlators[r].updateState({
          ...e,
          metadata: { ...e.metadata, resourceVersion: String(200_000 + i) },
        });
      }
      events++;
    });
  }
  const cpu = process.cpuUsage(started);
  gc();
  gc();
  const heapMB = (process.memoryUsage().heapUsed - before) / 1e6;
  // Held until measured.
  if (correlators.length === 0) throw new Error('unreachable');
  return { heapMB, usPerEvent: (cpu.user + cpu.system) / events };
}

interface Run {
  heapMB: number;
  usPerEvent: number;
}

const arms: Record<'shared' | 'perRecorder', Run[]> = { shared: [], perRecorder: [] };
// A first pass of each, unmeasured, so that neither arm pays for compiling the code.
run(true);
run(false);
for (let r = 0; r < REPEAT; r++) {
  arms.shared.push(run(true));
  arms.perRecorder.push(run(false));
}
const summarise = (runs: Run[]) => ({
  heapMB: median(runs.map((x) => x.heapMB)),
  usPerEvent: median(runs.map((x) => x.usPerEvent)),
  runs,
});
const summary = { shared: summarise(arms.shared), perRecorder: summarise(arms.perRecorder) };
const table = [
  `# Event correlator: ${CERTS} Certificates × ${ISSUANCE.length} Events (median of ${REPEAT})`,
  '',
  '| correlators | heap held (MB) | CPU per Event (µs) |',
  '| --- | ---: | ---: |',
  `| one shared by the six recorders | ${summary.shared.heapMB.toFixed(2)} | ${summary.shared.usPerEvent.toFixed(1)} |`,
  `| one per recorder | ${summary.perRecorder.heapMB.toFixed(2)} | ${summary.perRecorder.usPerEvent.toFixed(1)} |`,
].join('\n');
await writeResults('event-correlator', { certs: CERTS, repeat: REPEAT, ...summary }, table);
