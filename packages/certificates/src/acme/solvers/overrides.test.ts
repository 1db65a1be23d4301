import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ACMEChallengeSolver } from '../../api/acme-types.ts';
import { applyHTTP01Overrides } from './overrides.ts';

const NAME = 'acme.cert-manager.io/http01-override-ingress-name';
const CLASS = 'acme.cert-manager.io/http01-override-ingress-class';
const CLASS_NAME = 'acme.cert-manager.io/http01-override-ingress-ingressclassname';
const REF_NAME = 'acme.cert-manager.io/http01-parentrefname';
const REF_KIND = 'acme.cert-manager.io/http01-parentrefkind';
const REF_NS = 'acme.cert-manager.io/http01-parentrefnamespace';

function applied(solver: ACMEChallengeSolver, annotations?: Record<string, string>): ACMEChallengeSolver {
  const copy = structuredClone(solver);
  applyHTTP01Overrides(copy, { namespace: 'apps', annotations });
  return copy;
}

describe('applyHTTP01Overrides: Ingress', () => {
  const solver: ACMEChallengeSolver = {
    http01: { ingress: { ingressClassName: 'nginx', serviceType: 'ClusterIP' } },
  };

  const rows: { name: string; annotations?: Record<string, string>; want: object }[] = [
    { name: 'no annotations', want: { ingressClassName: 'nginx', serviceType: 'ClusterIP' } },
    {
      name: 'unrelated annotations',
      annotations: { a: 'b' },
      want: { ingressClassName: 'nginx', serviceType: 'ClusterIP' },
    },
    {
      name: 'the name override',
      annotations: { [NAME]: 'web' },
      want: { name: 'web', serviceType: 'ClusterIP' },
    },
    {
      name: 'the class override',
      annotations: { [CLASS]: 'traefik' },
      want: { class: 'traefik', serviceType: 'ClusterIP' },
    },
    {
      name: 'the ingressClassName override',
      annotations: { [CLASS_NAME]: 'haproxy' },
      want: { ingressClassName: 'haproxy', serviceType: 'ClusterIP' },
    },
    {
      name: 'an empty class override is still an override',
      annotations: { [CLASS]: '' },
      want: { class: '', serviceType: 'ClusterIP' },
    },
  ];
  for (const row of rows) {
    it(`applies ${row.name}`, () =>
      assert.deepEqual(applied(solver, row.annotations).http01?.ingress, row.want));
  }

  it('refuses two overrides at once', () => {
    assert.throws(() => applied(solver, { [NAME]: 'web', [CLASS]: 'traefik' }), {
      message: 'may not specify more than one of: name, class, ingressClassName override annotations',
    });
  });

  it('leaves DNS-01 and Gateway solvers alone', () => {
    const dns: ACMEChallengeSolver = { dns01: { webhook: { groupName: 'g', solverName: 's' } } };
    assert.deepEqual(applied(dns, { [NAME]: 'web', [CLASS]: 'x' }), dns);
  });
});

describe('applyHTTP01Overrides: Gateway parentRefs', () => {
  const solver: ACMEChallengeSolver = {
    http01: {
      gatewayHTTPRoute: {
        parentRefs: [
          { name: 'edge', namespace: 'gateways', kind: 'Gateway', sectionName: 'http' },
          { name: 'internal', namespace: 'gateways', kind: 'Gateway' },
        ],
      },
    },
  };
  const refs = (s: ACMEChallengeSolver) => s.http01?.gatewayHTTPRoute?.parentRefs;

  it('appends the annotated parent, in the Order namespace unless one is given', () => {
    assert.deepEqual(refs(applied(solver, { [REF_NAME]: 'team-gw', [REF_KIND]: 'Gateway' })), [
      ...refs(solver)!,
      { name: 'team-gw', namespace: 'apps', kind: 'Gateway' },
    ]);
    assert.deepEqual(
      refs(applied(solver, { [REF_NAME]: 'g', [REF_KIND]: 'Gateway', [REF_NS]: 'x' }))!.at(-1),
      {
        name: 'g',
        namespace: 'x',
        kind: 'Gateway',
      },
    );
  });

  it('replaces an issuer parentRef for the same parent (sections ignored; no kind matches any kind)', () => {
    assert.deepEqual(
      refs(applied(solver, { [REF_NAME]: 'edge', [REF_KIND]: 'Gateway', [REF_NS]: 'gateways' })),
      [
        { name: 'internal', namespace: 'gateways', kind: 'Gateway' },
        { name: 'edge', namespace: 'gateways', kind: 'Gateway' },
      ],
    );
    const kindless: ACMEChallengeSolver = {
      http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'edge', namespace: 'apps' }] } },
    };
    assert.deepEqual(refs(applied(kindless, { [REF_NAME]: 'edge', [REF_KIND]: 'ListenerSet' })), [
      { name: 'edge', namespace: 'apps', kind: 'ListenerSet' },
    ]);
    // A different kind is another parent: both stay.
    assert.equal(
      refs(applied(solver, { [REF_NAME]: 'edge', [REF_KIND]: 'Other', [REF_NS]: 'gateways' }))!.length,
      3,
    );
  });

  it('refuses a name without a kind, or a kind without a name', () => {
    for (const annotations of [{ [REF_NAME]: 'g' }, { [REF_KIND]: 'Gateway' }] as Record<string, string>[]) {
      assert.throws(() => applied(solver, annotations), {
        message: 'cannot specify only one of parentRefName, parentRefKind override annotations',
      });
    }
  });

  it('refuses a route without parents once annotations are read, as upstream (not without annotations)', () => {
    const none: ACMEChallengeSolver = { http01: { gatewayHTTPRoute: {} } };
    assert.throws(() => applied(none, {}), {
      message: 'must specify parentRefs either through annotations or solver config',
    });
    assert.deepEqual(applied(none, undefined), none);
    assert.deepEqual(refs(applied(none, { [REF_NAME]: 'g', [REF_KIND]: 'Gateway' })), [
      { name: 'g', namespace: 'apps', kind: 'Gateway' },
    ]);
  });
});
