// R122: project-id, network-name and local-zone from the metadata server when gce.conf lacks them.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { parseGceCloudConfig } from './config.ts';
import { gceMetadataFor } from './metadata.ts';

describe('gce.conf gaps filled from the metadata server', () => {
  let server: http.Server;
  let host: string;
  const asked: string[] = [];
  before(async () => {
    // A stand-in for metadata.google.internal: answers only with Metadata-Flavor: Google.
    server = http.createServer((req, res) => {
      asked.push(req.url ?? '');
      if (req.headers['metadata-flavor'] !== 'Google') return void res.writeHead(403).end();
      const answers: Record<string, string> = {
        '/computeMetadata/v1/project/project-id': 'meta-project',
        '/computeMetadata/v1/instance/network-interfaces/0/network': 'projects/123456/networks/meta-net',
        '/computeMetadata/v1/instance/zone': 'projects/123456/zones/europe-west1-b',
      };
      const body = answers[req.url ?? ''];
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/text' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('an empty gce.conf takes all three from the metadata server, as upstream', async () => {
    const metadata = await gceMetadataFor('', { GCE_METADATA_HOST: host });
    assert.deepEqual(metadata, {
      projectID: 'meta-project',
      networkName: 'meta-net',
      zone: 'europe-west1-b',
    });
    const c = parseGceCloudConfig('', metadata);
    assert.equal(c.projectID, 'meta-project');
    assert.equal(c.networkProjectID, 'meta-project');
    assert.equal(c.networkName, 'meta-net');
    assert.equal(c.localZone, 'europe-west1-b');
  });

  test('keys in the file win and are not asked for', async () => {
    asked.length = 0;
    const text = '[global]\nproject-id = file-project\nnetwork-name = file-net\n';
    const metadata = await gceMetadataFor(text, { GCE_METADATA_HOST: host });
    assert.deepEqual(metadata, { zone: 'europe-west1-b' });
    assert.deepEqual(asked, ['/computeMetadata/v1/instance/zone']);
    const c = parseGceCloudConfig(text, metadata);
    assert.equal(c.projectID, 'file-project');
    assert.equal(c.networkName, 'file-net');
  });

  test('no metadata server: the keys stay missing and the parse names them', async () => {
    const metadata = await gceMetadataFor('[global]\nnetwork-name = n\n', {
      GCE_METADATA_HOST: '127.0.0.1:9',
    });
    assert.deepEqual(metadata, {});
    assert.throws(
      () => parseGceCloudConfig('[global]\nnetwork-name = n\n', metadata),
      /"project-id" is required/,
    );
  });
});
