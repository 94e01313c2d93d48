// The files the docs check reads, with an overlay: the check's test injects a
// drift by overriding one file's text (or deleting it) without touching the
// checkout.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Where the docs live: README.md, SECURITY.md and every Markdown file under docs/. */
export const DOC_GLOBS = ['README.md', 'SECURITY.md', 'docs'] as const;

export class DocTree {
  readonly root: string;
  private readonly overlay: ReadonlyMap<string, string | null>;

  /** `overlay`: path (relative to root) → its text instead of the file's, or null: the file is absent. */
  constructor(root: string, overlay: ReadonlyMap<string, string | null> = new Map()) {
    this.root = root;
    this.overlay = overlay;
  }

  exists(rel: string): boolean {
    const o = this.overlay.get(rel);
    if (o !== undefined) return o !== null;
    return fs.existsSync(path.join(this.root, rel));
  }

  read(rel: string): string {
    const o = this.overlay.get(rel);
    if (o === null) throw new Error(`${rel}: no such file`);
    return o ?? fs.readFileSync(path.join(this.root, rel), 'utf8');
  }

  /** The Markdown files of the docs, relative to root, sorted. */
  markdown(): string[] {
    const out: string[] = [];
    const walk = (rel: string): void => {
      const abs = path.join(this.root, rel);
      if (!fs.existsSync(abs)) return;
      if (fs.statSync(abs).isDirectory()) {
        for (const e of fs.readdirSync(abs)) walk(path.posix.join(rel, e));
      } else if (rel.endsWith('.md')) out.push(rel);
    };
    for (const g of DOC_GLOBS) walk(g);
    for (const [rel, text] of this.overlay)
      if (text !== null && rel.endsWith('.md') && !out.includes(rel)) out.push(rel);
    return out.filter((f) => this.exists(f)).sort();
  }

  /** Source files under these folders (for rule citations), relative to root. */
  sources(folders: readonly string[], exts: readonly string[]): string[] {
    const out: string[] = [];
    const walk = (rel: string): void => {
      const abs = path.join(this.root, rel);
      if (!fs.existsSync(abs)) return;
      if (fs.statSync(abs).isDirectory()) {
        for (const e of fs.readdirSync(abs))
          if (e !== 'node_modules' && e !== 'out') walk(path.posix.join(rel, e));
      } else if (exts.some((x) => rel.endsWith(x))) out.push(rel);
    };
    for (const f of folders) walk(f);
    return out.sort();
  }
}
