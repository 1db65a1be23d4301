import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { everythingLabels } from '@certkit/apimachinery';
import type { TransformFunc } from '../informers/objects.ts';
import {
  type CacheConfigOptions,
  defaultConfig,
  defaultOptions,
  type DefaultedOptions,
  jitteredSyncPeriod,
  type ResolvedConfig,
} from './options.ts';
import { toFieldSelector, toLabelSelector } from './selectors.ts';

/** The port of controller-runtime's pkg/cache/defaulting_test.go. Pod is a namespaced kind. */

const POD = 'v1/Pod';
const namespaced = async () => true;

/** A config with selectors as strings and unset fields left out, for deepEqual. */
function render(config: ResolvedConfig | undefined): Record<string, unknown> | undefined {
  if (!config) return undefined;
  const out: Record<string, unknown> = {};
  if (config.labelSelector !== undefined) out.labelSelector = config.labelSelector.toString();
  if (config.fieldSelector !== undefined) out.fieldSelector = config.fieldSelector.toString();
  if (config.transform !== undefined) out.transform = config.transform;
  if (config.unsafeDisableDeepCopy !== undefined) out.unsafeDisableDeepCopy = config.unsafeDisableDeepCopy;
  if (config.enableWatchBookmarks !== undefined) out.enableWatchBookmarks = config.enableWatchBookmarks;
  if (config.syncPeriodMs !== undefined) out.syncPeriodMs = config.syncPeriodMs;
  return out;
}

function renderMap(map: Map<string, ResolvedConfig> | undefined): Record<string, unknown> | undefined {
  return map && Object.fromEntries([...map].map(([k, v]) => [k, render(v)]));
}

const podNamespaces = (o: DefaultedOptions) => renderMap(o.byObject.get(POD)!.namespaces);
const podConfig = (o: DefaultedOptions) => render(o.byObject.get(POD)!.config);

interface Case {
  name: string;
  in: CacheConfigOptions;
  verify(o: DefaultedOptions): void;
}

