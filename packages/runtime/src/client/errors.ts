import { isStatus, newStatusError, type Status, StatusError, type StatusReason } from '@certkit/apimachinery';

/**
 * Turns a failed response into a StatusError, as client-go's transformResponse: a Status body is the error
 * itself; anything else (an HTML page from a proxy, plain text, an empty body) becomes a generic error for the
 * HTTP code, worded like apimachinery's NewGenericServerResponse so messages read the same as kubectl's.
 */

export interface ErrorContext {
  /** HTTP method. */
  method: string;
  /** The resource being acted on, when there is one. */
  group?: string;
  resource?: string;
  name?: string;
}

/** client-go keeps this much of a non-Status body in the message. */
const MAX_UNSTRUCTURED_BODY = 2048;

export function errorFromResponse(
  code: number,
  body: string,
  contentType: string | undefined,
  retryAfterSeconds: number | undefined,
  context: ErrorContext,
): StatusError {
  const status = statusFromBody(body);
  if (status) {
    // A Status must carry the code; some proxies send one without it.
    return new StatusError(status.code ? status : { ...status, code });
  }
  const isJson = (contentType ?? '').toLowerCase().includes('json');
  const serverMessage =
    body.length > MAX_UNSTRUCTURED_BODY ? body.slice(0, MAX_UNSTRUCTURED_BODY) : body.trim();
  return genericServerResponse(code, context, serverMessage, retryAfterSeconds, !isJson);
}

function statusFromBody(body: string): Status | undefined {
  if (!body.trimStart().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return isStatus(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** apimachinery's errors.NewGenericServerResponse. */
export function genericServerResponse(
  code: number,
  context: ErrorContext,
  serverMessage: string,
  retryAfterSeconds?: number,
  unexpectedResponse = false,
): StatusError {
  let reason: StatusReason = 'Unknown';
  let message = `the server responded with the status code ${code} but did not return more information`;
  switch (code) {
    case 409:
      reason = context.method === 'POST' ? 'AlreadyExists' : 'Conflict';
      message = 'the server reported a conflict';
      break;
    case 404:
      reason = 'NotFound';
      message = 'the server could not find the requested resource';
      break;
    case 400:
      reason = 'BadRequest';
      message = 'the server rejected our request for an unknown reason';
      break;
    case 401:
      reason = 'Unauthorized';
      message = 'the server has asked for the client to provide credentials';
      break;
    case 403:
      reason = 'Forbidden';
      message = serverMessage;
      break;
    case 405:
      reason = 'MethodNotAllowed';
      message = 'the server does not allow this method on the requested resource';
      break;
    case 406:
      reason = 'NotAcceptable';
      message =
        serverMessage && serverMessage !== 'unknown'
          ? serverMessage
          : 'the server was unable to respond with a content type that the client supports';
      break;
    case 415:
      reason = 'UnsupportedMediaType';
      message = serverMessage;
      break;
    case 422:
      reason = 'Invalid';
      message = 'the server rejected our request due to an error in our request';
      break;
    case 429:
      reason = 'TooManyRequests';
      message = 'the server has received too many requests and has asked us to try again later';
      break;
    case 503:
      reason = 'ServiceUnavailable';
      message = 'the server is currently unable to handle the request';
      break;
    case 504:
      reason = 'Timeout';
      message =
        'the server was unable to return a response in the time allotted, but may still be processing the request';
      break;
    default:
      if (code >= 500) {
        reason = 'InternalError';
        message = `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
      }
  }
  const qualified = context.resource
    ? context.group
      ? `${context.resource}.${context.group}`
      : context.resource
    : undefined;
  const verb = context.method.toLowerCase();
  if (qualified && context.name) message = `${message} (${verb} ${qualified} ${context.name})`;
  else if (qualified) message = `${message} (${verb} ${qualified})`;

  return newStatusError(code, reason, message, {
    group: context.group ?? '',
    kind: context.resource ?? '',
    ...(context.name ? { name: context.name } : {}),
    ...(unexpectedResponse
      ? { causes: [{ reason: 'UnexpectedServerResponse', message: serverMessage }] }
      : {}),
    ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
  });
}
