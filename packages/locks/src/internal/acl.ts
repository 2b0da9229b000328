/**
 * A recipe's `acl` option: checked and copied once, when the recipe is made, so each create
 * only passes the same frozen list along (the uncontended acquire is a measured fast path).
 */
import { validateACL, type ACL } from '@zk/protocol';

/**
 * The ACL a recipe gives its nodes and container parents: `undefined` (the option not given)
 * leaves the choice to the client's `acl` connect option, else OPEN_ACL_UNSAFE. Bad input throws
 * InvalidArgumentError before anything is sent.
 */
export function recipeACL(acl: readonly ACL[] | undefined): readonly ACL[] | undefined {
  if (acl === undefined) return undefined;
  validateACL(acl, 'acl');
  return Object.freeze(acl.map(({ perms, id }) => Object.freeze({ perms, id: Object.freeze({ scheme: id.scheme, id: id.id }) })));
}
