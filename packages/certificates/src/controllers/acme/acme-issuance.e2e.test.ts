/**
 * ACME issuance end to end: Certificates on an ACME Issuer against a real Pebble, HTTP-01 answered by the
 * controller's embedded listener and DNS-01 written into a real BIND with RFC 2136, through the embedded API
 * server and the whole certificate controller. Pebble rejects its default 5 % of nonces and validates at once
 * (PEBBLE_VA_NOSLEEP); it resolves every name through BIND.
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { builtins } from '@certkit/runtime';
import {
  ACME_ZONE,
  acmeEnvironmentSkip,
  eventually,
  startAcmeEnvironment,
  type AcmeEnvironment,
} from '@certkit/testenv/acme/acme-environment';
import { startRateLimitProxy } from '@certkit/testenv/acme/rate-limit-proxy';
import { kubectlFor, kubectlSkip } from '@certkit/testenv/kubectl/kubectl';
import type { Certificate, CertificateRequest, Challenge, Order } from '../../api/types.ts';
import { clusterIssuersRef } from '../refs.ts';

const skip = acmeEnvironmentSkip();

function readyCondition(obj: {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}) {
  return obj.status?.conditions?.find((c) => c.type === 'Ready');
}

function certificate(namespace: string, name: string, issuer: string, dnsNames: string[]): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace },
    spec: { secretName: `${name}-tls`, dnsNames, issuerRef: { name: issuer } },
  } as Certificate;
}

describe('ACME issuance against Pebble and BIND', { skip }, () => {
  let env: AcmeEnvironment;
  before(async () => {
    env = await startAcmeEnvironment();
  });
  after(async () => {
    await env?.close();
  });

  async function issued(namespace: string, name: string, timeoutMs = 90_000): Promise<Certificate> {
    return eventually(
      async () => {
        const cert = (await env.resources.certificates.get(namespace, name)) as Certificate;
        return readyCondition(cert)?.status === 'True' ? cert : undefined;
      },
      `Certificate ${namespace}/${name} Ready`,
      timeoutMs,
    );
  }

  async function leafOf(namespace: string, secretName: string): Promise<X509Certificate> {
    const secret = (await env.resources.secrets.get(namespace, secretName)) as unknown as {
      data: Record<string, string>;
    };
    return new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
  }

  async function ordersIn(namespace: string): Promise<Order[]> {
    return (await env.resources.orders.list(namespace)).items as Order[];
  }

  async function challengesIn(namespace: string): Promise<Challenge[]> {
    return (await env.resources.challenges.list(namespace)).items as Challenge[];
  }

  async function noChallengesLeft(namespace: string): Promise<void> {
    await eventually(
      async () => ((await challengesIn(namespace)).length === 0 ? true : undefined),
      `no Challenges left in ${namespace}`,
      30_000,
    );
  }

  /** Waits until the events of `kind` objects (or the one named) include every reason; events trail writes. */
  async function expectEvents(namespace: string, match: { kind?: string; name?: string }, reasons: string[]) {
    let seen: string[] = [];
    await eventually(
      async () => {
        const list = await env.admin.resource(builtins.events).list(namespace);
        seen = (list.items as unknown as { involvedObject: { kind: string; name: string }; reason: string }[])
          .filter(
            (e) =>
              (!match.kind || e.involvedObject.kind === match.kind) &&
              (!match.name || e.involvedObject.name === match.name),
          )
          .map((e) => e.reason);
        return reasons.every((r) => seen.includes(r)) ? true : undefined;
      },
      `events ${reasons.join(', ')} on ${match.kind ?? ''} ${match.name ?? ''}`,
      10_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; seen: ${seen.join(', ')}`);
    });
  }

  it('issues a single-name Certificate through HTTP-01 on the embedded listener', async () => {
    const ns = 'http01';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    const name = `www.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'web', 'pebble', [name]));
    await issued(ns, 'web');

    const leaf = await leafOf(ns, 'web-tls');
    assert.equal(leaf.subjectAltName, `DNS:${name}`);
    assert.match(leaf.issuer, /Pebble Intermediate CA/);

    const [order] = await ordersIn(ns);
    assert.equal(order.status?.state, 'valid');
    assert.ok(order.status?.certificate, 'the Order keeps the chain');
    assert.equal(order.metadata.ownerReferences?.[0]?.kind, 'CertificateRequest');
    const request = (await env.resources.requests.list(ns)).items[0] as CertificateRequest;
    assert.equal(readyCondition(request)?.reason, 'Issued');
    assert.equal(request.status?.ca, undefined, 'ACME gives no CA');
    await noChallengesLeft(ns);
    // Cleaned up: the listener no longer answers the token Pebble fetched.
    const token = order.status?.authorizations?.[0]?.challenges?.find((c) => c.type === 'http-01')?.token;
    assert.ok(token);
    const port = env.controller.http01!.address()!.port;
    const answer = await fetch(`http://127.0.0.1:${port}/.well-known/acme-challenge/${token}`, {
      headers: { host: name },
    });
    assert.equal(answer.status, 404);

    await expectEvents(ns, { name: request.metadata.name }, ['OrderCreated', 'CertificateIssued']);
    await expectEvents(ns, { name: order.metadata.name }, ['Created', 'Complete']);
    await expectEvents(ns, { kind: 'Challenge' }, ['Started', 'Presented', 'DomainVerified']);
  });

  async function challengeMechanisms(namespace: string): Promise<string[]> {
    const list = await env.admin.resource(builtins.events).list(namespace);
    return (list.items as unknown as { involvedObject: { kind: string }; reason: string; message: string }[])
      .filter((e) => e.involvedObject.kind === 'Challenge' && e.reason === 'Presented')
      .map((e) => e.message);
  }

  it('writes an Order and a Challenge no more often than upstream’s flow needs', async () => {
    const ns = 'writes';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    // Every version of the namespace's Orders and Challenges, from watches opened before the Certificate.
    const stop = new AbortController();
    const seen: { kind: string; type: string; object: Order | Challenge }[] = [];
    // Watched from the lists' resourceVersion, so that nothing written before a watch starts is missed. The
    // loop is returned in an object: an async function returning it would wait for it.
    const follow = async (kind: string, client: typeof env.resources.orders) => {
      const { resourceVersion } = (await client.list(ns)).metadata;
      const loop = (async () => {
        try {
          const events = await client.watch(ns, { signal: stop.signal, resourceVersion });
          for await (const event of events) {
            seen.push({ kind, type: event.type, object: event.object as Order | Challenge });
          }
        } catch {
          // Aborted at the end of the test.
        }
      })();
      return { loop };
    };
    const watching = [
      (await follow('Order', env.resources.orders)).loop,
      (await follow('Challenge', env.resources.challenges)).loop,
    ];
    try {
      await env.resources.certificates.create(ns, certificate(ns, 'web', 'pebble', [`b.${ACME_ZONE}`]));
      await issued(ns, 'web');
      await noChallengesLeft(ns);
      await eventually(
        () => (seen.some((e) => e.kind === 'Challenge' && e.type === 'DELETED') ? true : undefined),
        'the Challenge deleted',
        10_000,
      );
    } finally {
      stop.abort();
      await Promise.all(watching);
    }

    const orders = seen.filter((e) => e.kind === 'Order').map((e) => e.object as Order);
    // The ACME order's URL and its authorizations are written together (upstream's createOrder).
    const firstWithUrl = orders.find((o) => o.status?.url);
    assert.ok(firstWithUrl, 'the Order got its URL');
    assert.ok(
      (firstWithUrl.status?.authorizations ?? []).every((a) => a.identifier && a.challenges?.length),
      'the write that brought the URL brought the authorizations too',
    );
    const challenges = seen.filter((e) => e.kind === 'Challenge').map((e) => e.object as Challenge);
    const valid = challenges.filter((ch) => ch.status?.state === 'valid');
    assert.ok(valid.length > 0, 'the Challenge became valid');
    // The verdict and its clean-up are one write: the Challenge is never seen valid and still processing.
    assert.ok(
      valid.every((ch) => ch.status?.processing === false && ch.status?.presented === false),
      JSON.stringify(valid.map((ch) => ch.status)),
    );
  });

  /** A series of the controller's /metrics, summed over the label sets that include every pair of `labels`. */
  function metric(name: string, labels: Record<string, string>): number {
    let sum = 0;
    for (const line of env.controller.metrics.render().split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      const series = line.slice(0, line.lastIndexOf(' '));
      if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`)))
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }

  /** Waits until the controller's reconciles of `controller` have stopped for a while, none running. */
  async function settled(controller: string): Promise<void> {
    let last = -1;
    await eventually(
      async () => {
        const total = metric('controller_runtime_reconcile_total', { controller });
        const busy = metric('controller_runtime_active_workers', { controller });
        const quiet = total === last && busy === 0;
        last = total;
        await new Promise((resolve) => setTimeout(resolve, 500));
        return quiet ? true : undefined;
      },
      `${controller} settled`,
      15_000,
    );
  }

  it('completes an issuance in one issuing reconcile: no conflict, no live read of the issued request', async () => {
    // Writing the Secret woke the issuing controller again before its Certificate write's watch event came
    // back: that reconcile read the request live, wrote from the replaced version and was answered 409 (~0.9
    // requeues and live GETs per ACME issuance in bench:acme).
    const ns = 'one-issuing';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    const issuing = { controller: 'certificates-issuing' };
    const requeues = () =>
      metric('controller_runtime_reconcile_total', { ...issuing, result: 'requeue' }) +
      metric('controller_runtime_reconcile_total', { ...issuing, result: 'error' });
    const requestGets = () =>
      metric('certkit_client_requests_total', {
        verb: 'get',
        resource: 'certificaterequests.cert-manager.io',
      });
    const before = { requeues: requeues(), gets: requestGets() };

    await env.resources.certificates.create(ns, certificate(ns, 'once', 'pebble', [`a.${ACME_ZONE}`]));
    const cert = await issued(ns, 'once');
    assert.equal(cert.status?.revision, 1);
    await settled(issuing.controller);

    assert.equal(requeues() - before.requeues, 0, 'the issuing controller requeued or failed');
    assert.equal(requestGets() - before.gets, 0, 'the issued request was read live');
  });

  it('issues for an IP address through HTTP-01 (the VA and the self-check dial it directly)', async () => {
    const ns = 'ip';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    await env.resources.certificates.create(ns, {
      ...certificate(ns, 'ip', 'pebble', []),
      spec: { secretName: 'ip-tls', ipAddresses: ['127.0.0.1'], issuerRef: { name: 'pebble' } },
    } as Certificate);
    await issued(ns, 'ip');
    assert.equal((await leafOf(ns, 'ip-tls')).subjectAltName, 'IP Address:127.0.0.1');
  });

  it('issues through DNS-01 with RFC 2136 updates to BIND, and removes the TXT record afterwards', async () => {
    const ns = 'dns01';
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()]);
    const name = `dns.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'dns', 'pebble', [name]));
    await issued(ns, 'dns');
    assert.equal((await leafOf(ns, 'dns-tls')).subjectAltName, `DNS:${name}`);
    await noChallengesLeft(ns);
    assert.deepEqual(await env.bind.txt(`_acme-challenge.${name}`), [], 'the TXT record is cleaned up');
    assert.ok((await challengeMechanisms(ns)).every((m) => m.includes('DNS-01')));
  });

  it('issues for several names, and for a wildcard with its apex (two TXT values at one name, in turn)', async () => {
    const ns = 'multi';
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()]);
    const several = ['a', 'b', 'c'].map((h) => `${h}.${ACME_ZONE}`);
    await env.resources.certificates.create(ns, certificate(ns, 'several', 'pebble', several));
    await env.resources.certificates.create(
      ns,
      certificate(ns, 'wild', 'pebble', [ACME_ZONE, `*.${ACME_ZONE}`]),
    );
    await issued(ns, 'several');
    await issued(ns, 'wild');
    const sans = (await leafOf(ns, 'several-tls')).subjectAltName?.split(', ').sort();
    assert.deepEqual(sans, several.map((n) => `DNS:${n}`).sort());
    const wild = (await leafOf(ns, 'wild-tls')).subjectAltName?.split(', ').sort();
    assert.deepEqual(wild, [`DNS:*.${ACME_ZONE}`, `DNS:${ACME_ZONE}`].sort());
    await noChallengesLeft(ns);
    for (const name of [...several, ACME_ZONE]) {
      assert.deepEqual(await env.bind.txt(`_acme-challenge.${name}`), [], `no TXT left at ${name}`);
    }
  });

  it('splits the names of one Certificate across two solvers by their selectors', async () => {
    const ns = 'split';
    await env.readyIssuer(ns, 'pebble', [
      env.http01Solver({ dnsNames: [`mixed-http.${ACME_ZONE}`] }),
      env.dns01Solver(),
    ]);
    await env.resources.certificates.create(
      ns,
      certificate(ns, 'mixed', 'pebble', [`mixed-http.${ACME_ZONE}`, `mixed-dns.${ACME_ZONE}`]),
    );
    await issued(ns, 'mixed');
    const mechanisms = (await challengeMechanisms(ns)).sort();
    assert.equal(mechanisms.length, 2, mechanisms.join('; '));
    assert.match(mechanisms[0], /DNS-01/);
    assert.match(mechanisms[1], /HTTP-01/);
    await noChallengesLeft(ns);
  });

  it('fails the request when Pebble cannot validate, backs the Certificate off, and issues once fixed', async () => {
    const ns = 'failing';
    // No self-check (the name has no address, so it could never pass): the challenge goes to Pebble as is.
    await env.readyIssuer(ns, 'pebble', [{ ...env.http01Solver(), waitInsteadOfSelfCheck: '1s' }]);
    await env.resources.certificates.create(
      ns,
      certificate(ns, 'nowhere', 'pebble', [`nowhere.${ACME_ZONE}`]),
    );

    const failed = await eventually(
      async () => {
        const list = (await env.resources.requests.list(ns)).items as CertificateRequest[];
        return list.find((r) => readyCondition(r)?.reason === 'Failed');
      },
      'the CertificateRequest Failed',
      60_000,
    );
    const message = failed.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    assert.match(
      message,
      /^Failed to wait for order resource ".*" to become ready: order is in "invalid" state: /,
    );
    await expectEvents(ns, { name: failed.metadata.name }, ['OrderFailed']);
    const [order] = await ordersIn(ns);
    assert.equal(order.status?.state, 'invalid');
    assert.ok(order.status?.failureTime);
    await expectEvents(ns, { kind: 'Challenge' }, ['Failed']);

    const backedOff = await eventually(
      async () => {
        const cert = (await env.resources.certificates.get(ns, 'nowhere')) as Certificate;
        return cert.status?.failedIssuanceAttempts === 1 && cert.status.lastFailureTime ? cert : undefined;
      },
      'the Certificate in failure backoff',
      30_000,
    );
    assert.notEqual(readyCondition(backedOff)?.status, 'True');
    // As upstream, a failed Order keeps its Challenges (for the record), cleaned up and let go.
    const [failedChallenge] = await eventually(
      async () => {
        const list = await challengesIn(ns);
        return list.length === 1 && !list[0].metadata.finalizers?.length ? list : undefined;
      },
      'the invalid Challenge cleaned up',
      30_000,
    );
    assert.equal(failedChallenge.status?.state, 'invalid');
    assert.equal(failedChallenge.status?.presented, false);
    assert.equal(failedChallenge.status?.processing, false);
    // Upstream's texts: the authorization error behind one prefix in the reason, another in the event.
    const authErr = `acme: authorization error for nowhere.${ACME_ZONE}: urn:ietf:params:acme:error:`;
    assert.ok(
      failedChallenge.status?.reason?.startsWith(`Error accepting authorization: ${authErr}`),
      String(failedChallenge.status?.reason),
    );
    const challengeEvents = (await env.admin.resource(builtins.events).list(ns)).items as unknown as {
      involvedObject: { name: string };
      reason: string;
      message: string;
    }[];
    const failedEvent = challengeEvents.find(
      (e) => e.involvedObject.name === failedChallenge.metadata.name && e.reason === 'Failed',
    );
    assert.ok(
      failedEvent?.message.startsWith(`Accepting challenge authorization failed: ${authErr}`),
      String(failedEvent?.message),
    );

    // The fix: a name that resolves. A changed spec ends the backoff at once, as cert-manager's trigger does.
    // A merge patch, as `kubectl patch` sends it: the controller may still be writing the status it read.
    await env.resources.certificates.patch(ns, 'nowhere', 'merge', {
      spec: { dnsNames: [`http.${ACME_ZONE}`] },
    });
    await issued(ns, 'nowhere');
    assert.equal((await leafOf(ns, 'nowhere-tls')).subjectAltName, `DNS:http.${ACME_ZONE}`);
  });

  it('recreates a deleted Order of a pending request, and leaves nothing behind when the Certificate goes', async () => {
    const ns = 'recreate';
    // A name without an address: the HTTP-01 self-check keeps failing, so the Order stays pending.
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    await env.resources.certificates.create(ns, certificate(ns, 'stuck', 'pebble', [`stuck.${ACME_ZONE}`]));
    const waiting = await eventually(
      async () => (await challengesIn(ns)).find((c) => c.status?.reason?.startsWith('Waiting for HTTP-01')),
      'a Challenge waiting for its self-check',
      60_000,
    );
    assert.equal(waiting.status?.processing, true);
    assert.equal(waiting.status?.presented, true);
    assert.deepEqual(waiting.metadata.finalizers, ['acme.cert-manager.io/finalizer']);

    const [first] = await ordersIn(ns);
    if (!kubectlSkip) {
      // What an operator sees: the printer columns of the two CRDs, states included.
      const kubectl = kubectlFor(
        { ...process.env, KUBECONFIG: env.server.kubeconfigPath },
        env.server.dataDir,
      );
      const table = await kubectl.ok('get', 'orders,challenges', '-n', ns, '-o', 'wide');
      assert.match(
        table,
        new RegExp(`order.acme.cert-manager.io/${first.metadata.name}\\s+pending\\s+pebble`),
      );
      assert.match(
        table,
        new RegExp(
          `challenge.acme.cert-manager.io/${waiting.metadata.name}\\s+pending\\s+stuck\\.${ACME_ZONE}`,
        ),
      );
      assert.match(table, /Waiting for HTTP-01 challenge propagation/);
    }
    await env.resources.orders.delete(ns, first.metadata.name!);
    const again = await eventually(
      async () => (await ordersIn(ns)).find((o) => o.metadata.uid !== first.metadata.uid),
      'the Order created again',
      30_000,
    );
    assert.equal(again.metadata.name, first.metadata.name, 'the same spec gives the same name');

    await env.resources.certificates.delete(ns, 'stuck');
    await eventually(
      async () =>
        (await ordersIn(ns)).length === 0 && (await challengesIn(ns)).length === 0 ? true : undefined,
      'no Orders or Challenges left',
      30_000,
    );
  });

  it('reports a DNS-01 update BIND refuses (PresentError), and issues once the TSIG Secret is fixed', async () => {
    const ns = 'badtsig';
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()]);
    // The issuer is Ready with the right key; now the Secret holds a wrong one, so BIND refuses the update.
    const good = await env.resources.secrets.get(ns, env.tsig.secretName);
    await env.resources.secrets.update({
      ...good,
      data: { [env.tsig.secretKey]: Buffer.from(Buffer.alloc(32, 7).toString('base64')).toString('base64') },
    } as never);
    await env.resources.certificates.create(ns, certificate(ns, 'tsig', 'pebble', [`b.${ACME_ZONE}`]));
    const refused = await eventually(
      async () => (await challengesIn(ns)).find((c) => c.status?.reason?.startsWith('DNS update failed')),
      'the Challenge reporting the refused update',
      30_000,
    );
    assert.match(refused.status!.reason!, /NOTAUTH|REFUSED|BADSIG|BADKEY/);
    assert.notEqual(refused.status?.presented, true);
    await expectEvents(ns, { name: refused.metadata.name }, ['PresentError']);

    const current = await env.resources.secrets.get(ns, env.tsig.secretName);
    await env.resources.secrets.update({
      ...current,
      data: (good as unknown as { data: object }).data,
    } as never);
    await issued(ns, 'tsig');
    await noChallengesLeft(ns);
    assert.deepEqual(await env.bind.txt(`_acme-challenge.b.${ACME_ZONE}`), []);
  });

  it('issues from a ClusterIssuer, whose DNS-01 Secret lives in the cluster resource namespace', async () => {
    const ns = 'cluster';
    await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
    await env.admin
      .resource(builtins.namespaces)
      .create(undefined, { metadata: { name: 'kube-system' } })
      .catch(() => undefined);
    const key = env.bind.keys[env.tsig.algorithm];
    await env.resources.secrets.create('kube-system', {
      metadata: { name: env.tsig.secretName, namespace: 'kube-system' },
      data: { [env.tsig.secretKey]: Buffer.from(key.secret).toString('base64') },
    } as never);
    await env.admin.resource(clusterIssuersRef).create(undefined, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: 'pebble-cluster' },
      spec: {
        acme: {
          server: env.pebble.directoryUrl,
          caBundle: Buffer.from(env.pebble.caBundle).toString('base64'),
          privateKeySecretRef: { name: 'pebble-cluster-account' },
          solvers: [env.dns01Solver()],
        },
      },
    } as never);
    await env.resources.certificates.create(ns, {
      ...certificate(ns, 'cl', 'pebble-cluster', [`c.${ACME_ZONE}`]),
      spec: {
        secretName: 'cl-tls',
        dnsNames: [`c.${ACME_ZONE}`],
        issuerRef: { name: 'pebble-cluster', kind: 'ClusterIssuer' },
      },
    } as Certificate);
    await issued(ns, 'cl');
    assert.equal((await leafOf(ns, 'cl-tls')).subjectAltName, `DNS:c.${ACME_ZONE}`);
  });

  it("waits out a 429's Retry-After on newOrder, and then issues with the same Order", async () => {
    const ns = 'ratelimit';
    let newOrders = 0;
    // Pebble has no rate limits: this proxy refuses the first newOrder as Let's Encrypt would. Its Retry-After
    // is longer than the client waits by itself, so the Orders controller has to requeue.
    const proxy = await startRateLimitProxy({
      upstreamDirectoryUrl: env.pebble.directoryUrl,
      upstreamCa: env.pebble.caBundle,
      limit: (method, path) => method === 'POST' && path.startsWith('/order-plz') && ++newOrders === 1,
      retryAfterSeconds: 12,
    });
    try {
      await env.readyIssuer(ns, 'limited', [env.dns01Solver()], {
        server: proxy.directoryUrl,
        caBundle: Buffer.from(proxy.caBundle).toString('base64'),
      });
      const started = Date.now();
      await env.resources.certificates.create(ns, certificate(ns, 'rl', 'limited', [`www.${ACME_ZONE}`]));
      await eventually(() => (proxy.limited.get('order-plz') === 1 ? true : undefined), 'the 429', 30_000);
      const [waiting] = await ordersIn(ns);
      assert.equal(waiting.status?.url, undefined);
      assert.notEqual(waiting.status?.state, 'errored', 'a rate limit does not fail the Order');

      await issued(ns, 'rl');
      assert.ok(Date.now() - started >= 11_000, 'the Order waited for the Retry-After');
      const [order] = await ordersIn(ns);
      assert.equal(order.metadata.uid, waiting.metadata.uid, 'the same Order');
      assert.equal(order.status?.state, 'valid');
      assert.equal(proxy.limited.get('order-plz'), 1);
    } finally {
      await proxy.close();
    }
  });

  it('lets a Challenge go whose DNS-01 provider certkit lacks, so the same name issues through another solver', async () => {
    const ns = 'unimplemented';
    // A cert-manager manifest for Cloudflare, its token Secret included: the Issuer is Ready (the account
    // does not depend on the solver), and the Challenge says that certkit has no such provider.
    await env.admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
    await env.resources.secrets.create(ns, {
      metadata: { name: 'cloudflare-api-token', namespace: ns },
      data: { 'api-token': Buffer.from('token').toString('base64') },
    } as never);
    await env.readyIssuer(ns, 'cloudflare', [
      { dns01: { cloudflare: { apiTokenSecretRef: { name: 'cloudflare-api-token', key: 'api-token' } } } },
    ]);
    const name = `mixed-dns.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'cf', 'cloudflare', [name]));
    const refused = await eventually(
      async () =>
        (await challengesIn(ns)).find((c) => c.status?.reason?.includes('is not implemented by certkit')),
      'the Challenge naming the missing provider',
      30_000,
    );
    assert.equal(
      refused.status?.reason,
      'the DNS01 provider "cloudflare" is not implemented by certkit (implemented: rfc2136)',
    );
    assert.equal(refused.status?.processing, true);
    assert.deepEqual(refused.metadata.finalizers, ['acme.cert-manager.io/finalizer']);
    await expectEvents(ns, { name: refused.metadata.name }, ['PresentError']);

    // Nothing was presented, so there is nothing to clean up: the finalizer goes with the Certificate.
    await env.resources.certificates.delete(ns, 'cf');
    await eventually(
      async () =>
        (await ordersIn(ns)).length === 0 && (await challengesIn(ns)).length === 0 ? true : undefined,
      'no Orders or Challenges left',
      30_000,
    );
    // A Challenge kept processing would hold back every later DNS-01 Challenge for the name (the scheduler
    // runs one per name and type at a time).
    await env.readyIssuer(ns, 'bind', [env.dns01Solver()]);
    await env.resources.certificates.create(ns, certificate(ns, 'rfc2136', 'bind', [name]));
    await issued(ns, 'rfc2136');
    await noChallengesLeft(ns);
    assert.deepEqual(await env.bind.txt(`_acme-challenge.${name}`), []);
  });

  it('says IssuerNotFound on the request of an Issuer deleted mid-issuance, and cleans up when the Certificate goes', async () => {
    const ns = 'issuergone';
    // A DNS-01 solver that waits 10 minutes instead of self-checking: the TXT record stays presented.
    const held = { ...env.dns01Solver(), waitInsteadOfSelfCheck: '10m' };
    await env.readyIssuer(ns, 'pebble', [held]);
    const name = `dns.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'held', 'pebble', [name]));
    await eventually(
      async () => ((await challengesIn(ns)).some((c) => c.status?.presented) ? true : undefined),
      'the Challenge presented',
      30_000,
    );
    assert.equal((await env.bind.txt(`_acme-challenge.${name}`)).length, 1);
    const requestReady = async () => {
      const [cr] = (await env.resources.requests.list(ns)).items as CertificateRequest[];
      return cr ? readyCondition(cr) : undefined;
    };
    assert.match((await requestReady())?.message ?? '', /^Waiting on certificate issuance from order/);

    await env.resources.issuers.delete(ns, 'pebble');
    // Woken by the deletion: the request has no retry of its own while it waits on its Order.
    const gone = await eventually(
      async () => {
        const ready = await requestReady();
        const notFound = 'Referenced "Issuer" not found: issuer.cert-manager.io "pebble" not found';
        return ready?.message === notFound ? ready : undefined;
      },
      'the request saying its Issuer is gone',
      4_000,
    );
    // Already Pending (on its Order), so no new Pending event: upstream's reporter records one per entry.
    assert.equal(gone.reason, 'Pending');

    // The Challenge cleans up without its Issuer: no finalizer left, no TXT record left.
    await env.resources.certificates.delete(ns, 'held');
    await eventually(
      async () =>
        (await ordersIn(ns)).length === 0 && (await challengesIn(ns)).length === 0 ? true : undefined,
      'no Orders or Challenges left',
      30_000,
    );
    assert.deepEqual(await env.bind.txt(`_acme-challenge.${name}`), []);
  });

  it('says on a deleted Challenge why its clean-up fails, and lets it go once the TSIG Secret is back', async () => {
    const ns = 'cleanupfails';
    const held = { ...env.dns01Solver(), waitInsteadOfSelfCheck: '10m' };
    await env.readyIssuer(ns, 'pebble', [held]);
    const name = `dns.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'held', 'pebble', [name]));
    const presented = await eventually(
      async () => (await challengesIn(ns)).find((c) => c.status?.presented),
      'the Challenge presented',
      30_000,
    );
    // As when the namespace is deleted: the Secret goes first, and the TXT record cannot be removed.
    const tsig = await env.resources.secrets.get(ns, env.tsig.secretName);
    await env.resources.secrets.delete(ns, env.tsig.secretName);
    await env.resources.certificates.delete(ns, 'held');
    const failing = await eventually(
      async () => {
        const ch = (await challengesIn(ns)).find((c) => c.metadata.uid === presented.metadata.uid);
        return ch?.status?.reason?.startsWith('Error cleaning up challenge') ? ch : undefined;
      },
      'the deleted Challenge saying why it is kept',
      30_000,
    );
    assert.equal(
      failing.status?.reason,
      `Error cleaning up challenge: rfc2136 TSIG secret: Secret ${ns}/${env.tsig.secretName} not found`,
    );
    assert.ok(failing.metadata.deletionTimestamp);
    await expectEvents(ns, { name: failing.metadata.name }, ['CleanUpError']);
    assert.equal((await env.bind.txt(`_acme-challenge.${name}`)).length, 1, 'the record is still there');

    const { metadata } = tsig as unknown as { metadata: { name: string; namespace: string } };
    await env.resources.secrets.create(ns, {
      metadata: { name: metadata.name, namespace: metadata.namespace },
      data: (tsig as unknown as { data: object }).data,
    } as never);
    await eventually(
      async () =>
        (await ordersIn(ns)).length === 0 && (await challengesIn(ns)).length === 0 ? true : undefined,
      'no Orders or Challenges left once cleaned up',
      60_000,
    );
    assert.deepEqual(await env.bind.txt(`_acme-challenge.${name}`), []);
  });

  it('was refused nothing under deploy/rbac.yaml through every issuance above', () => {
    assert.deepEqual(
      [...new Set(env.forbidden)],
      [],
      'requests of the controller answered 403: deploy/rbac.yaml lacks these permissions',
    );
  });
});

describe('ACME issuance with one worker: DNS-01 settling, HTTP-01 passes, preferredChain', { skip }, () => {
  const WAIT_MS = 8_000;
  let env: AcmeEnvironment;
  before(async () => {
    // One worker per controller: a wait that held it would run the Challenges one after the other.
    env = await startAcmeEnvironment({
      dns01PropagationWaitMs: WAIT_MS,
      concurrentWorkers: 1,
      alternateRoots: 1,
    });
  });
  after(async () => {
    await env?.close();
  });

  async function ready(namespace: string, name: string): Promise<Certificate> {
    return eventually(
      async () => {
        const cert = (await env.resources.certificates.get(namespace, name)) as Certificate;
        return readyCondition(cert)?.status === 'True' ? cert : undefined;
      },
      `Certificate ${namespace}/${name} Ready`,
      90_000,
    );
  }

  it('waits after a passing DNS-01 check by requeueing, so one worker serves several Challenges meanwhile', async () => {
    const ns = 'settle';
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()]);
    const started = Date.now();
    const hosts = ['a', 'b', 'c'];
    for (const host of hosts) {
      await env.resources.certificates.create(ns, certificate(ns, host, 'pebble', [`${host}.${ACME_ZONE}`]));
    }
    for (const host of hosts) await ready(ns, host);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= WAIT_MS, `accepted only after the settling wait (${elapsed} ms)`);
    assert.ok(elapsed < 2 * WAIT_MS, `the three waits overlapped (${elapsed} ms)`);
  });

  it('runs the HTTP-01 self-check passes its own listener answers back to back (ADR 1011), with one worker', async () => {
    const ns = 'http-passes';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    const started = Date.now();
    const hosts = ['a', 'b', 'c'];
    for (const host of hosts) {
      await env.resources.certificates.create(ns, certificate(ns, host, 'pebble', [`${host}.${ACME_ZONE}`]));
    }
    for (const host of hosts) await ready(ns, host);
    const elapsed = Date.now() - started;
    // Upstream's five passes 2 s apart take 8 s per Challenge; answered by the controller's own listener they
    // follow one another at once, so the three Challenges on the one worker end before one such self-check.
    assert.ok(elapsed < 8_000, `no 2 s pauses between passes this process answered (${elapsed} ms)`);
  });

  it("stores the chain whose top certificate's issuer preferredChain names", async () => {
    const ns = 'chains';
    const roots = await env.pebble.roots();
    assert.equal(roots.length, 2);
    const alternate = new X509Certificate(roots[1]).subject.match(/CN=(.*)/)?.[1];
    assert.ok(alternate);
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()], { preferredChain: alternate });
    await env.resources.certificates.create(ns, certificate(ns, 'www', 'pebble', [`www.${ACME_ZONE}`]));
    await ready(ns, 'www');
    const secret = (await env.resources.secrets.get(ns, 'www-tls')) as unknown as {
      data: Record<string, string>;
    };
    const pems = Buffer.from(secret.data['tls.crt'], 'base64')
      .toString()
      .match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)!;
    assert.equal(pems.length, 2, 'leaf and intermediate');
    const top = new X509Certificate(pems[pems.length - 1]);
    assert.equal(top.issuer, `CN=${alternate}`);
    assert.ok(top.verify(new X509Certificate(roots[1]).publicKey), 'signed by the alternate root');
  });
});

describe('ACME issuance without the embedded HTTP-01 listener', { skip }, () => {
  let env: AcmeEnvironment;
  before(async () => {
    env = await startAcmeEnvironment({ http01Listener: false });
  });
  after(async () => {
    await env?.close();
  });

  it('says on the Challenge, and in a PresentError event, that HTTP-01 needs --acme-http01-listen-address', async () => {
    const ns = 'nolistener';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    await env.resources.certificates.create(ns, certificate(ns, 'web', 'pebble', [`www.${ACME_ZONE}`]));
    const challenge = await eventually(
      async () =>
        ((await env.resources.challenges.list(ns)).items as Challenge[]).find((c) =>
          c.status?.reason?.includes('--acme-http01-listen-address'),
        ),
      'the Challenge saying why it cannot be presented',
      30_000,
    );
    assert.equal(
      challenge.status?.reason,
      'HTTP-01 challenges are answered by the embedded solver, which is off: start the controller with --acme-http01-listen-address',
    );
    await eventually(
      async () => {
        const list = await env.admin.resource(builtins.events).list(ns);
        const events = list.items as unknown as { involvedObject: { name: string }; reason: string }[];
        return events.some(
          (e) => e.involvedObject.name === challenge.metadata.name && e.reason === 'PresentError',
        )
          ? true
          : undefined;
      },
      'the PresentError event',
      10_000,
    );
  });
});
