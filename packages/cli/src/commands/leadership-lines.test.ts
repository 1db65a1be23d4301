import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leadershipLines } from './leadership-lines.ts';

const LEASE = 'kube-system/certkit-controller';

function lines(): { written: string[]; lines: ReturnType<typeof leadershipLines> } {
  const written: string[] = [];
  return { written, lines: leadershipLines('host_1', LEASE, (line) => written.push(line)) };
}

describe('what certkit controller says about the leader Lease', () => {
  it('nothing when it leads from the start', () => {
    const { written, lines: l } = lines();
    l.bannerPrinted();
    l.observe('host_1');
    assert.deepEqual(written, []);
  });

  it('stands by while another holds the Lease, then leads: one line each, after the banner', () => {
    const { written, lines: l } = lines();
    l.observe('other_2');
    assert.deepEqual(written, [], 'held until the banner is out');
    l.bannerPrinted();
    l.observe('host_1');
    assert.deepEqual(written, [
      `certkit controller: standing by: other_2 holds the leader Lease ${LEASE}; this one leads when it stops renewing it`,
      `certkit controller: leading now (${LEASE})`,
    ]);
  });

  it("names certkit up, and the command for a cluster without a controller, when up's identity holds it", () => {
    const { written, lines: l } = lines();
    l.bannerPrinted();
    l.observe('host_certkit-up_99');
    assert.equal(written.length, 1);
    assert.match(
      written[0],
      /\(that is a certkit up, which runs the certificate controller itself; for a cluster without one, run certkit apiserver\)$/,
    );
  });
});
