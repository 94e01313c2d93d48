import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AwsConfigError, configuredRegion, parseAwsCloudConfig } from './config.ts';

function rejects(text: string, pattern: RegExp): void {
  assert.throws(
    () => parseAwsCloudConfig(text),
    (err: unknown) => err instanceof AwsConfigError && pattern.test(err.message),
  );
}

describe('aws cloud config', () => {
  test('empty text means defaults', () => {
    assert.deepEqual(parseAwsCloudConfig(''), { disableSrcDstCheck: true });
    assert.deepEqual(parseAwsCloudConfig('# only a comment\n'), { disableSrcDstCheck: true });
  });

  test('YAML with every field', () => {
    const config = parseAwsCloudConfig(
      [
        'region: eu-central-1',
        'routeTableId: rtb-0123456789abcdef0',
        'vpcId: vpc-0123456789abcdef0',
        'endpoint: https://ec2.eu-central-1.amazonaws.com',
        'disableSrcDstCheck: false',
      ].join('\n'),
    );
    assert.deepEqual(config, {
      region: 'eu-central-1',
      routeTableId: 'rtb-0123456789abcdef0',
      vpcId: 'vpc-0123456789abcdef0',
      endpoint: 'https://ec2.eu-central-1.amazonaws.com',
      disableSrcDstCheck: false,
    });
  });

  test('JSON text', () => {
    assert.deepEqual(
      parseAwsCloudConfig('{"region": "us-gov-west-1", "endpoint": "http://127.0.0.1:5000"}'),
      {
        region: 'us-gov-west-1',
        endpoint: 'http://127.0.0.1:5000',
        disableSrcDstCheck: true,
      },
    );
  });

  test('errors name the field', () => {
    rejects('region: 42', /field "region" must be a non-empty string, got 42/);
    rejects('region: ""', /field "region" must be a non-empty string/);
    rejects('region: Frankfurt', /field "region" is not valid: "Frankfurt" \(expected e\.g\. us-east-1\)/);
    rejects('routeTableId: table-1', /field "routeTableId" is not valid/);
    rejects('vpcId: rtb-0123456789abcdef0', /field "vpcId" is not valid/);
    rejects('endpoint: not a url', /field "endpoint" is not a URL/);
    rejects('endpoint: ftp://example.com', /field "endpoint" must be an http or https URL/);
    rejects('endpoint: https://user:pw@example.com', /field "endpoint" must not contain credentials/);
    rejects('disableSrcDstCheck: "no"', /field "disableSrcDstCheck" must be true or false, got "no"/);
    rejects('disableSrcDestCheck: false', /unknown field "disableSrcDestCheck"; known fields: region, /);
  });

  test('malformed documents', () => {
    rejects('- a\n- b', /expected a mapping of fields .* got a list/);
    rejects('just a string', /expected a mapping .* got string/);
    rejects('{"region": ', /not valid YAML or JSON/);
    rejects('region: a\nregion: b', /not valid YAML or JSON: .*unique/i);
  });

  test('the error does not echo an endpoint password', () => {
    try {
      parseAwsCloudConfig('endpoint: https://user:hunter2@example.com');
      assert.fail('expected an error');
    } catch (err) {
      assert.ok(!(err as Error).message.includes('hunter2'));
    }
  });

  test('region falls back to AWS_REGION, then AWS_DEFAULT_REGION', () => {
    assert.equal(configuredRegion({ region: 'eu-west-1' }, { AWS_REGION: 'us-east-1' }), 'eu-west-1');
    assert.equal(
      configuredRegion({}, { AWS_REGION: 'us-east-2', AWS_DEFAULT_REGION: 'us-west-2' }),
      'us-east-2',
    );
    assert.equal(configuredRegion({}, { AWS_REGION: '', AWS_DEFAULT_REGION: 'us-west-2' }), 'us-west-2');
    assert.equal(configuredRegion({}, {}), undefined);
  });
});
