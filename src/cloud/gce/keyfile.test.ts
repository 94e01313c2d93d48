// The service-account key file's token source against an in-memory token
// endpoint: the assertion it signs (checked with the key's public half), where
// it is sent, caching, and errors. test/integration/gce.test.ts runs it against
// the GCE fake's verifying token endpoint.
import assert from 'node:assert/strict';
import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { errorKind } from '../../core/errors.ts';
import type { FetchInit, FetchLike, FetchResponse } from '../../platform/http-fetch.ts';
import { toRouteError } from './errors.ts';
import {
  GOOGLE_TOKEN_URI,
  keyFromEnvironment,
  parseServiceAccountKey,
  serviceAccountKeyTokenSource,
} from './keyfile.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const keyJSON = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'p',
    private_key_id: 'kid-1',
    private_key: PEM,
    client_email: 'routes@p.iam.gserviceaccount.com',
    token_uri: 'http://127.0.0.1:9/token',
    ...extra,
  });

function answer(status: number, body: unknown): FetchResponse {
  const text = JSON.stringify(body);
  return {
    ok: status >= 200 && status < 300,
    status,
    headers: { get: () => null },
    text: async () => text,
  } as unknown as FetchResponse;
}

const decode = (seg: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(seg, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('service-account key file', () => {
  test("signs an RS256 assertion for the key, posts it to the key's token_uri, caches the token", async () => {
    const key = parseServiceAccountKey(keyJSON(), 'test')!;
    const posts: { url: string; init: FetchInit }[] = [];
    const fetchImpl: FetchLike = async (url, init) => {
      posts.push({ url, init });
      return answer(200, { access_token: `tok-${posts.length}`, expires_in: 3599, token_type: 'Bearer' });
    };
    let now = 1_800_000_000_000;
    const source = serviceAccountKeyTokenSource(
      key,
      ['https://www.googleapis.com/auth/compute'],
      fetchImpl,
      () => now,
    );
    const signal = new AbortController().signal;
    assert.equal(await source(signal), 'tok-1');
    assert.equal(await source(signal), 'tok-1', 'cached');
    now += 3_540_000; // within a minute of expiry: a new one
    assert.equal(await source(signal), 'tok-2');
    assert.equal(posts[0]!.url, 'http://127.0.0.1:9/token');
    const form = new URLSearchParams(String(posts[0]!.init.body));
    assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [h, c, sig] = form.get('assertion')!.split('.');
    assert.deepEqual(decode(h!), { alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    assert.deepEqual(decode(c!), {
      iss: 'routes@p.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/compute',
      aud: 'http://127.0.0.1:9/token',
      iat: 1_800_000_000,
      exp: 1_800_003_600,
    });
    assert.ok(verify('RSA-SHA256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(sig!, 'base64url')));
    // Another key's public half does not verify it.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    assert.ok(!verify('RSA-SHA256', Buffer.from(`${h}.${c}`), other, Buffer.from(sig!, 'base64url')));
  });

  test("a refused grant is permanent and names the endpoint's error; a 5xx is retryable; neither carries the assertion", async () => {
    const key = parseServiceAccountKey(keyJSON(), 'test')!;
    let status = 400;
    const fetchImpl: FetchLike = async () =>
      answer(status, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    const source = serviceAccountKeyTokenSource(key, ['s'], fetchImpl);
    const signal = new AbortController().signal;
    const kindOf = async (): Promise<[string, string]> => {
      try {
        await source(signal);
      } catch (err) {
        const e = toRouteError(err, 'create route', signal);
        return [errorKind(e), e.message];
      }
      return ['none', ''];
    };
    const [kind, message] = await kindOf();
    assert.equal(kind, 'permanent');
    assert.match(message, /HTTP 400 invalid_grant: Invalid JWT Signature\./);
    assert.doesNotMatch(message, /eyJ/);
    status = 503;
    assert.equal((await kindOf())[0], 'retryable');
  });

  test('what is a key: other credential types are left to google-auth-library; bad keys are errors naming the file', () => {
    assert.equal(parseServiceAccountKey(JSON.stringify({ type: 'authorized_user' }), 'x'), undefined);
    assert.equal(parseServiceAccountKey(keyJSON({ token_uri: undefined }), 'x')!.tokenURI, GOOGLE_TOKEN_URI);
    const bad = (text: string, message: RegExp): void =>
      assert.throws(() => parseServiceAccountKey(text, 'F'), { name: 'GceConfigError', message });
    bad('{', /gce credentials F: not JSON/);
    bad(keyJSON({ client_email: '' }), /no client_email/);
    bad(keyJSON({ private_key: 'nope' }), /private_key is not a PEM private key/);
    bad(keyJSON({ token_uri: 'http://token.example/token' }), /token_uri must be an https URL/);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gce-key-'));
    try {
      const file = path.join(dir, 'key.json');
      writeFileSync(file, keyJSON());
      assert.equal(
        keyFromEnvironment({ GOOGLE_APPLICATION_CREDENTIALS: file })!.clientEmail,
        'routes@p.iam.gserviceaccount.com',
      );
      assert.equal(keyFromEnvironment({}), undefined);
      assert.throws(() => keyFromEnvironment({ GOOGLE_APPLICATION_CREDENTIALS: path.join(dir, 'missing') }), {
        name: 'GceConfigError',
        message: /GOOGLE_APPLICATION_CREDENTIALS=.*missing cannot be read/,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
