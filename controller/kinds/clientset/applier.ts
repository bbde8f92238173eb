import type { Applier, ApplyContext, Manifest, Problem } from '../../types.ts';
import { CLIENTSET_KIND } from './generator.ts';
import type { ClientSetSpec } from './types.ts';

/**
 * ClientSet: the set itself owns no resource (its generator renders the tenants' objects, which
 * are reconciled like files); applying it records that its manifest is valid.
 */
export const clientSetApplier: Applier<ClientSetSpec> = {
  kind: CLIENTSET_KIND,
  order: -1,
  lint(manifest: Manifest<ClientSetSpec>): Problem[] {
    const seen = new Set<string>();
    const problems: Problem[] = [];
    (manifest.spec.inputs ?? []).forEach((input, i) => {
      if (seen.has(input.id)) problems.push({ path: `spec.inputs[${i}].id`, message: `spec.inputs[${i}].id ${input.id} is used twice` });
      seen.add(input.id);
    });
    return problems;
  },
  apply(ctx: ApplyContext<ClientSetSpec>) {
    ctx.step('render');
    return { clientSet: ctx.manifest.metadata.name };
  },
  prune() {
    // Its tenants follow the set's policy (generator.ts): removing the file counts as removing every input.
  },
};
