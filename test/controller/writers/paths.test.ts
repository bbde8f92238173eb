import { describe, expect, it } from 'vitest';
import { safeManifestPath, slugify } from '../../../controller/writers/paths.ts';

describe('slugify', () => {
  it.each([
    ['Regional sales', 'Regional-sales'],
    ['Q1 ../../etc', 'Q1-etc'],
    ['Sales Q1/..', 'Sales-Q1'],
    ['v1.2 final', 'v1.2-final'],
    ['My Dash -- x', 'My-Dash-x'],
    ['Ünïcode name', 'Unicode-name'],
    ['..', 'item'],
    ['...x...', 'x'],
    ['/etc/passwd', 'etc-passwd'],
    ['', 'item'],
  ])('%j → %j', (input, expected) => {
    expect(slugify(input)).toBe(expected);
  });

  it('never yields more than 100 characters', () => {
    expect(slugify('a'.repeat(500))).toHaveLength(100);
  });
});

describe('safeManifestPath', () => {
  it('resolves a plain relative path inside the root', () => {
    expect(safeManifestPath('/srv/m', 'clients/ACME.yaml')).toBe('/srv/m/clients/ACME.yaml');
  });

  it.each(['../x.yaml', 'clients/../../x.yaml', '/etc/passwd', 'clients/.hidden.yaml', 'a\\b.yaml', 'clients//x.yaml', 'clients/a b.yaml', ''])(
    'refuses %j',
    (rel) => {
      expect(() => safeManifestPath('/srv/m', rel)).toThrow(/is not a safe manifest path/);
    },
  );
});
