// YAML parsing with the `yaml` package required on first use, not on import:
// it costs about 12 MB resident, and a daemon that reads no YAML (in-cluster
// credentials, an empty cloud config) or a library user who never parses a
// config should not pay for it. `yaml` ships CommonJS for Node, so the
// synchronous parsers keep their signatures.
import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';

type Yaml = typeof YamlModule;

let yaml: Yaml | undefined;

function load(): Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml;
  return yaml;
}

/** `yaml.parse`: the document as plain data; throws a YAMLParseError on bad syntax. */
export function parseYaml(text: string): unknown {
  return load().parse(text);
}
