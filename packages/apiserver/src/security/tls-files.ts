import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ServingCertificates } from './certificates.ts';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The serving certificate and key given with --tls-cert-file and --tls-private-key-file, checked at start so
 * that a wrong file is one clear line rather than a server no client can connect to.
 *
 * As with kube-apiserver, the certificate file may carry the CA (and intermediates) after the certificate.
 * What clients of the kubeconfig certkit writes must trust is that chain above the certificate; a file with
 * the certificate alone is trusted as it is (right for a self-signed one; kubectl also accepts it directly).
 */
export async function loadServingFiles(certFile: string, keyFile: string): Promise<ServingCertificates> {
  const certPem = await readFile(certFile, 'utf8');
  const keyPem = await readFile(keyFile, 'utf8');
  const chain = parseCertificates(certPem, certFile);
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new Error(`${keyFile}: not a PEM private key: ${(err as Error).message}`);
  }
  if (!chain[0].cert.checkPrivateKey(key)) {
    throw new Error(`${keyFile} is not the private key of the certificate in ${certFile}`);
  }
  const above = chain.slice(1);
  const caCertPem = (above.length > 0 ? above : chain).map((c) => `${c.pem}\n`).join('');
  return { certPem, keyPem, caCertPem };
}

/** The CA bundle of --client-ca-file: one or more PEM certificates. */
export async function loadClientCa(path: string): Promise<string> {
  const pem = await readFile(path, 'utf8');
  parseCertificates(pem, path);
  return pem;
}

function parseCertificates(pem: string, path: string): { pem: string; cert: X509Certificate }[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`${path} holds no PEM certificate`);
  return blocks.map((block, i) => {
    try {
      return { pem: block, cert: new X509Certificate(block) };
    } catch (err) {
      throw new Error(`${path}: certificate ${i + 1} does not parse: ${(err as Error).message}`);
    }
  });
}
