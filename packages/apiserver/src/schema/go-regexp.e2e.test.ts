import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';

/**
 * A CRD's `pattern` and its CEL rules' regular expressions run as Go's regexp does (RE2: linear time, RE2
 * syntax), over real HTTPS. With ECMAScript's backtracking RegExp a 33-character value against `^(a+)+$`
 * held the event loop, and so every request of the server, for about a minute; a few more characters,
 * for hours. The server runs in this process: were it to backtrack, the request would not come back
 * within the bound asserted below.
 */

let t: TestServer;
const GROUP = 'regexp.certkit.test';
const widgets = `/apis/${GROUP}/v1/namespaces/default/widgets`;
/** Well over what a linear match of a few dozen characters takes, well under what backtracking takes. */
const FAST_MS = 5_000;
const HOSTILE = `${'a'.repeat(33)}!`;

function crd(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  const plural = `${name}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: name, kind: name[0]!.toUpperCase() + name.slice(1) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
        },
      ],
    },
  };
}

async function waitServed(path: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await t.fetch('GET', path)).status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${path} never served`);
}

/** Creates a Widget and returns the answer and how long it took. */
async function createWidget(name: string, spec: Record<string, unknown>) {
  const started = performance.now();
  const res = await t.fetch('POST', widgets, {
    body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec },
  });
  return { res, ms: performance.now() - started };
}

before(async () => {
  t = await startTestServer();
  const res = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: crd('widget', {
      type: 'object',
      properties: {
        pattern: { type: 'string', pattern: '^(a+)+$' },
        rule: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.matches('^(a+)+$')" }] },
        // The regular expression comes from the object itself: whoever writes it picks the pattern.
        text: { type: 'string' },
        regexp: { type: 'string' },
      },
      'x-kubernetes-validations': [
        { rule: '!has(self.regexp) || matches(self.text, self.regexp)', message: 'text must match regexp' },
      ],
    }),
  });
  assert.equal(res.status, 201, res.text);
  await waitServed(widgets);
});
after(async () => {
  await t.close();
});

describe('regular expressions of CRD schemas', () => {
  it('a pattern that backtracking would take exponential time on: 422 at once', async () => {
    const { res, ms } = await createWidget('pattern-hostile', { pattern: HOSTILE });
    assert.equal(res.status, 422, res.text);
    assert.equal(
      res.json.message,
      `Widget.${GROUP} "pattern-hostile" is invalid: spec.pattern: Invalid value: "${HOSTILE}": spec.pattern in body should match '^(a+)+$'`,
    );
    assert.ok(ms < FAST_MS, `took ${ms} ms`);
    const ok = await createWidget('pattern-ok', { pattern: 'aaaa' });
    assert.equal(ok.res.status, 201, ok.res.text);
  });

  it("a CEL rule's matches(): 422 at once", async () => {
    const { res, ms } = await createWidget('rule-hostile', { rule: HOSTILE });
    assert.equal(res.status, 422, res.text);
    assert.match(
      res.json.message,
      /spec\.rule: Invalid value: "string": failed rule: self\.matches\('\^\(a\+\)\+\$'\)$/,
    );
    assert.ok(ms < FAST_MS, `took ${ms} ms`);
    assert.equal((await createWidget('rule-ok', { rule: 'aaa' })).res.status, 201);
  });

  it('a CEL rule matching against a pattern taken from the object: 422 at once', async () => {
    const { res, ms } = await createWidget('object-hostile', { text: HOSTILE, regexp: '^(a|a)+$' });
    assert.equal(res.status, 422, res.text);
    assert.match(res.json.message, /spec: Invalid value: "object": text must match regexp$/);
    assert.ok(ms < FAST_MS, `took ${ms} ms`);
    assert.equal((await createWidget('object-ok', { text: 'aaa', regexp: '^(a|a)+$' })).res.status, 201);
  });

  it("a CRD whose pattern RE2 cannot run (lookahead): 422 with Go regexp's error, as kube-apiserver", async () => {
    const res = await t.fetch('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd('gadget', { type: 'object', properties: { p: { type: 'string', pattern: '^(?=a)a$' } } }),
    });
    assert.equal(res.status, 422, res.text);
    assert.match(
      res.json.message,
      /spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[p\]\.pattern: Invalid value: "\^\(\?=a\)a\$": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`/,
    );
  });
});