const cases: Case[] = [
  {
    name: 'ByObject.Namespaces gets defaulted from ByObject',
    in: {
      byObject: { [POD]: { namespaces: { default: {} }, label: 'from=by-object' } },
      defaultNamespaces: { default: { labelSelector: 'from=default-namespaces' } },
      defaultLabelSelector: 'from=default-label-selector',
    },
    verify: (o) => assert.deepEqual(podNamespaces(o), { default: { labelSelector: 'from=by-object' } }),
  },
  {
    name: 'ByObject.Namespaces gets defaulted from DefaultNamespaces',
    in: {
      byObject: { [POD]: { namespaces: { default: {} } } },
      defaultNamespaces: { default: { labelSelector: 'from=default-namespaces' } },
      defaultLabelSelector: 'from=default-label-selector',
    },
    verify: (o) =>
      assert.deepEqual(podNamespaces(o), { default: { labelSelector: 'from=default-namespaces' } }),
  },
  {
    name: 'ByObject.Namespaces gets defaulted from DefaultLabelSelector',
    in: {
      byObject: { [POD]: { namespaces: { default: {} } } },
      defaultLabelSelector: 'from=default-label-selector',
    },
    verify: (o) =>
      assert.deepEqual(podNamespaces(o), { default: { labelSelector: 'from=default-label-selector' } }),
  },
  {
    name: 'ByObject.Namespaces gets defaulted from DefaultNamespaces (no ByObject namespaces)',
    in: {
      byObject: { [POD]: {} },
      defaultNamespaces: { default: { labelSelector: 'from=default-namespaces' } },
    },
    verify: (o) =>
      assert.deepEqual(podNamespaces(o), { default: { labelSelector: 'from=default-namespaces' } }),
  },
  {
    name: "ByObject.Namespaces doesn't get defaulted when its empty",
    in: {
      byObject: { [POD]: { namespaces: {} } },
      defaultNamespaces: { default: { labelSelector: 'from=default-namespaces' } },
    },
    verify: (o) => assert.deepEqual(podNamespaces(o), {}),
  },
  {
    name: 'ByObject.Labels gets defaulted from DefautLabelSelector',
    in: { byObject: { [POD]: {} }, defaultLabelSelector: 'from=default-label-selector' },
    verify: (o) => assert.equal(podConfig(o)!.labelSelector, 'from=default-label-selector'),
  },
  {
    name: "ByObject.Labels doesn't get defaulted when set",
    in: {
      byObject: { [POD]: { label: 'from=by-object' } },
      defaultLabelSelector: 'from=default-label-selector',
    },
    verify: (o) => assert.equal(podConfig(o)!.labelSelector, 'from=by-object'),
  },
  {
    name: 'ByObject.Fields gets defaulted from DefaultFieldSelector',
    in: { byObject: { [POD]: {} }, defaultFieldSelector: 'from=default-field-selector' },
    verify: (o) => assert.equal(podConfig(o)!.fieldSelector, 'from=default-field-selector'),
  },
  {
    name: "ByObject.Fields doesn't get defaulted when set",
    in: {
      byObject: { [POD]: { field: 'from=by-object' } },
      defaultFieldSelector: 'from=default-field-selector',
    },
    verify: (o) => assert.equal(podConfig(o)!.fieldSelector, 'from=by-object'),
  },
  {
    name: 'ByObject.UnsafeDisableDeepCopy gets defaulted from DefaultUnsafeDisableDeepCopy',
    in: { byObject: { [POD]: {} }, defaultUnsafeDisableDeepCopy: true },
    verify: (o) => assert.equal(podConfig(o)!.unsafeDisableDeepCopy, true),
  },
  {
    name: "ByObject.UnsafeDisableDeepCopy doesn't get defaulted when set",
    in: { byObject: { [POD]: { unsafeDisableDeepCopy: false } }, defaultUnsafeDisableDeepCopy: true },
    verify: (o) => assert.equal(podConfig(o)!.unsafeDisableDeepCopy, false),
  },
  {
    name: 'ByObject.EnableWatchBookmarks gets defaulted from DefaultEnableWatchBookmarks',
    in: { byObject: { [POD]: {} }, defaultEnableWatchBookmarks: true },
    verify: (o) => assert.equal(podConfig(o)!.enableWatchBookmarks, true),
  },
  {
    name: "ByObject.EnableWatchBookmarks doesn't get defaulted when set",
    in: { byObject: { [POD]: { enableWatchBookmarks: false } }, defaultEnableWatchBookmarks: true },
    verify: (o) => assert.equal(podConfig(o)!.enableWatchBookmarks, false),
  },
  {
    name: 'ByObject.SyncPeriod gets defaulted from SyncPeriod',
    in: { byObject: { [POD]: {} }, syncPeriodMs: 5 * 60_000 },
    verify: (o) => assert.equal(podConfig(o)!.syncPeriodMs, 5 * 60_000),
  },
  {
    name: "ByObject.SyncPeriod doesn't get defaulted when set",
    in: { byObject: { [POD]: { syncPeriodMs: 60_000 } }, syncPeriodMs: 5 * 60_000 },
    verify: (o) => assert.equal(podConfig(o)!.syncPeriodMs, 60_000),
  },
  {
    name: 'DefaultNamespace label selector gets defaulted from DefaultLabelSelector',
    in: { defaultNamespaces: { default: {} }, defaultLabelSelector: 'from=default-label-selector' },
    verify: (o) =>
      assert.deepEqual(renderMap(o.defaultNamespaces), {
        default: { labelSelector: 'from=default-label-selector' },
      }),
  },
  {
    name: 'ByObject.Namespaces get selector from DefaultNamespaces before DefaultSelector',
    in: {
      byObject: { [POD]: { namespaces: { default: {} } } },
      defaultNamespaces: { default: { labelSelector: 'from=namespace' } },
      defaultLabelSelector: 'from=default',
    },
    verify: (o) => {
      assert.deepEqual(podNamespaces(o), { default: { labelSelector: 'from=namespace' } });
      assert.deepEqual(renderMap(o.defaultNamespaces), { default: { labelSelector: 'from=namespace' } });
      assert.equal(o.global.labelSelector?.toString(), 'from=default');
    },
  },
  {
    name: 'Two namespaces in DefaultNamespaces with custom selection logic',
    in: {
      defaultNamespaces: {
        'kube-public': { labelSelector: 'from=kube-public' },
        'kube-system': { labelSelector: 'from=kube-system' },
        '': {},
      },
    },
    verify: (o) =>
      assert.deepEqual(renderMap(o.defaultNamespaces), {
        'kube-public': { labelSelector: 'from=kube-public' },
        'kube-system': { labelSelector: 'from=kube-system' },
        '': { fieldSelector: 'metadata.namespace!=kube-public,metadata.namespace!=kube-system' },
      }),
  },
  {
    name: 'Two namespaces in DefaultNamespaces with custom selection logic and namespace default has its own field selector',
    in: {
      defaultNamespaces: {
        'kube-public': { labelSelector: 'from=kube-public' },
        'kube-system': { labelSelector: 'from=kube-system' },
        '': { fieldSelector: 'spec.nodeName=foo' },
      },
    },
    verify: (o) =>
      assert.deepEqual(renderMap(o.defaultNamespaces), {
        'kube-public': { labelSelector: 'from=kube-public' },
        'kube-system': { labelSelector: 'from=kube-system' },
        '': {
          fieldSelector: 'metadata.namespace!=kube-public,metadata.namespace!=kube-system,spec.nodeName=foo',
        },
      }),
  },
  {
    name: 'Two namespaces in ByObject.Namespaces with custom selection logic',
    in: {
      byObject: {
        [POD]: {
          namespaces: {
            'kube-public': { labelSelector: 'from=kube-public' },
            'kube-system': { labelSelector: 'from=kube-system' },
            '': {},
          },
        },
      },
    },
    verify: (o) =>
      assert.deepEqual(podNamespaces(o), {
        'kube-public': { labelSelector: 'from=kube-public' },
        'kube-system': { labelSelector: 'from=kube-system' },
        '': { fieldSelector: 'metadata.namespace!=kube-public,metadata.namespace!=kube-system' },
      }),
  },
  {
    name: 'Two namespaces in ByObject.Namespaces with custom selection logic and namespace default has its own field selector',
    in: {
      byObject: {
        [POD]: {
          namespaces: {
            'kube-public': { labelSelector: 'from=kube-public' },
            'kube-system': { labelSelector: 'from=kube-system' },
            '': { fieldSelector: 'spec.nodeName=foo' },
          },
        },
      },
    },
    verify: (o) =>
      assert.deepEqual(podNamespaces(o), {
        'kube-public': { labelSelector: 'from=kube-public' },
        'kube-system': { labelSelector: 'from=kube-system' },
        '': {
          fieldSelector: 'metadata.namespace!=kube-public,metadata.namespace!=kube-system,spec.nodeName=foo',
        },
      }),
  },
  {
    name: "DefaultNamespace label selector doesn't get defaulted when set",
    in: {
      defaultNamespaces: { default: { labelSelector: everythingLabels } },
      defaultLabelSelector: 'from=default-label-selector',
    },
    verify: (o) => assert.deepEqual(renderMap(o.defaultNamespaces), { default: { labelSelector: '' } }),
  },
  {
    name: "Defaulted namespaces in ByObject contain ByObject's selector",
    in: { byObject: { [POD]: { label: 'from=pod' } }, defaultNamespaces: { default: {} } },
    verify: (o) => {
      assert.deepEqual(podNamespaces(o), { default: { labelSelector: 'from=pod' } });
      // The type-level label stays as given (not defaulted: namespaces are configured).
      assert.deepEqual(podConfig(o), { labelSelector: 'from=pod' });
      assert.deepEqual(renderMap(o.defaultNamespaces), { default: {} });
    },
  },
];

