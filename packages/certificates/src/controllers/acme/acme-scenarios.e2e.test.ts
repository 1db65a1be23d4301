/**
 * More of cert-manager's ACME e2e scenarios, against a real Pebble and BIND with the whole certificate
 * controller: renewal by `certkit renew` through a new Order, a batch of issuances under Pebble's random
 * badNonce rejections (left at their default 5 %) none of which fails, and what an operator sees of Orders and
 * Challenges with kubectl (`get orders,challenges`, `describe challenge`, `describe order`): their states and
 * the Events cert-manager records on them.
 */

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  ACME_ZONE,
  acmeEnvironmentSkip,
  eventually,
  startAcmeEnvironment,
  type AcmeEnvironment,
} from '@certkit/testenv/acme/acme-environment';
import { runCli } from '@certkit/testenv/cli/cli-process';
import { builtins } from '@certkit/runtime';
import { kubectlFor, kubectlSkip, type Kubectl } from '@certkit/testenv/kubectl/kubectl';
import type { Certificate, CertificateRequest, Challenge, Order } from '../../api/types.ts';

const skip = acmeEnvironmentSkip();

function readyCondition(obj: {
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}) {
  return obj.status?.conditions?.find((c) => c.type === 'Ready');
}

function certificate(namespace: string, name: string, issuer: string, dnsNames: string[]): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace },
    spec: {
      secretName: `${name}-tls`,
      dnsNames,
      privateKey: { algorithm: 'ECDSA', size: 256 },
      issuerRef: { name: issuer },
    },
  } as Certificate;
}

/** The sum of the ACME client's request counts answered `status`, over every action. */
function acmeRequestsAnswered(metricsText: string, status: string): number {
  let sum = 0;
  for (const m of metricsText.matchAll(
    new RegExp(`^certmanager_http_acme_client_request_count\\{[^}]*status="${status}"[^}]*\\} (\\d+)$`, 'gm'),
  )) {
    sum += Number(m[1]);
  }
  return sum;
}

