import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller } from '../manager/controller.ts';
import { Manager } from '../manager/manager.ts';
import { currentUserAgent, withUserAgent } from './user-agent.ts';

describe('a User-Agent for a piece of work', () => {
  it('holds across awaits and timers, nests, and is gone outside', async () => {
    assert.equal(currentUserAgent(), undefined);
    const seen = await withUserAgent('cert-manager-orders/v1', async () => {
      await new Promise((r) => setTimeout(r, 1));
      const inner = withUserAgent('cert-manager-challenges/v1', () => currentUserAgent());
      return [currentUserAgent(), inner];
    });
    assert.deepEqual(seen, ['cert-manager-orders/v1', 'cert-manager-challenges/v1']);
    assert.equal(currentUserAgent(), undefined);
  });

  it('a manager gives each controller added to it the User-Agent of its name, unless it has one', () => {
    const manager = new Manager({
      metricsBindAddress: '0',
      controllerUserAgent: (name) => `cert-manager-${name}/v0`,
    });
    const named = new Controller({ name: 'issuers', reconcile: () => {} });
    const own = new Controller({ name: 'orders', reconcile: () => {}, userAgent: 'mine/1' });
    manager.add(named);
    manager.add(own);
    assert.equal(named.userAgent, 'cert-manager-issuers/v0');
    assert.equal(own.userAgent, 'mine/1');
  });
});
