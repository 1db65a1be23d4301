import { isUpLeaseIdentity } from '../up-controller-lease.ts';

/**
 * What `certkit controller` says about the leader Lease, on stdout after its banner: that it stands by while
 * another holds the Lease (else it looks as if it ran and did nothing), and that it leads once it takes over.
 * Nothing when it leads from the start: the banner says enough.
 */
export function leadershipLines(
  identity: string,
  lease: string,
  write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`),
): { observe(holder: string): void; bannerPrinted(): void } {
  let pending: string[] | undefined = [];
  let stoodBy = false;
  const say = (line: string) => (pending ? pending.push(line) : write(line));
  return {
    observe(holder) {
      if (holder === identity) {
        if (stoodBy) say(`certkit controller: leading now (${lease})`);
        return;
      }
      stoodBy = true;
      say(
        `certkit controller: standing by: ${holder} holds the leader Lease ${lease}; this one leads when ` +
          'it stops renewing it' +
          (isUpLeaseIdentity(holder)
            ? ' (that is a certkit up, which runs the certificate controller itself; for a cluster without ' +
              'one, run certkit apiserver)'
            : ''),
      );
    },
    bannerPrinted() {
      for (const line of pending ?? []) write(line);
      pending = undefined;
    },
  };
}
