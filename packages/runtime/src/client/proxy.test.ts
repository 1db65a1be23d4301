import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyFor, useProxy } from './proxy.ts';

/** Which requests go through a proxy, as Go's http.ProxyFromEnvironment (client-go's default) decides. */

const server = (url: string) => new URL(url);
const proxied = (url: string, env: Record<string, string>, proxyUrl?: string) =>
  proxyFor(server(url), proxyUrl, env)?.href;

describe('proxyFor', () => {
  it('takes HTTPS_PROXY for https servers and HTTP_PROXY for http ones, upper case first', () => {
    const env = { HTTPS_PROXY: 'http://secure:3128', HTTP_PROXY: 'http://plain:3128' };
    assert.equal(proxied('https://kube.example.com:6443', env), 'http://secure:3128/');
    assert.equal(proxied('http://kube.example.com:8080', env), 'http://plain:3128/');
    assert.equal(proxied('https://kube.example.com', { HTTP_PROXY: 'http://plain:3128' }), undefined);
    assert.equal(
      proxied('https://kube.example.com', { https_proxy: 'http://lower:1', HTTPS_PROXY: 'http://upper:2' }),
      'http://upper:2/',
    );
    assert.equal(proxied('https://kube.example.com', { https_proxy: 'http://lower:1' }), 'http://lower:1/');
  });

  it('reads a proxy without a scheme as http, and refuses schemes it cannot speak', () => {
    assert.equal(
      proxied('https://kube.example.com', { HTTPS_PROXY: 'proxy.corp:3128' }),
      'http://proxy.corp:3128/',
    );
    assert.throws(() => proxied('https://kube.example.com', { HTTPS_PROXY: 'socks5://proxy:1080' }), {
      message: 'unsupported proxy scheme in HTTPS_PROXY: "socks5" (http and https are)',
    });
  });

  it('never proxies localhost or loopback addresses from the environment', () => {
    const env = { HTTPS_PROXY: 'http://proxy:3128' };
    for (const url of [
      'https://localhost:6443',
      'https://127.0.0.1:6443',
      'https://127.9.9.9',
      'https://[::1]:6443',
    ]) {
      assert.equal(proxied(url, env), undefined, url);
    }
  });

  it('takes a kubeconfig proxy-url for every server, whatever the environment says', () => {
    const env = { HTTPS_PROXY: 'http://env:1', NO_PROXY: '*' };
    assert.equal(
      proxied('https://127.0.0.1:6443', env, 'http://u:p@kubeconfig:3128'),
      'http://u:p@kubeconfig:3128/',
    );
    assert.throws(
      () => proxied('https://kube.example.com', {}, 'socks5://proxy:1080'),
      /in proxy-url: "socks5"/,
    );
  });
});

describe('useProxy with NO_PROXY', () => {
  const cases: [host: string, port: string, noProxy: string, proxied: boolean][] = [
    ['kube.example.com', '443', '', true],
    ['kube.example.com', '443', '*', false],
    ['kube.example.com', '443', 'kube.example.com', false],
    ['kube.example.com', '443', 'example.com', false],
    ['example.com', '443', '.example.com', true],
    ['kube.example.com', '443', '.example.com', false],
    ['kube.example.com', '443', '*.example.com', false],
    ['notexample.com', '443', 'example.com', true],
    ['kube.example.com', '443', ' other.org , KUBE.example.com ', false],
    ['kube.example.com', '6443', 'kube.example.com:443', true],
    ['kube.example.com', '443', 'kube.example.com:443', false],
    ['10.0.0.1', '443', '10.0.0.1', false],
    ['10.0.0.1', '443', '10.0.0.2', true],
    ['10.0.0.1', '443', '10.0.0.0/8', false],
    ['11.0.0.1', '443', '10.0.0.0/8', true],
    ['10.0.0.1', '443', '10.0.0.1:6443', true],
    ['fd00::1', '443', 'fd00::/16', false],
    ['fd00::1', '443', '[fd00::1]:443', false],
    ['fd00::1', '443', 'fd00::1', false],
    ['fd00::2', '443', 'fd00::1', true],
  ];
  for (const [host, port, noProxy, expected] of cases) {
    it(`${host}:${port} with NO_PROXY=${JSON.stringify(noProxy)} is ${expected ? '' : 'not '}proxied`, () => {
      assert.equal(useProxy(host, port, noProxy), expected);
    });
  }
});
