/**
 * The ClusterRole aggregation controller, as kube-controller-manager's clusterrole-aggregation: a ClusterRole
 * with an `aggregationRule` has as its rules the union of the rules of every other ClusterRole matching one
 * of its label selectors, rewritten whenever a ClusterRole changes.
 */

import {
  isNotFound,
  labelSelectorFromMeta,
  type MetaLabelSelector,
  type StoredObject,
} from '@certkit/apimachinery';
import type { Registry } from '../registry/registry.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import { rangeAllPaged } from '../storage/paged-range.ts';
import type { Storage } from '../storage/types.ts';
import type { PolicyRule } from './policy-rule.ts';
import { RBAC_GROUP, type RbacIndex } from './rbac-index.ts';

const DEBOUNCE_MS = 20;

export class ClusterRoleAggregator {
  private readonly store: ObjectStore;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | undefined;
  onError: (err: unknown) => void = () => {};

  private readonly storage: Storage;
  private readonly index: RbacIndex;

  constructor(registry: Registry, storage: Storage, index: RbacIndex) {
    this.storage = storage;
    this.index = index;
    this.store = registry.byResource(RBAC_GROUP, 'clusterroles')!;
  }

  start(): void {
    this.unsubscribe = this.index.onChange((kind) => {
      if (kind === 'ClusterRole') this.schedule();
    });
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    clearTimeout(this.timer);
  }

  /** Changes come in bursts (bootstrap, `kubectl apply` of many roles): one pass after them. */
  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.running.then(() => this.aggregateAll()).catch((err) => this.onError(err));
    }, DEBOUNCE_MS);
    this.timer.unref();
  }

  /** One pass: every aggregated ClusterRole brought up to date. Resolves when done (tests wait on it). */
  async aggregateAll(): Promise<void> {
    const roles: StoredObject[] = [];
    await rangeAllPaged(this.storage, this.store.prefix, (page) => {
      for (const kv of page) roles.push(this.store.decode(kv.value, kv.modRevision));
    });
    for (const role of roles) {
      const rule = role.aggregationRule as { clusterRoleSelectors?: MetaLabelSelector[] } | undefined;
      if (!rule?.clusterRoleSelectors?.length) continue;
      const selectors = rule.clusterRoleSelectors.map((s) => labelSelectorFromMeta(s));
      const rules: PolicyRule[] = [];
      const seen = new Set<string>();
      // Sorted by name, so the result does not depend on storage order and an unchanged role is not rewritten.
      const sources = roles
        .filter((r) => r.metadata.name !== role.metadata.name)
        .filter((r) => selectors.some((s) => !s.empty && s.matches(r.metadata.labels)))
        .sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
      for (const source of sources) {
        for (const r of (source.rules as PolicyRule[] | undefined) ?? []) {
          const key = JSON.stringify(r);
          if (seen.has(key)) continue;
          seen.add(key);
          rules.push(r);
        }
      }
      if (JSON.stringify(role.rules ?? []) === JSON.stringify(rules)) continue;
      await this.store.update(undefined, role.metadata.name!, { ...role, rules }).catch((err: unknown) => {
        // Changed or gone meanwhile: the change that did it schedules another pass.
        const reason = (err as { status?: { reason?: string } }).status?.reason;
        if (reason !== 'Conflict' && !isNotFound(err)) throw err;
      });
    }
  }
}
