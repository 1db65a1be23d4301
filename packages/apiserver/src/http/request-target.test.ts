import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StatusError } from '@certkit/apimachinery';
import { parseRequestTarget } from './request-target.ts';

/** What the server read from a target before: a WHATWG URL against an http: base. */
function viaUrl(target: string): { pathname: string; query: [string, string][] } {
  const url = new URL(target, 'http://apiserver');
  return { pathname: url.pathname, query: [...url.searchParams] };
}

describe('parseRequestTarget', () => {
  it('reads every target as a URL parser does', () => {
    const targets = [
      '/',
      '/api/v1/namespaces/default/secrets',
      '/api/v1/namespaces/default/secrets/tls-1.example',
      '/apis/cert-manager.io/v1/namespaces/bench/certificates/cert-1/status',
      '/api/v1/namespaces/default/events?limit=500&resourceVersion=0',
      '/api/v1/secrets?watch=true&labelSelector=controller.cert-manager.io%2Ffao%3Dtrue&allowWatchBookmarks=true',
      '/api/v1/secrets?labelSelector=!controller.cert-manager.io/fao&fieldSelector=metadata.name=a',
      "/api/v1/secrets?labelSelector=a+in+(x,y)&x='quoted'",
      '/api/v1/secrets?a=%7a&b=%41',
      '/api/v1/secrets?',
      '/api/v1/secrets??a=b',
      '/api/v1/namespaces/a%20b/secrets',
      '/api/v1/secrets/..x/.y/z.',
      '//evil.example/api/v1/secrets',
      '/api\\v1\\secrets',
      '/api/v1/secrets#fragment',
      '/api/v1/secrets?a=b#fragment',
      '/api/v1/secrets?a=b c',
      '/api/v1/secrets?a="b"&c=<d>',
      '/api/v1/name with space',
      '/api/v1/{braces}/`tick`/^caret',
      '/api/v1/ünïcode?q=ü',
      '/healthz/',
      '/readyz?verbose',
      'http://other.example/api/v1/secrets?x=1',
      '*',
    ];
    for (const target of targets) {
      const { pathname, searchParams } = parseRequestTarget(target);
      assert.deepEqual({ pathname, query: [...searchParams] }, viaUrl(target), target);
    }
  });
  it('keeps dot segments, plain or escaped, as kube-apiserver does, where a URL parser resolves them', () => {
    for (const [target, pathname, query] of [
      ['/api/v1/../v1/secrets', '/api/v1/../v1/secrets', []],
      ['/api/v1/./secrets', '/api/v1/./secrets', []],
      ['/api/v1/namespaces/x/configmaps/..', '/api/v1/namespaces/x/configmaps/..', []],
      ['/api/v1/namespaces/x/configmaps/.?a=b', '/api/v1/namespaces/x/configmaps/.', [['a', 'b']]],
      ['/api/v1/namespaces/%2e%2E/configmaps', '/api/v1/namespaces/%2e%2E/configmaps', []],
      ['/api/v1/namespaces/x/configmaps/.%2e?q=%41', '/api/v1/namespaces/x/configmaps/.%2e', [['q', 'A']]],
    ] as const) {
      const parsed = parseRequestTarget(target);
      assert.deepEqual({ pathname: parsed.pathname, query: [...parsed.searchParams] }, { pathname, query });
    }
  });
  it('refuses a % that starts no escape, in the path or the query, with the text of Go', () => {
    for (const [target, escape] of [
      ['/%zz', '%zz'],
      ['/api/v1/secrets/a%2', '%2'],
      ['/api/v1/secrets?a=%zz&b=%41', '%zz'],
      ['/api/v1/secrets?a=b%', '%'],
    ]) {
      assert.throws(
        () => parseRequestTarget(target),
        (err: StatusError) =>
          err.code === 400 && err.status.message === `invalid URL escape ${JSON.stringify(escape)}`,
        target,
      );
    }
  });
  it('refuses a target the URL parser cannot read with 400, not an exception', () => {
    // A leading `//` is read as an authority: a host that is none made the parser throw (a 500).
    for (const target of ['//z%25|Y]/v3/apis/coordination.k8s.io/v1', '//[/api', 'http://[::1/api']) {
      assert.throws(
        () => parseRequestTarget(target),
        (err: StatusError) =>
          err.code === 400 &&
          err.status.message === `parse ${JSON.stringify(target)}: invalid URI for request`,
        target,
      );
    }
  });
});
