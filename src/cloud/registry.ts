// Provider registry (SPEC §2.1): built-in plug-ins register by name; an
// out-of-tree plug-in is an npm package name or a path whose default export is
// a `CloudProviderFactory`. A name may map to a loader instead of a factory so
// that only the selected plug-in's code (and its cloud SDK) is ever imported.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { CloudProviderFactory } from '../core/types.ts';

/** Imports a plug-in on first use; resolves to its factory. */
export type CloudProviderLoader = () => Promise<CloudProviderFactory>;

type Entry = { readonly factory: CloudProviderFactory } | { readonly load: CloudProviderLoader };

const entries = new Map<string, Entry>();

function add(name: string, entry: Entry): void {
  if (entries.has(name)) throw new Error(`cloud provider "${name}" is already registered`);
  entries.set(name, entry);
}

export function registerCloudProvider(name: string, factory: CloudProviderFactory): void {
  add(name, { factory });
}

/** Registers a plug-in whose module is imported only when `name` is resolved. */
export function registerCloudProviderLoader(name: string, load: CloudProviderLoader): void {
  add(name, { load });
}

export function registeredCloudProviders(): string[] {
  return [...entries.keys()].sort();
}

export class UnknownProviderError extends Error {
  override readonly name = 'UnknownProviderError';
}

function looksLikeModule(name: string): boolean {
  return name.startsWith('.') || name.startsWith('/') || name.startsWith('@') || name.includes('/');
}

async function registered(name: string, entry: Entry): Promise<CloudProviderFactory> {
  if ('factory' in entry) return entry.factory;
  const factory = await entry.load();
  // Later lookups skip the loader; a failed load is retried next time.
  entries.set(name, { factory });
  return factory;
}

/**
 * Resolves a provider name: a registered one first, then an importable module
 * (package name or path) whose default export is a factory.
 */
export async function resolveCloudProvider(name: string): Promise<CloudProviderFactory> {
  const entry = entries.get(name);
  if (entry) return registered(name, entry);
  const unknown = (): UnknownProviderError =>
    new UnknownProviderError(
      `unknown cloud provider "${name}"; registered: ${registeredCloudProviders().join(', ')}`,
    );
  let mod: unknown;
  try {
    const spec = name.startsWith('.') || name.startsWith('/') ? pathToFileURL(path.resolve(name)).href : name;
    mod = await import(spec);
  } catch (err) {
    if (looksLikeModule(name)) {
      const e = unknown();
      e.message += ` (import failed: ${(err as Error).message})`;
      throw e;
    }
    throw unknown();
  }
  const factory = (mod as { default?: unknown }).default;
  if (typeof factory !== 'function') {
    throw new UnknownProviderError(
      `cloud provider module "${name}" has no default export that is a provider factory`,
    );
  }
  return factory as CloudProviderFactory;
}
