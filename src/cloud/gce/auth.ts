// Access tokens for the Compute Engine API, as GCP users expect them:
// Application Default Credentials through google-auth-library (a key file in
// GOOGLE_APPLICATION_CREDENTIALS, workload identity federation, gcloud's user
// credentials, or the metadata server of the instance or GKE workload
// identity), or gce.conf's `token-url` as cloud-provider-gcp reads it
// (AltTokenSource: a POST of `token-body`, authenticated with the default
// credentials, answering `{accessToken, expireTime}`). google-auth-library is
// imported on first use, so loading the plug-in costs nothing until a token is
// needed.
import { AbortError } from '../../core/errors.ts';
import { httpFetch } from '../../platform/http-fetch.ts';
import type { FetchLike } from '../../platform/http-fetch.ts';
import type { TokenSource } from './client.ts';
import { apiErrorFromResponse, GceApiError } from './errors.ts';

/** Read-write access to Compute Engine, the narrowest OAuth scope that covers routes. */
export const COMPUTE_SCOPE = 'https://www.googleapis.com/auth/compute';
/** Refresh this long before a token expires. */
const EARLY_MS = 60_000;

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(new AbortError('The operation was aborted', { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortError('The operation was aborted', { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** google-auth-library's failures say what is missing; keep that, typed for the controller. */
function credentialError(err: unknown): Error {
  const e = err as { message?: unknown; status?: unknown; response?: { status?: unknown } };
  const message = typeof e.message === 'string' ? e.message : String(err);
  const status =
    typeof e.status === 'number' ? e.status : typeof e.response?.status === 'number' ? e.response.status : 0;
  // 4xx from the token endpoint (invalid_grant, disabled account) stays so until a person acts.
  return new GceApiError(
    `getting an access token: ${message}`,
    status >= 400 && status < 500 ? 400 : 0,
    'credentials',
  );
}

/** Application Default Credentials, scoped to Compute Engine. */
export function applicationDefaultCredentials(scopes: readonly string[] = [COMPUTE_SCOPE]): TokenSource {
  let client: Promise<{ getAccessToken(): Promise<{ token?: string | null }> }> | undefined;
  return async (signal) => {
    client ??= import('google-auth-library').then(({ GoogleAuth }) =>
      new GoogleAuth({ scopes: [...scopes] }).getClient(),
    );
    try {
      const { token } = await raceAbort(
        client.then((c) => c.getAccessToken()),
        signal,
      );
      if (token === undefined || token === null || token === '') throw new Error('no token in the answer');
      return token;
    } catch (err) {
      if (err instanceof AbortError) throw err;
      client = undefined; // a failed discovery is tried again next time
      throw credentialError(err);
    }
  };
}

/**
 * cloud-provider-gcp's AltTokenSource: POST `body` to `url`, authenticated with
 * `auth`, and read `{accessToken, expireTime}`; cached until shortly before expiry.
 */
export function altTokenSource(
  url: string,
  body: string | undefined,
  auth: TokenSource,
  fetchImpl: FetchLike = httpFetch(),
  now: () => number = Date.now,
): TokenSource {
  let cached: { token: string; until: number } | undefined;
  return async (signal) => {
    if (cached !== undefined && now() < cached.until) return cached.token;
    const bearer = await auth(signal);
    let res;
    try {
      res = await fetchImpl(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: body ?? '',
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw new AbortError('The operation was aborted', { cause: signal.reason });
      throw err;
    }
    const text = await res.text();
    if (!res.ok) {
      const e = apiErrorFromResponse(res.status, text, res.headers.get('retry-after'));
      throw new GceApiError(`token-url ${url}: ${e.message}`, e.status, e.reason, e.retryAfterMs);
    }
    let parsed: { accessToken?: unknown; expireTime?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new GceApiError(`token-url ${url}: the answer is not JSON`, 502, 'credentials');
    }
    if (typeof parsed.accessToken !== 'string' || parsed.accessToken === '') {
      throw new GceApiError(`token-url ${url}: no accessToken in the answer`, 502, 'credentials');
    }
    const expires = typeof parsed.expireTime === 'string' ? Date.parse(parsed.expireTime) : Number.NaN;
    cached = {
      token: parsed.accessToken,
      until: (Number.isNaN(expires) ? now() + 300_000 : expires) - EARLY_MS,
    };
    return parsed.accessToken;
  };
}
