/**
 * The image itself (the Dockerfile, built by scripts/image.sh): at most 160 MB, no shell and no
 * package manager, its user uid 1000, and it runs with a read-only root file system, as uid 1000,
 * with every capability dropped and no network, as the chart's securityContext runs it.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exec, podmanEnv } from './pod.ts';
import { IMAGE, imageSkip } from './skip.ts';

const podman = (args: string[]): Promise<string> => exec('podman', args, podmanEnv());

describe('the image (R136)', { skip: imageSkip() }, () => {
  let root = '';

  before(async () => {
    root = (await podman(['image', 'mount', IMAGE])).trim();
  });
  after(async () => {
    if (root !== '') await podman(['image', 'unmount', IMAGE]);
  });

  test('is at most 160 MB (podman images)', async () => {
    const bytes = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', IMAGE])).trim());
    assert.ok(bytes > 50e6, `${bytes} bytes: not an image of Node`);
    assert.ok(bytes <= 160e6, `${(bytes / 1e6).toFixed(1)} MB`);
  });

  test('has no shell, no package manager, no npm; has Node, the CA bundle and tzdata', () => {
    for (const p of ['bin/sh', 'bin/bash', 'bin/dash', 'usr/bin/apt', 'usr/bin/apt-get', 'usr/bin/dpkg'])
      assert.ok(!fs.existsSync(path.join(root, p)), `/${p} is in the image`);
    for (const p of ['usr/local/bin/npm', 'usr/local/lib/node_modules'])
      assert.ok(!fs.existsSync(path.join(root, p)), `/${p} is in the image`);
    for (const p of [
      'usr/local/bin/node',
      'etc/ssl/certs/ca-certificates.crt',
      'usr/share/zoneinfo/Europe/Berlin',
      'app/dist/cli/main.js',
    ])
      assert.ok(fs.existsSync(path.join(root, p)), `/${p} is missing`);
    // The base's packages, as distroless records them for scanners.
    const packages = fs.readdirSync(path.join(root, 'var/lib/dpkg/status.d'));
    assert.ok(packages.includes('libc6') && packages.includes('libstdc++6'), packages.join(' '));
  });

  test('its user is uid 1000; its entrypoint is Node with the shim, by absolute paths', async () => {
    const user = (await podman(['image', 'inspect', '--format', '{{.Config.User}}', IMAGE])).trim();
    assert.equal(user, '1000:1000');
    const entry = JSON.parse(
      (await podman(['image', 'inspect', '--format', '{{json .Config.Entrypoint}}', IMAGE])).trim(),
    ) as string[];
    assert.deepEqual(entry, ['/usr/local/bin/node', '/app/bin/cloud-route-controller.js']);
  });

  test('runs read-only as uid 1000 with every capability dropped; the bundle loads every plug-in', async () => {
    const base = ['run', '--rm', '--network=none', '--read-only', '--cap-drop=ALL', '--user=1000:1000'];
    assert.match(await podman([...base, IMAGE, '--version']), /^cloud-route-controller v\d/);
    const ids = await podman([...base, '--entrypoint=/usr/local/bin/node', IMAGE, '-p', 'process.getuid()']);
    assert.equal(ids.trim(), '1000');
    // Each plug-in's chunk and the dependencies it imports at load (its cloud config error, not a
    // missing module).
    for (const [cloud, message] of [
      ['aws', /aws cloud config/],
      ['azure', /azure cloud config/],
      ['gce', /gce cloud config/],
      ['openstack', /openstack cloud config/],
      ['hcloud', /hcloud cloud config/],
    ] as const) {
      const out = await podman([
        ...base,
        IMAGE,
        'plan',
        `--cloud-provider=${cloud}`,
        '--cluster-cidr=10.244.0.0/16',
      ]).then(
        () => 'exit 0',
        (err: Error) => err.message,
      );
      assert.match(out, message, `${cloud}: ${out.slice(-400)}`);
      assert.doesNotMatch(out, /ERR_MODULE_NOT_FOUND|Cannot find (module|package)/, cloud);
    }
  });
});
