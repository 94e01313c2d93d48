// A service-account key file (GOOGLE_APPLICATION_CREDENTIALS with
// `"type": "service_account"`) exchanged for access tokens at the key's own
// `token_uri`, as cloud-provider-gcp does through golang.org/x/oauth2/google
// (JWTConfigFromJSON: a JWT signed RS256 with the key, `aud` = token_uri,
// POSTed as a jwt-bearer grant). google-auth-library signs the same assertion
// but always posts it to oauth2.googleapis.com, whatever token_uri says, which
// breaks keys issued for a private or sovereign endpoint; so key files are
// handled here and every other kind of credential by google-auth-library.
import { createPrivateKey, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AbortError } from '../../core/errors.ts';
import type { FetchLike } from '../../platform/http-fetch.ts';
import type { TokenSource } from './client.ts';
import { GceConfigError } from './config.ts';
import { GceApiError } from './errors.ts';

/** Google's token endpoint, the default when a key names none (as golang.org/x/oauth2/google). */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
/** An assertion's lifetime: Google accepts at most an hour. */
const ASSERTION_SECONDS = 3600;
/** Refresh this long before a token expires. */
const EARLY_MS = 60_000;

export interface ServiceAccountKey {
  readonly clientEmail: string;
  readonly privateKey: KeyObject;
  readonly privateKeyId: string | undefined;
  readonly tokenURI: string;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '[::1]';
}

/**
 * The key in `text` if it is a service-account key, undefined for any other
 * kind of credentials file (left to google-auth-library); a key that cannot
 * be used is an error naming `source`.
 */
export function parseServiceAccountKey(text: string, source: string): ServiceAccountKey | undefined {
  const fail = (why: string): never => {
    throw new GceConfigError(`gce credentials ${source}: ${why}`);
  };
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return fail('not JSON');
  }
  if (json['type'] !== 'service_account') return undefined;
  const email = json['client_email'];
  const pem = json['private_key'];
  if (typeof email !== 'string' || email === '') return fail('no client_email');
  if (typeof pem !== 'string' || pem === '') return fail('no private_key');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    return fail('private_key is not a PEM private key');
  }
  const uri =
    typeof json['token_uri'] === 'string' && json['token_uri'] !== '' ? json['token_uri'] : GOOGLE_TOKEN_URI;
  let url: URL | undefined;
  try {
    url = new URL(uri);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    !(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname)))
  ) {
    return fail(`token_uri must be an https URL (http only on loopback): ${JSON.stringify(uri)}`);
  }
  const kid = json['private_key_id'];
  return {
    clientEmail: email,
    privateKey,
    privateKeyId: typeof kid === 'string' && kid !== '' ? kid : undefined,
    tokenURI: uri,
  };
}

/** The service-account key GOOGLE_APPLICATION_CREDENTIALS names, if it names one (read at start-up). */
export function keyFromEnvironment(env: NodeJS.ProcessEnv = process.env): ServiceAccountKey | undefined {
  const file = env['GOOGLE_APPLICATION_CREDENTIALS'];
  if (file === undefined || file === '') return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new GceConfigError(
      `gce credentials: GOOGLE_APPLICATION_CREDENTIALS=${file} cannot be read: ${(err as Error).message}`,
    );
  }
  return parseServiceAccountKey(text, `GOOGLE_APPLICATION_CREDENTIALS=${file}`);
}

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** The signed jwt-bearer assertion: RS256, iss = the account, aud = token_uri, one hour. */
export function signAssertion(key: ServiceAccountKey, scopes: readonly string[], nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = {
    alg: 'RS256',
    typ: 'JWT',
    ...(key.privateKeyId !== undefined ? { kid: key.privateKeyId } : {}),
  };
  const claims = {
    iss: key.clientEmail,
    scope: scopes.join(' '),
    aud: key.tokenURI,
    iat,
    exp: iat + ASSERTION_SECONDS,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(sign('RSA-SHA256', Buffer.from(input), key.privateKey))}`;
}

/** OAuth2's error answer `{error, error_description}` as one line, without the assertion. */
function oauthError(status: number, text: string): GceApiError {
  let detail = text.slice(0, 200);
  try {
    const e = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    detail = [e.error, e.error_description].filter((x) => typeof x === 'string').join(': ') || detail;
  } catch {
    // not JSON: the start of the text says enough
  }
  // A refused grant (4xx) stays refused until a person acts: permanent; 5xx is retried.
  return new GceApiError(
    `getting an access token: HTTP ${status} ${detail}`,
    status >= 400 && status < 500 ? 400 : status,
    'credentials',
  );
}

/** Access tokens for `key` from its token_uri, cached until a minute before they expire. */
export function serviceAccountKeyTokenSource(
  key: ServiceAccountKey,
  scopes: readonly string[],
  fetchImpl: FetchLike,
  now: () => number = Date.now,
): TokenSource {
  let cached: { token: string; until: number } | undefined;
  return async (signal) => {
    if (cached !== undefined && now() < cached.until) return cached.token;
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: signAssertion(key, scopes, now()),
    }).toString();
    let res;
    try {
      res = await fetchImpl(key.tokenURI, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw new AbortError('The operation was aborted', { cause: signal.reason });
      throw new GceApiError(
        `getting an access token from ${key.tokenURI}: ${(err as Error).message}`,
        0,
        'credentials',
      );
    }
    const text = await res.text();
    if (!res.ok) throw oauthError(res.status, text);
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new GceApiError(`${key.tokenURI}: the token answer is not JSON`, 502, 'credentials');
    }
    if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
      throw new GceApiError(`${key.tokenURI}: no access_token in the answer`, 502, 'credentials');
    }
    const seconds = typeof parsed.expires_in === 'number' ? parsed.expires_in : 300;
    cached = { token: parsed.access_token, until: now() + seconds * 1000 - EARLY_MS };
    return parsed.access_token;
  };
}
