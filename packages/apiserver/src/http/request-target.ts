/**
 * The path and query of a request target, as WHATWG URL parsing (against an http: base) gives them. Clients
 * send plain origin-form targets (`/apis/group/version/...?a=b`), which parse to themselves: those are split
 * as they are, without building a URL on every request. A target a URL parser would rewrite in any way
 * (dot segments, percent escapes in the path, backslashes, characters it percent-encodes, a fragment, a
 * leading `//` read as an authority) is left to the parser.
 */

import { newBadRequest } from '@certkit/apimachinery';

export interface RequestTarget {
  pathname: string;
  /** Read-only: targets without a query share one. */
  searchParams: URLSearchParams;
}

/** The query of every target without one (most writes): building one per request costs more than a parse. */
const NO_QUERY = new URLSearchParams();

/** Characters a URL path keeps as they are; `%` is left out so that escaped dots (`%2e`) reach the parser. */
const PLAIN_PATH = /^\/(?!\/)[-\w.~!$&'()*+,;=:@/]*$/;
/** `.` and `..` segments, which the parser resolves. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;
/** Dot segments, escaped (`%2e`) or not, which the URL parser would resolve. */
const ANY_DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;
/**
 * Characters a query keeps, or that the parser escapes and URLSearchParams unescapes again (`'`); not a
 * leading `?`, which URLSearchParams would drop from the query alone but not from the URL's search.
 */
const PLAIN_QUERY = /^(?!\?)[-\w.~!$&'()*+,;=:@/?%]*$/;

/** A `%` not followed by two hex digits: Go's URL parser refuses the target, so kube-apiserver answers 400. */
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;

export function parseRequestTarget(target: string): RequestTarget {
  // The WHATWG parser and URLSearchParams keep a bad escape as it is; refused here, path and query alike, with
  // the text of Go's url.EscapeError.
  const bad = target.includes('%') ? BAD_ESCAPE.exec(target) : null;
  if (bad)
    throw newBadRequest(`invalid URL escape ${JSON.stringify(target.slice(bad.index, bad.index + 3))}`);
  const mark = target.indexOf('?');
  const path = mark < 0 ? target : target.slice(0, mark);
  const query = mark < 0 ? '' : target.slice(mark + 1);
  if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) && PLAIN_QUERY.test(query)) {
    return { pathname: path, searchParams: query === '' ? NO_QUERY : new URLSearchParams(query) };
  }
  let url: URL;
  try {
    url = new URL(target, 'http://apiserver');
  } catch {
    // A target the parser cannot read at all, such as `//a|b]/x` (a leading `//` is read as an authority, and
    // this one is no host): the client's error, in the words of Go's http server.
    throw newBadRequest(`parse ${JSON.stringify(target)}: invalid URI for request`);
  }
  // Dot segments stay as they are: kube-apiserver (Go's server, go-restful's router) resolves none, so `..`
  // reaches the handlers as a name, which they refuse. Resolved, `DELETE .../namespaces/x/configmaps/..`
  // (the Python client deleting a ConfigMap named "..") deleted the namespace x.
  if (ANY_DOT_SEGMENT.test(path)) return { pathname: path, searchParams: url.searchParams };
  return { pathname: url.pathname, searchParams: url.searchParams };
}