describe('defaultOptions (defaulting_test.go)', () => {
  for (const c of cases) {
    it(c.name, async () => c.verify(await defaultOptions(c.in, namespaced)));
  }

  it('does not modify its input, so one options value can be reused (TestDefaultOptsRace)', async () => {
    const input: CacheConfigOptions = {
      byObject: { [POD]: { label: 'from=pod', namespaces: { default: { labelSelector: 'from=pod' } } } },
      defaultNamespaces: { default: {} },
    };
    const before = JSON.stringify(input);
    const [a, b] = await Promise.all([defaultOptions(input, namespaced), defaultOptions(input, namespaced)]);
    assert.equal(JSON.stringify(input), before);
    assert.deepEqual(podNamespaces(a), podNamespaces(b));
  });

  it('defaultConfig considers every field (TestDefaultConfigConsidersAllFields)', () => {
    const transform: TransformFunc = (o) => o;
    for (let i = 0; i < 100; i++) {
      const pick = () => Math.random() < 0.5;
      const full: ResolvedConfig = {
        labelSelector: pick() ? toLabelSelector('foo=bar') : undefined,
        fieldSelector: pick() ? toFieldSelector('foo=bar') : undefined,
        transform: pick() ? transform : undefined,
        unsafeDisableDeepCopy: pick() ? pick() : undefined,
        enableWatchBookmarks: pick() ? pick() : undefined,
        syncPeriodMs: pick() ? Math.floor(Math.random() * 1e6) : undefined,
      };
      assert.deepEqual(defaultConfig({}, full), full);
    }
    // And no field of ResolvedConfig is missing from that list.
    assert.deepEqual(Object.keys(defaultConfig({}, {})).sort(), [
      'enableWatchBookmarks',
      'fieldSelector',
      'labelSelector',
      'syncPeriodMs',
      'transform',
      'unsafeDisableDeepCopy',
    ]);
  });

  it('refuses ByObject.namespaces for cluster-scoped kinds', async () => {
    await assert.rejects(
      defaultOptions({ byObject: { 'v1/Node': { namespaces: {} } } }, async () => false),
      { message: 'type *v1.Node is not namespaced, but its ByObject.Namespaces setting is not nil' },
    );
  });

  it('reports kinds whose scope cannot be determined', async () => {
    await assert.rejects(
      defaultOptions({ byObject: { 'example.com/v1/Nope': {} } }, async () => {
        throw new Error('no matches for kind "Nope" in version "example.com/v1"');
      }),
      {
        message:
          'failed to determine if *v1.Nope is namespaced: no matches for kind "Nope" in version "example.com/v1"',
      },
    );
  });

  it('defaults type-level settings of cluster-scoped kinds from the globals', async () => {
    const o = await defaultOptions(
      { byObject: { 'v1/Namespace': {} }, defaultLabelSelector: 'a=b', defaultNamespaces: { ns1: {} } },
      async () => false,
    );
    assert.equal(o.byObject.get('v1/Namespace')!.namespaces, undefined);
    assert.equal(o.byObject.get('v1/Namespace')!.config.labelSelector?.toString(), 'a=b');
  });
});

describe('jitteredSyncPeriod', () => {
  it('is 10 h × U[0.9, 1.1) by default', () => {
    assert.equal(
      jitteredSyncPeriod(undefined, () => 0),
      9 * 3600_000,
    );
    assert.ok(jitteredSyncPeriod(undefined, () => 0.9999) < 11 * 3600_000);
    const p = jitteredSyncPeriod(1000);
    assert.ok(p >= 900 && p < 1100);
  });
});
