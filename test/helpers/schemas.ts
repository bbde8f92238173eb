import { SchemaRegistry } from '../../controller/manifest/validator.ts';

let sharedSchemas: SchemaRegistry | undefined;

/**
 * One compiled (non-strict) schema registry per test worker's module graph: a registry holds no
 * state but its compiled validators, and compiling them costs about a second. A test that needs
 * strict mode or other schemas builds its own.
 */
export function testSchemas(): SchemaRegistry {
  sharedSchemas ??= new SchemaRegistry();
  return sharedSchemas;
}