describe('ACME scenarios: renewal, badNonce, kubectl', { skip }, () => {
  let env: AcmeEnvironment;
  before(async () => {
    // Pebble's badNonce rejections at their default rate (5 %): startAcmeEnvironment leaves them on.
    env = await startAcmeEnvironment({ metricsBindAddress: '127.0.0.1:0' });
  });
  after(async () => {
    await env?.close();
  });

  async function issued(
    namespace: string,
    name: string,
    test: (cert: Certificate) => boolean = () => true,
    timeoutMs = 90_000,
  ): Promise<Certificate> {
    return eventually(
      async () => {
        const cert = (await env.resources.certificates.get(namespace, name)) as Certificate;
        return readyCondition(cert)?.status === 'True' && test(cert) ? cert : undefined;
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

  const ordersIn = async (ns: string) => (await env.resources.orders.list(ns)).items as Order[];
  const challengesIn = async (ns: string) => (await env.resources.challenges.list(ns)).items as Challenge[];

  it('renews through a new Order when `certkit renew` marks the Certificate', async () => {
    const ns = 'renewal';
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    const name = `www.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'web', 'pebble', [name]));
    const first = await issued(ns, 'web');
    assert.equal(first.status?.revision, 1);
    const firstLeaf = await leafOf(ns, 'web-tls');
    const [firstOrder] = await ordersIn(ns);
    assert.equal(firstOrder.status?.state, 'valid');

    const renew = await runCli(['renew', 'web', '-n', ns, '--kubeconfig', env.server.kubeconfigPath]);
    assert.equal(renew.code, 0, renew.stderr);
    const renewed = await issued(ns, 'web', (c) => (c.status?.revision ?? 0) >= 2);
    assert.equal(renewed.status?.revision, 2);

    const secondLeaf = await leafOf(ns, 'web-tls');
    assert.notEqual(secondLeaf.serialNumber, firstLeaf.serialNumber, 'a new certificate');
    assert.equal(secondLeaf.subjectAltName, `DNS:${name}`);
    assert.match(secondLeaf.issuer, /Pebble Intermediate CA/);
    // The new certificate came from a new Order, of the new CertificateRequest.
    const requests = (await env.resources.requests.list(ns)).items as CertificateRequest[];
    const current = requests.find(
      (r) => r.metadata.annotations?.['cert-manager.io/certificate-revision'] === '2',
    );
    assert.ok(current, 'the revision-2 CertificateRequest exists');
    assert.equal(readyCondition(current)?.reason, 'Issued');
    const second = (await ordersIn(ns)).find((o) => o.metadata.uid !== firstOrder.metadata.uid);
    assert.ok(second, 'a second Order');
    assert.notEqual(second.metadata.name, firstOrder.metadata.name);
    assert.equal(second.metadata.ownerReferences?.[0]?.name, current.metadata.name);
    assert.equal(second.status?.state, 'valid');
    assert.notEqual(second.status?.url, firstOrder.status?.url, 'a new order at Pebble');
    const chain = Buffer.from(second.status?.certificate ?? '', 'base64').toString();
    assert.ok(chain.includes(secondLeaf.toString().trim()), "the Order's chain holds the new certificate");
  });

  it('never fails an issuance for Pebble’s random badNonce rejections (default rate), over 16 issuances', async () => {
    const ns = 'nonces';
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()]);
    const rejectedBefore = acmeRequestsAnswered(env.controller.metrics.render(), '400');
    const count = 16;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        env.resources.certificates.create(ns, certificate(ns, `n${i}`, 'pebble', [`n${i}.${ACME_ZONE}`])),
      ),
    );
    for (let i = 0; i < count; i++) {
      const cert = await issued(ns, `n${i}`);
      assert.equal(cert.status?.failedIssuanceAttempts, undefined, `n${i} never failed`);
    }
    // Each Certificate took exactly one request and one Order: no attempt failed and was retried.
    const requests = (await env.resources.requests.list(ns)).items as CertificateRequest[];
    assert.equal(requests.length, count);
    assert.ok(requests.every((r) => readyCondition(r)?.reason === 'Issued'));
    const orders = await ordersIn(ns);
    assert.equal(orders.length, count);
    assert.ok(orders.every((o) => o.status?.state === 'valid'));
    // The rejections did happen (about 8 signed requests an issuance, so P(none) ≈ 0.95^128 ≈ 0.1 %): Pebble
    // answered 400 badNonce and the client signed again; nothing else in a successful run is a 400.
    const rejected = acmeRequestsAnswered(env.controller.metrics.render(), '400') - rejectedBefore;
    assert.ok(rejected > 0, 'some nonces were rejected and retried');
  });

  it('serves certmanager_http_acme_client_request_duration_seconds on /metrics as upstream’s summary', async () => {
    const ns = 'duration-summary';
    await env.readyIssuer(ns, 'pebble', [env.dns01Solver()]);
    await env.resources.certificates.create(ns, certificate(ns, 'timed', 'pebble', [`timed.${ACME_ZONE}`]));
    await issued(ns, 'timed');
    const response = await fetch(`${env.controller.manager.url}/metrics`);
    assert.equal(response.status, 200);
    const text = await response.text();
    const name = 'certmanager_http_acme_client_request_duration_seconds';
    assert.match(text, new RegExp(`^# TYPE ${name} summary$`, 'm'));
    assert.match(
      text,
      new RegExp(`^# HELP ${name} The HTTP request latencies in seconds for the ACME client\\.$`, 'm'),
    );
    assert.doesNotMatch(text, new RegExp(`^${name}_bucket`, 'm'), 'no histogram buckets');
    const host = new URL(env.pebble.directoryUrl).host;
    // Upstream's labels and objectives: 0.5, 0.9 and 0.99 for each label set, then its sum and count.
    const labels = `scheme="https",host="${host}",action="fetch_cert",method="POST",status="200"`;
    const sample = (line: string) => {
      const value = text.split('\n').find((l) => l.startsWith(`${line} `));
      assert.ok(value, `${line} is served`);
      return Number(value.slice(line.length + 1));
    };
    const quantiles = ['0.5', '0.9', '0.99'].map((q) => {
      const series = [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].find(
        ([, l]) =>
          l.includes(`quantile="${q}"`) && l.includes('action="fetch_cert"') && l.includes('status="200"'),
      );
      assert.ok(series, `quantile ${q} of fetch_cert is served`);
      const set = Object.fromEntries([...series[1].matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
      assert.deepEqual(Object.keys(set).sort(), ['action', 'host', 'method', 'quantile', 'scheme', 'status']);
      return Number(series[2]);
    });
    assert.ok(
      quantiles.every((v) => v > 0 && v < 90),
      `quantiles are request durations: ${quantiles.join(', ')}`,
    );
    assert.ok(quantiles[0] <= quantiles[1] && quantiles[1] <= quantiles[2], 'quantiles are ordered');
    // Every round trip is both counted and timed, so the summary's count is the counter's value.
    const count = sample(`${name}_count{${labels}}`);
    assert.ok(count >= 1);
    assert.equal(count, sample(`certmanager_http_acme_client_request_count{${labels}}`));
    assert.ok(sample(`${name}_sum{${labels}}`) > 0);
  });

  it('exports certmanager_certificate_challenge_status for each Challenge while it exists, as upstream', async () => {
    const ns = 'challenge-metrics';
    // The solver waits 3 s after presenting instead of self-checking: long enough to scrape the Challenge.
    await env.readyIssuer(ns, 'pebble', [{ ...env.http01Solver(), waitInsteadOfSelfCheck: '3s' }]);
    const name = `b.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'scraped', 'pebble', [name]));
    const presented = await eventually(
      async () => (await challengesIn(ns)).find((c) => c.status?.presented === true),
      'a presented Challenge',
      30_000,
    );
    const series = (text: string) =>
      text
        .split('\n')
        .filter(
          (l) => l.startsWith('certmanager_certificate_challenge_status{') && l.includes(`namespace="${ns}"`),
        );
    const scraped = series(env.controller.metrics.render());
    assert.equal(scraped.length, 8, 'one series per state upstream lists');
    assert.ok(
      scraped.includes(
        `certmanager_certificate_challenge_status{status="pending",domain="${name}",reason="",processing="true",` +
          `name="${presented.metadata.name}",namespace="${ns}",type="HTTP-01"} 1`,
      ),
      scraped.join('\n'),
    );
    assert.equal(scraped.filter((l) => l.endsWith(' 1')).length, 1);
    await issued(ns, 'scraped');
    // Deleted with its valid Order: its series go with it.
    await eventually(
      async () => (series(env.controller.metrics.render()).length === 0 ? true : undefined),
      'no challenge series left',
      15_000,
    );
  });

  it('`certkit status certificate` shows the ACME Order and its Challenges, as cmctl', async () => {
    const ns = 'status';
    await env.admin
      .resource(builtins.namespaces)
      .create(undefined, { metadata: { name: ns } })
      .catch(() => undefined);
    await env.resources.secrets.create(ns, {
      metadata: { name: 'cloudflare', namespace: ns },
      data: { token: Buffer.from('token').toString('base64') },
    } as never);
    // A solver certkit cannot present with: the Challenge stays pending, its reason says why.
    await env.readyIssuer(ns, 'cloudflare', [
      { dns01: { cloudflare: { apiTokenSecretRef: { name: 'cloudflare', key: 'token' } } } },
    ]);
    const name = `c.${ACME_ZONE}`;
    await env.resources.certificates.create(ns, certificate(ns, 'hangs', 'cloudflare', [name]));
    const challenge = await eventually(
      async () => (await challengesIn(ns)).find((c) => c.status?.reason?.includes('is not implemented')),
      'the Challenge saying why it hangs',
      30_000,
    );
    const [order] = await ordersIn(ns);
    const status = await runCli([
      'status',
      'certificate',
      'hangs',
      '-n',
      ns,
      '--kubeconfig',
      env.server.kubeconfigPath,
    ]);
    assert.equal(status.code, 0, status.stderr);
    const authz = order.status!.authorizations![0];
    assert.ok(
      status.stdout.endsWith(
        [
          'Order:',
          `  Name: ${order.metadata.name}`,
          '  State: pending, Reason: ',
          '  Authorizations:',
          `    URL: ${authz.url}, Identifier: ${name}, Initial State: pending, Wildcard: false`,
          'Challenges:',
          `- Name: ${challenge.metadata.name}, Type: DNS-01, Token: ${challenge.spec.token}, Key: ${challenge.spec.key}, ` +
            'State: pending, Reason: the DNS01 provider "cloudflare" is not implemented by certkit (implemented: rfc2136), ' +
            'Processing: true, Presented: false',
          '',
        ].join('\n'),
      ),
      status.stdout,
    );

    // Issued: the Order is valid and its Challenges are gone, which the view says as cmctl does.
    await env.readyIssuer(ns, 'pebble', [env.http01Solver()]);
    await env.resources.certificates.create(ns, certificate(ns, 'done', 'pebble', [`b.${ACME_ZONE}`]));
    await issued(ns, 'done');
    const done = await runCli([
      'status',
      'certificate',
      'done',
      '-n',
      ns,
      '--kubeconfig',
      env.server.kubeconfigPath,
    ]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /\nOrder:\n {2}Name: done-1-\d+\n {2}State: valid, Reason: \n/);
    assert.ok(done.stdout.endsWith('No Challenges found for this Certificate\n'), done.stdout);
  });

  describe('kubectl', { skip: kubectlSkip }, () => {
    let kubectl: Kubectl;
    before(() => {
      kubectl = kubectlFor({ ...process.env, KUBECONFIG: env.server.kubeconfigPath }, env.server.dataDir);
    });

    it('shows Order and Challenge states and their Events in get and describe', async () => {
      const ns = 'describe';
      // The solver waits 5 s after presenting instead of self-checking: long enough to look at the Challenge.
      await env.readyIssuer(ns, 'pebble', [{ ...env.http01Solver(), waitInsteadOfSelfCheck: '5s' }]);
      const name = `a.${ACME_ZONE}`;
      await env.resources.certificates.create(ns, certificate(ns, 'shown', 'pebble', [name]));
      const presented = await eventually(
        async () => (await challengesIn(ns)).find((c) => c.status?.presented === true),
        'a presented Challenge',
        30_000,
      );
      const challengeName = presented.metadata.name!;

      const pending = await kubectl.ok('get', 'orders,challenges', '-n', ns);
      assert.match(pending, /order\.acme\.cert-manager\.io\/\S+\s+pending\s/);
      assert.match(
        pending,
        new RegExp(`challenge.acme.cert-manager.io/${challengeName}\\s+pending\\s+a\\.acme\\.test`),
      );

      const described = await kubectl.ok('describe', 'challenge', challengeName, '-n', ns);
      assert.match(described, /^Kind:\s+Challenge$/m);
      assert.match(described, /^\s+State:\s+pending$/m);
      assert.match(described, /^\s+Presented:\s+true$/m);
      assert.match(described, /^\s+Processing:\s+true$/m);
      assert.match(described, /^\s+Type:\s+HTTP-01$/m);
      assert.match(described, new RegExp(`^\\s+Dns Name:\\s+${name.replaceAll('.', '\\.')}$`, 'm'));
      assert.match(described, /^Events:/m);
      // From: the cert-manager controller that records each (cert-manager-<controller>).
      assert.match(
        described,
        /Normal\s+Started\s+\S+\s+cert-manager-challenges\s+Challenge scheduled for processing/,
      );
      assert.match(
        described,
        /Normal\s+Presented\s+\S+\s+cert-manager-challenges\s+Presented challenge using HTTP-01 challenge mechanism/,
      );

      await issued(ns, 'shown');
      const [order] = await ordersIn(ns);
      const done = await kubectl.ok('get', 'orders', '-n', ns);
      assert.match(done, new RegExp(`${order.metadata.name}\\s+valid\\s`));
      const orderDescribed = await kubectl.ok('describe', 'order', order.metadata.name!, '-n', ns);
      assert.match(orderDescribed, /^\s+State:\s+valid$/m);
      assert.match(
        orderDescribed,
        /Normal\s+Created\s+\S+\s+cert-manager-orders\s+Created Challenge resource/,
      );
      assert.match(
        orderDescribed,
        /Normal\s+Complete\s+\S+\s+cert-manager-orders\s+Order completed successfully/,
      );
      const requestDescribed = await kubectl.ok('describe', 'certificaterequest', `shown-1`, '-n', ns);
      assert.match(
        requestDescribed,
        /Normal\s+OrderCreated\s+\S+\s+cert-manager-certificaterequests-issuer-acme\s+Created Order resource/,
      );
      assert.match(
        requestDescribed,
        /Normal\s+cert-manager\.io\s+\S+\s+cert-manager-certificaterequests-approver\s+Certificate request has been approved/,
      );
      // The Challenge is deleted once its Order is valid; its Events stay, DomainVerified the last of them.
      const events = await eventually(
        async () => {
          const out = await kubectl.ok(
            'get',
            'events',
            '-n',
            ns,
            '--field-selector',
            `involvedObject.kind=Challenge,involvedObject.name=${challengeName}`,
          );
          return /DomainVerified/.test(out) ? out : undefined;
        },
        'the DomainVerified Event of the Challenge',
        15_000,
      );
      assert.match(
        events,
        /Normal\s+DomainVerified\s+challenge\/\S+\s+Domain "a\.acme\.test" verified with "HTTP-01" validation/,
      );
    });
  });
});
