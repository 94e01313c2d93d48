import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_API_ENDPOINT, describeGceConfig, globalValues, parseGceCloudConfig } from './config.ts';

// A gce.conf as kube-up writes it (cluster/gce/gci/configure-helper.sh), plus keys this plug-in ignores.
const KUBE_UP = `[global]
token-url = nil
project-id = my-project-123
network-project-id = host-project-9
network-name = k8s-net
subnetwork-name = k8s-subnet
node-instance-prefix = kubernetes-minion
node-tags = kubernetes-minion
node-tags = second-tag
multizone = true
alpha-features = ILBSubsets ; a comment
stack-type = IPV4_IPV6
`;

const fails = (text: string, message: RegExp): void =>
  assert.throws(() => parseGceCloudConfig(text), { name: 'GceConfigError', message });

describe('gce.conf', () => {
  test("kube-up's file: network in the host project, ADC for token-url nil, unknown keys ignored", () => {
    const c = parseGceCloudConfig(KUBE_UP);
    assert.deepEqual(c, {
      projectID: 'my-project-123',
      networkProjectID: 'host-project-9',
      networkName: 'k8s-net',
      networkURL: `${DEFAULT_API_ENDPOINT}projects/host-project-9/global/networks/k8s-net`,
      apiEndpoint: DEFAULT_API_ENDPOINT,
      localZone: undefined,
      multizone: true,
      region: undefined,
      tokenURL: undefined,
      tokenBody: undefined,
    });
    assert.equal(
      describeGceConfig(c),
      'gce: network k8s-net in project host-project-9, instances in my-project-123, application default credentials, API https://www.googleapis.com/compute/v1/',
    );
  });

  test('gcfg syntax: case-insensitive names, quotes and escapes, comments, bare booleans, repeated keys, other sections', () => {
    const v = globalValues(
      '# top\n[Global]\nProject-ID = "my-project" ; note\ntoken-body = "{\\"a\\": \\"b;c\\"}"\nregional\nnode-tags = a\nnode-tags = b\n[other "x"]\nproject-id = ignored\n',
    );
    assert.deepEqual(v.get('project-id'), ['my-project']);
    assert.deepEqual(v.get('token-body'), ['{"a": "b;c"}']);
    assert.deepEqual(v.get('regional'), ['true']);
    assert.deepEqual(v.get('node-tags'), ['a', 'b']);
  });

  test('defaults and overrides: network project = project, a network URL, api-endpoint, local-zone, token-url', () => {
    const c = parseGceCloudConfig(
      '[global]\nproject-id = 123456789012\nnetwork-name = https://www.googleapis.com/compute/v1/projects/shared-vpc-1/global/networks/shared\nlocal-zone = us-central1-f\napi-endpoint = http://127.0.0.1:8080/compute/v1\ntoken-url = https://example.com/token\ntoken-body = {}\n',
    );
    assert.equal(c.networkProjectID, 'shared-vpc-1');
    assert.equal(c.networkName, 'shared');
    assert.equal(c.apiEndpoint, 'http://127.0.0.1:8080/compute/v1/');
    assert.equal(
      c.networkURL,
      'http://127.0.0.1:8080/compute/v1/projects/shared-vpc-1/global/networks/shared',
    );
    assert.equal(c.localZone, 'us-central1-f');
    assert.equal(c.tokenURL, 'https://example.com/token');
    assert.equal(c.tokenBody, '{}');
    assert.equal(
      parseGceCloudConfig('[global]\nproject-id = p-roject\nnetwork-name = n\n').networkProjectID,
      'p-roject',
    );
  });

  test('one clear error per bad or missing key', () => {
    fails('', /the file is empty/);
    fails('[global]\nnetwork-name = n\n', /"project-id" is required in \[global\]/);
    fails('[global]\nproject-id = my-project\n', /"network-name" is required in \[global\]/);
    fails('[global]\nproject-id = My_Project\nnetwork-name = n\n', /"project-id" is not valid: "My_Project"/);
    fails(
      '[global]\nproject-id = my-project\nnetwork-name = Net_1\n',
      /"network-name" is not valid: "Net_1"/,
    );
    fails(
      '[global]\nproject-id = my-project\nnetwork-name = a/b\n',
      /"network-name" is not valid: "a\/b" \(expected a name or a URL/,
    );
    fails(
      '[global]\nproject-id = my-project\nproject-id = other-project\nnetwork-name = n\n',
      /"project-id" is set 2 times/,
    );
    fails(
      '[global]\nproject-id = my-project\nnetwork-name = n\nlocal-zone = mars\n',
      /"local-zone" is not valid: "mars"/,
    );
    fails(
      '[global]\nproject-id = my-project\nnetwork-name = n\napi-endpoint = http://10.0.0.1/compute/v1/\n',
      /"api-endpoint" must be an https URL/,
    );
    fails(
      '[global]\nproject-id = my-project\nnetwork-name = n\ntoken-url = not a url\n',
      /"token-url" is not a URL/,
    );
    fails(
      'project-id = my-project\n',
      /not valid gcfg \(gce.conf syntax\): line 1: variable outside a section/,
    );
    fails('[global]\nproject-id = "my-project\n', /not valid gcfg \(gce.conf syntax\): line 2: /);
    fails('[global]\n= x\n', /not valid gcfg \(gce.conf syntax\): line 2: invalid variable name/);
  });

  test("multizone and regional: every zone of local-zone's region; gcfg booleans; a bad one is an error naming it", () => {
    const base = '[global]\nproject-id = my-project\nnetwork-name = k8s\n';
    const zoned = parseGceCloudConfig(`${base}local-zone = europe-west1-b\n`);
    assert.deepEqual([zoned.multizone, zoned.region], [false, 'europe-west1']);
    assert.match(describeGceConfig(zoned), /nodes by name in europe-west1-b,/);
    for (const line of [
      'multizone = true',
      'Multizone = YES',
      'regional',
      'regional = 1',
      'multizone = off\nregional = on',
    ]) {
      const c = parseGceCloudConfig(`${base}local-zone = us-central1-f\n${line}\n`);
      assert.deepEqual([c.multizone, c.region], [true, 'us-central1'], line);
      assert.match(describeGceConfig(c), /nodes by name in region us-central1,/);
    }
    assert.equal(parseGceCloudConfig(`${base}multizone = false\n`).multizone, false);
    fails(`${base}multizone = maybe\n`, /"multizone" must be true or false, got "maybe"/);
  });
});
