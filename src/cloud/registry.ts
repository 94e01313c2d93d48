// Provider registry (SPEC §2.1): built-in plug-ins register by name; an
// out-of-tree plug-in is an npm package name or a path whose default export is
// a `CloudProviderFactory`.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { CloudProviderFactory } from '../core/types.ts';

const factories = new Map<string, CloudProviderFactory>();

export function registerCloudProvider(name: string, factory: CloudProviderFactory): void {
  if (factories.has(name)) throw new Error(`cloud provider "${name}" is already registered`);
  factories.set(name, factory);
}

export function registeredCloudProviders(): string[] {
  return [...factories.keys()].sort();
}

export class UnknownProviderError extends Error {
  override readonly name = 'UnknownProviderError';
}

function looksLikeModule(name: string): boolean {
  return name.startsWith('.') || name.startsWith('/') || name.startsWith('@') || name.includes('/');
}

/**
 * Resolves a provider name: a registered one first, then an importable module
 * (package name or path) whose default export is a factory.
 */
export async function resolveCloudProvider(name: string): Promise<CloudProviderFactory> {
  const builtin = factories.get(name);
  if (builtin) return builtin;
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
