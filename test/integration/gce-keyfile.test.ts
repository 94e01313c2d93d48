// Service-account key-file authentication end to end, against the GCE fake:
// a key generated here (node:crypto RSA) whose token_uri is the fake's token
// endpoint, which verifies the signed assertion with the public half
// registered for the account (RS256, iss, aud, scope, exp) before it issues a
// token; with requireIssuedTokens the fake answers 401 to any Compute call
// whose bearer it did not issue.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce-keyfile.test.ts
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { errorKind } from '../../src/core/errors.ts';
import type { Node } from '../../src/core/types.ts';
import { buildGceProvider } from '../../src/cloud/gce/index.ts';
import { gceFakeSkip, startGceFake } from '../support/gce-fake.ts';
import type { GceFake } from '../support/gce-fake.ts';
import { callOptions, nodeLister, wantRoute } from '../support/provider-calls.ts';

const PROJECT = 'k8s-project';
const ZONE = 'europe-west1-b';
const EMAIL = `k8s-routes@${PROJECT}.iam.gserviceaccount.com`;
const UID1 = '0b3a9c7e-2222-4d7e-9a57-0000000000b1';
const UID2 = '0b3a9c7e-2222-4d7e-9a57-0000000000b2';

const NODES: Node[] = ['node1', 'node2'].map((name) => ({
  metadata: { name, uid: name === 'node1' ? UID1 : UID2 },
  spec: {
    podCIDRs: [name === 'node1' ? '10.244.1.0/24' : '10.244.2.0/24'],
    providerID: `gce://${PROJECT}/${ZONE}/${name}`,
  },
}));
const lister = nodeLister(NODES);

const rsa = (): { privateKey: KeyObject; publicKey: KeyObject } =>
  generateKeyPairSync('rsa', { modulusLength: 2048 });

describe(
  'gce service-account key file against the fake token endpoint',
  { ...gceFakeSkip(), timeout: 120_000 },
  () => {
    let fake: GceFake;
    let dir = '';
    const account = rsa();

    /** A key file as the IAM console downloads it, with the fake's token endpoint as token_uri. */
    const keyFile = (name: string, key: KeyObject, email = EMAIL): string => {
      const file = path.join(dir, name);
      fs.writeFileSync(
        file,
        JSON.stringify({
          type: 'service_account',
          project_id: PROJECT,
          private_key_id: '4f1c2d3e',
          private_key: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
          client_email: email,
          client_id: '1234567890',
          auth_uri: 'https://accounts.google.com/o/oauth2/auth',
          token_uri: `${fake.endpoint}/token`,
        }),
      );
      return file;
    };
    const provider = (file: string) =>
      buildGceProvider(
        `[global]\nproject-id = ${PROJECT}\nnetwork-name = k8s-net\napi-endpoint = ${fake.api}\n`,
        lister,
        { env: { GOOGLE_APPLICATION_CREDENTIALS: file } },
      ).routes()!;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gce-keyfile-'));
      fake = await startGceFake();
    });
    after(async () => {
      await fake?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await fake.reset();
      await fake.addInstances(...['node1', 'node2'].map((name) => ({ project: PROJECT, zone: ZONE, name })));
      await fake.addServiceAccounts({
        email: EMAIL,
        publicKey: account.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      });
      await fake.configure({ requireIssuedTokens: true });
    });

    test('the signed assertion is verified, one token issued, and every Compute call carries it', async () => {
      const routes = provider(keyFile('key.json', account.privateKey));
      await routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions());
      await routes.createRoute('kubernetes', UID2, wantRoute('node2', '10.244.2.0/24'), callOptions());
      const listed = await routes.listRoutes('kubernetes', callOptions());
      assert.deepEqual(listed.map((r) => r.targetNode).sort(), ['node1', 'node2']);
      await routes.deleteRoute(
        'kubernetes',
        listed.find((r) => r.targetNode === 'node2')!,
        callOptions(),
      );
      assert.deepEqual(
        (await fake.routes()).map((r) => r.name),
        [`kubernetes-${UID1}`],
      );

      const log = await fake.requests();
      const grants = log.filter((e) => e.api === 'oauth2.token');
      assert.deepEqual(
        grants.map((e) => `${e.status} ${e.issuer} ${e.refused ?? ''}`),
        [`200 ${EMAIL} `],
        'one verified assertion, then the token is cached',
      );
      const compute = log.filter((e) => e.api !== 'oauth2.token');
      assert.ok(compute.length >= 6, JSON.stringify(compute));
      assert.deepEqual(
        [...new Set(compute.map((e) => `${e.token} ${e.status}`))],
        ['sa-token-1 200'],
        'every Compute call carries the issued token and is accepted',
      );
    });

    test('a key the account does not have, or an unknown account: the grant is refused, permanent, nothing written', async () => {
      for (const [name, file, reason] of [
        ['stolen-looking', keyFile('other.json', rsa().privateKey), /invalid JWT signature/],
        [
          'unknown account',
          keyFile('unknown.json', account.privateKey, `nobody@${PROJECT}.iam.gserviceaccount.com`),
          /no service account/,
        ],
      ] as const) {
        await assert.rejects(
          provider(file).createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions()),
          (err: Error) =>
            errorKind(err) === 'permanent' && /invalid_grant/.test(err.message) && reason.test(err.message),
          name,
        );
      }
      const log = await fake.requests();
      assert.deepEqual(
        log.map((e) => `${e.api} ${e.status}`),
        ['oauth2.token 400', 'oauth2.token 400'],
        'no Compute call without a token',
      );
      assert.match(log[0]!.refused ?? '', /invalid JWT signature/);
      assert.deepEqual(await fake.routes(), []);
    });

    test('the fake checks the bearer: a token it did not issue is a 401 (permanent), nothing written', async () => {
      const routes = buildGceProvider(
        `[global]\nproject-id = ${PROJECT}\nnetwork-name = k8s-net\napi-endpoint = ${fake.api}\n`,
        lister,
        { token: async () => 'made-up-token' },
      ).routes()!;
      await assert.rejects(
        routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions()),
        (err: Error) => errorKind(err) === 'permanent' && /401/.test(err.message),
      );
      assert.deepEqual(
        (await fake.requests()).map((e) => `${e.api} ${e.status}`),
        ['routes.insert 401'],
      );
      assert.deepEqual(await fake.routes(), []);
    });
  },
);
