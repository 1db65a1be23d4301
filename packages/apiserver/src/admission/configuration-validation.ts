/**
 * Validation of Mutating- and ValidatingWebhookConfigurations as kube-apiserver's admissionregistration
 * validation does it for v1 (ValidateMutatingWebhookConfiguration and friends), with its field paths and
 * messages, plus one check of our own: a caBundle must hold PEM certificates, since the chain can do nothing
 * else with it (kube-apiserver finds out only when it calls the webhook).
 */

import { X509Certificate } from 'node:crypto';
import {
  type FieldError,
  invalid,
  labelSelectorFromMeta,
  notSupported,
  required,
  StatusError,
  type StoredObject,
  appendErrors,
} from '@certkit/apimachinery';
import { dns1123SubdomainErrors, qualifiedNameErrors } from '@certkit/apimachinery';
import { compileMatchCondition } from './match-conditions.ts';
import {
  ADMISSION_REVIEW_VERSIONS,
  type MatchCondition,
  type RuleWithOperations,
  type Webhook,
} from './webhook-types.ts';

const OPERATIONS = ['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const URL_FORM = '; desired format: https://host[/path]';

export function validateWebhookConfiguration(obj: StoredObject, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const webhooks = obj.webhooks;
  if (webhooks === undefined || webhooks === null) return errs;
  if (!Array.isArray(webhooks)) return [invalid('webhooks', webhooks, 'must be a list')];
  const seen = new Set<string>();
  webhooks.forEach((hook: Webhook, i) => {
    const path = `webhooks[${i}]`;
    if (hook === null || typeof hook !== 'object') {
      errs.push(invalid(path, hook, 'must be an object'));
      return;
    }
    appendErrors(errs, validateName(hook.name, `${path}.name`));
    if (hook.name) {
      if (seen.has(hook.name))
        errs.push({ type: 'FieldValueDuplicate', field: `${path}.name`, value: hook.name });
      seen.add(hook.name);
    }
    (hook.rules ?? []).forEach((rule, j) => appendErrors(errs, validateRule(rule, `${path}.rules[${j}]`)));
    if (hook.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(hook.failurePolicy))
      errs.push(notSupported(`${path}.failurePolicy`, hook.failurePolicy, ['Fail', 'Ignore']));
    if (hook.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(hook.matchPolicy))
      errs.push(notSupported(`${path}.matchPolicy`, hook.matchPolicy, ['Equivalent', 'Exact']));
    if (hook.sideEffects === undefined || hook.sideEffects === '')
      errs.push(required(`${path}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
    else if (!['None', 'NoneOnDryRun'].includes(hook.sideEffects))
      errs.push(notSupported(`${path}.sideEffects`, hook.sideEffects, ['None', 'NoneOnDryRun']));
    const timeout = hook.timeoutSeconds;
    if (timeout !== undefined && (timeout < 1 || timeout > 30))
      errs.push(
        invalid(`${path}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'),
      );
    if (
      mutating &&
      hook.reinvocationPolicy !== undefined &&
      !['Never', 'IfNeeded'].includes(hook.reinvocationPolicy)
    )
      errs.push(notSupported(`${path}.reinvocationPolicy`, hook.reinvocationPolicy, ['Never', 'IfNeeded']));
    appendErrors(
      errs,
      validateReviewVersions(hook.admissionReviewVersions, `${path}.admissionReviewVersions`),
    );
    appendErrors(errs, validateSelector(hook.namespaceSelector, `${path}.namespaceSelector`));
    appendErrors(errs, validateSelector(hook.objectSelector, `${path}.objectSelector`));
    appendErrors(errs, validateClientConfig(hook, `${path}.clientConfig`));
    appendErrors(errs, validateMatchConditions(hook.matchConditions, `${path}.matchConditions`));
  });
  return errs;
}

/** At most 64 conditions, each with a unique qualified name and an expression that compiles to a bool. */
function validateMatchConditions(conditions: MatchCondition[] | undefined, field: string): FieldError[] {
  if (!conditions) return [];
  const errs: FieldError[] = [];
  if (conditions.length > 64)
    errs.push({ type: 'FieldValueTooMany', field, detail: `must have at most 64 items` });
  const names = new Set<string>();
  conditions.forEach((c, j) => {
    const at = `${field}[${j}]`;
    if (!c?.name) errs.push(required(`${at}.name`));
    else if (names.has(c.name))
      errs.push({ type: 'FieldValueDuplicate', field: `${at}.name`, value: c.name });
    else {
      names.add(c.name);
      for (const problem of qualifiedNameErrors(c.name)) errs.push(invalid(`${at}.name`, c.name, problem));
    }
    if (!c?.expression) errs.push(required(`${at}.expression`));
    else {
      const program = compileMatchCondition(c.expression);
      if (typeof program === 'string') errs.push(invalid(`${at}.expression`, c.expression, program));
    }
  });
  return errs;
}

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three segments. */
function validateName(name: string | undefined, field: string): FieldError[] {
  if (!name) return [required(field)];
  const errs = dns1123SubdomainErrors(name).map((e) => invalid(field, name, e));
  if (errs.length === 0 && name.split('.').length < 3)
    errs.push(invalid(field, name, 'should be a domain with at least three segments separated by dots'));
  return errs;
}

function validateList(
  values: string[] | undefined,
  field: string,
  what: string,
): { errs: FieldError[]; wildcard: boolean } {
  const errs: FieldError[] = [];
  if (!values || values.length === 0) return { errs: [required(field)], wildcard: false };
  const wildcard = values.includes('*');
  if (wildcard && values.length > 1)
    errs.push(invalid(field, values, `if '*' is present, must not specify other ${what}`));
  return { errs, wildcard };
}

function validateRule(rule: RuleWithOperations, path: string): FieldError[] {
  if (rule === null || typeof rule !== 'object') return [invalid(path, rule, 'must be an object')];
  const errs: FieldError[] = [];
  appendErrors(errs, validateList(rule.operations, `${path}.operations`, 'operations').errs);
  (rule.operations ?? []).forEach((op, k) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupported(`${path}.operations[${k}]`, op, OPERATIONS));
  });
  appendErrors(errs, validateList(rule.apiGroups, `${path}.apiGroups`, 'API groups').errs);
  appendErrors(errs, validateList(rule.apiVersions, `${path}.apiVersions`, 'API versions').errs);
  (rule.apiVersions ?? []).forEach((v, k) => {
    if (v === '') errs.push(required(`${path}.apiVersions[${k}]`));
  });
  appendErrors(errs, validateResources(rule.resources, `${path}.resources`));
  if (rule.scope !== undefined && !SCOPES.includes(rule.scope))
    errs.push(notSupported(`${path}.scope`, rule.scope, SCOPES));
  return errs;
}

