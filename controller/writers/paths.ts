import { isAbsolute, normalize, resolve, sep } from 'node:path';
import { ValidationError } from '../errors.ts';

const SAFE_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;

/** A file-system-safe name from user text: `Sales Q1/..` → `Sales-Q1`. Never empty, never dot-only. */
export function slugify(name: string, fallback = 'item'): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    // Dot runs (`..`) and dots next to a separator carry no meaning in a file name.
    .replace(/\.{2,}/g, '-')
    .replace(/-*\.-+|-+\.-*/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 100);
  return s && !/^\.+$/.test(s) ? s : fallback;
}

/**
 * Resolves a manifest path relative to `root`, refusing anything that could leave it:
 * absolute paths, `..`, empty or hidden segments, characters outside [A-Za-z0-9._-].
 */
export function safeManifestPath(root: string, relPath: string): string {
  const segments = relPath.split('/');
  const bad = isAbsolute(relPath) || relPath.includes('\\') || segments.some((s) => !SAFE_SEGMENT.test(s) || s.startsWith('.'));
  const abs = resolve(root, normalize(relPath));
  if (bad || !abs.startsWith(resolve(root) + sep)) {
    throw new ValidationError([{ path: 'name', message: `${relPath} is not a safe manifest path` }]);
  }
  return abs;
}
