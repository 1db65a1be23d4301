import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ServiceAccountTokenAuthenticator } from './serviceaccount/authenticator.ts';
import { bearerToken, tokenMatches } from './token.ts';
import { AUTHENTICATED_GROUP, type UserInfo } from './user.ts';

/** The identity of certkit's generated admin token: in system:masters, as kubeadm's first admin is. */
export const ADMIN_USER: UserInfo = { name: 'certkit-admin', groups: ['system:masters'] };

/** The extended key usage a client certificate needs, when it lists any (Go's x509 verification for kube). */
const CLIENT_AUTH_USAGE = '1.3.6.1.5.5.7.3.2';
const ANY_USAGE = '2.5.29.37.0';

export interface AuthenticatorOptions {
  /** The bearer token certkit generated for its own kubeconfig. */
  adminToken?: string;
  /** Tokens of --token-auth-file. */
  tokens?: Map<string, UserInfo>;
  /** Whether client certificates verified by the TLS layer against --client-ca-file authenticate. */
  clientCertificates?: boolean;
  /** ServiceAccount tokens (JWTs of the TokenRequest API), tried after the static tokens. */
  serviceAccountTokens?: ServiceAccountTokenAuthenticator;
}

/**
 * Who sent a request, as kube-apiserver's authenticators decide it, in their order: a verified client
 * certificate (CN the user, each O a group), else a bearer token (the generated admin token, one of the
 * token file's, or a ServiceAccount token). Every authenticated user is also in system:authenticated.
 * ServiceAccount tokens may need a signature verified or an object read from storage: only then is the
 * answer a promise; the admin token, static tokens, certificates and recently verified ServiceAccount tokens
 * are answered synchronously.
 */
export class Authenticator {
  private readonly adminToken: string | undefined;
  /** Users are completed with system:authenticated once, here, rather than on every request. */
  private readonly adminUser = authenticatedUser(ADMIN_USER);
  private readonly tokens: Map<string, UserInfo> | undefined;
  private readonly clientCertificates: boolean;
  private readonly serviceAccountTokens: ServiceAccountTokenAuthenticator | undefined;
  /** Whether any credential is configured; without one the server runs unauthenticated (tests only). */
  readonly enabled: boolean;
  /** A connection's certificate is the same for all its requests: read and checked once. */
  private readonly certificateUsers = new WeakMap<Socket, UserInfo | null>();

  constructor(options: AuthenticatorOptions) {
    this.adminToken = options.adminToken;
    this.tokens = options.tokens
      ? new Map([...options.tokens].map(([token, user]) => [token, authenticatedUser(user)]))
      : undefined;
    this.clientCertificates = options.clientCertificates ?? false;
    this.serviceAccountTokens = options.serviceAccountTokens;
    this.enabled = !!(this.adminToken || this.tokens || this.clientCertificates || this.serviceAccountTokens);
  }

  authenticate(req: IncomingMessage): UserInfo | undefined | Promise<UserInfo | undefined> {
    return this.fromCertificate(req.socket) ?? this.fromToken(req.headers.authorization);
  }

  private fromToken(header: string | undefined): UserInfo | undefined | Promise<UserInfo | undefined> {
    if (this.adminToken && tokenMatches(this.adminToken, header)) return this.adminUser;
    if (!this.tokens && !this.serviceAccountTokens) return undefined;
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    return this.tokens?.get(token) ?? this.serviceAccountTokens?.authenticate(token);
  }

  private fromCertificate(socket: Socket): UserInfo | undefined {
    if (!this.clientCertificates || !(socket as TLSSocket).encrypted) return undefined;
    let user = this.certificateUsers.get(socket);
    if (user === undefined) {
      user = certificateUser(socket as TLSSocket);
      this.certificateUsers.set(socket, user);
    }
    return user ?? undefined;
  }
}

/** The user of a client certificate that verified against the client CA; null for none or one that did not. */
function certificateUser(socket: TLSSocket): UserInfo | null {
  // `authorized`: the chain verified against the client CA bundle (requestCert without rejectUnauthorized).
  if (!socket.authorized) return null;
  const cert = socket.getPeerCertificate();
  const usages = cert.ext_key_usage;
  if (usages && !usages.includes(CLIENT_AUTH_USAGE) && !usages.includes(ANY_USAGE)) return null;
  const name = single(cert.subject?.CN);
  // kube-apiserver's CommonNameUserConversion: no CN, no user.
  if (!name) return null;
  const organizations = cert.subject?.O;
  const groups =
    organizations === undefined ? [] : Array.isArray(organizations) ? organizations : [organizations];
  return authenticatedUser({ name, groups });
}

function authenticatedUser(user: UserInfo): UserInfo {
  return user.groups.includes(AUTHENTICATED_GROUP)
    ? user
    : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