// validateResources: "*" and "*/*" stand alone; "x/*" and "*/y" may not overlap with "x/y".
function validateResources(resources: string[] | undefined, field: string): FieldError[] {
  if (!resources || resources.length === 0) return [required(field)];
  const errs: FieldError[] = [];
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  resources.forEach((entry, k) => {
    if (entry === '') {
      errs.push(required(`${field}[${k}]`));
      return;
    }
    if (entry === '*/*') doubleWildcard = true;
    if (entry === '*') singleWildcard = true;
    const parts = entry.split('/');
    if (parts.length > 2) {
      errs.push(
        invalid(
          `${field}[${k}]`,
          entry,
          'resource and subresource names may not contain more than one slash',
        ),
      );
      return;
    }
    const [res, sub] = parts;
    if (sub !== undefined && res !== '*' && sub === '*') withWildcardSub.add(res);
    if (sub !== undefined && res === '*' && sub !== '*') subWithWildcardRes.add(sub);
  });
  if (doubleWildcard && resources.length > 1)
    errs.push(invalid(field, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && resources.some((r) => r !== '*' && !r.includes('/')))
    errs.push(
      invalid(field, resources, "if '*' is present, must not specify other resources without subresources"),
    );
  resources.forEach((entry, k) => {
    const [res, sub] = entry.split('/');
    if (sub === undefined || res === '*' || sub === '*') return;
    if (withWildcardSub.has(res))
      errs.push(invalid(`${field}[${k}]`, entry, `if '${res}/*' is present, must not specify ${entry}`));
    if (subWithWildcardRes.has(sub))
      errs.push(invalid(`${field}[${k}]`, entry, `if '*/${sub}' is present, must not specify ${entry}`));
  });
  return errs;
}

function validateReviewVersions(versions: string[] | undefined, field: string): FieldError[] {
  const supported = ADMISSION_REVIEW_VERSIONS.join(', ');
  if (!versions || versions.length === 0) return [required(field, `must specify one of ${supported}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((v, k) => {
    if (seen.has(v)) errs.push(invalid(`${field}[${k}]`, v, 'duplicate version'));
    seen.add(v);
  });
  if (!versions.some((v) => ADMISSION_REVIEW_VERSIONS.includes(v)))
    errs.push(invalid(field, versions, `must include at least one of ${supported}`));
  return errs;
}

function validateSelector(selector: unknown, field: string): FieldError[] {
  if (selector === undefined || selector === null) return [];
  try {
    labelSelectorFromMeta(selector as Parameters<typeof labelSelectorFromMeta>[0]);
    return [];
  } catch (err) {
    if (err instanceof StatusError)
      return [invalid(field, selector, err.status.message ?? 'invalid selector')];
    throw err;
  }
}

function validateClientConfig(hook: Webhook, field: string): FieldError[] {
  const cc = hook.clientConfig;
  const hasUrl = cc?.url !== undefined && cc.url !== null;
  const hasService = cc?.service !== undefined && cc.service !== null;
  if (hasUrl === hasService) return [required(field, 'exactly one of url or service is required')];
  const errs: FieldError[] = [];
  if (hasUrl) appendErrors(errs, validateUrl(cc!.url!, `${field}.url`));
  else appendErrors(errs, validateService(cc!.service!, `${field}.service`));
  if (cc!.caBundle) appendErrors(errs, validateCaBundle(cc!.caBundle, `${field}.caBundle`));
  return errs;
}

/** ValidateWebhookURL with https forced: a host, and no user, query or fragment. */
function validateUrl(text: string, field: string): FieldError[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [
      required(field, `url must be a valid URL: parse ${JSON.stringify(text)}: invalid URL${URL_FORM}`),
    ];
  }
  const errs: FieldError[] = [];
  if (url.protocol !== 'https:')
    errs.push(invalid(field, url.protocol.slice(0, -1), `'https' is the only allowed URL scheme${URL_FORM}`));
  if (url.host === '') errs.push(invalid(field, url.host, `host must be specified${URL_FORM}`));
  if (url.username || url.password) {
    const user = url.password ? `${url.username}:xxxxx` : url.username;
    errs.push(invalid(field, user, 'user information is not permitted in the URL'));
  }
  if (url.hash || text.includes('#'))
    errs.push(invalid(field, url.hash.slice(1), 'fragments are not permitted in the URL'));
  if (url.search || text.includes('?'))
    errs.push(invalid(field, url.search.slice(1), 'query parameters are not permitted in the URL'));
  return errs;
}

function validateService(
  service: NonNullable<Webhook['clientConfig']>['service'] & object,
  field: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (!service.namespace) errs.push(required(`${field}.namespace`, 'service namespace is required'));
  if (!service.name) errs.push(required(`${field}.name`, 'service name is required'));
  const port = service.port;
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    errs.push(invalid(`${field}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  const path = service.path;
  if (path === undefined || path === '' || path === '/') return errs;
  if (path === '//') return [...errs, invalid(`${field}.path`, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) return [...errs, invalid(`${field}.path`, path, "must start with a '/'")];
  const steps = path.slice(1).replace(/\/$/, '').split('/');
  steps.forEach((step, i) => {
    if (step === '') errs.push(invalid(`${field}.path`, path, `segment[${i}] may not be empty`));
    else {
      const problems = dns1123SubdomainErrors(step);
      if (problems.length > 0)
        errs.push(invalid(`${field}.path`, path, `segment[${i}]: [${problems.join(' ')}]`));
    }
  });
  return errs;
}

/** The certificates of a caBundle: base64 of PEM (JSON's []byte); throws when there are none or one is bad. */
export function caBundleCertificates(caBundle: string): string[] {
  const pem = Buffer.from(caBundle, 'base64').toString('utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('no PEM-encoded CERTIFICATE block found');
  for (const block of blocks) new X509Certificate(block);
  return blocks;
}

function validateCaBundle(caBundle: string, field: string): FieldError[] {
  try {
    caBundleCertificates(caBundle);
    return [];
  } catch (err) {
    return [invalid(field, '<bytes>', `must hold PEM-encoded certificates: ${(err as Error).message}`)];
  }
}
