import { describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, digestACL, InvalidArgumentError, type ACL } from '@zk/protocol';
import { recipeACL } from './acl.js';

describe('recipe acl - the acl option of a recipe', () => {
  it('recipe acl - absent stays undefined (the client decides); given, it is copied and frozen once', () => {
    expect(recipeACL(undefined)).toBeUndefined();
    const mine: ACL[] = digestACL('owner', 'pw');
    const kept = recipeACL(mine) as readonly ACL[];
    mine.push(...CREATOR_ALL_ACL);
    expect(kept).toEqual(digestACL('owner', 'pw'));
    expect(Object.isFrozen(kept) && Object.isFrozen(kept[0]) && Object.isFrozen(kept[0]?.id)).toBe(true);
  });

  it.each([[[]], ['open'], [[{ perms: 0, id: { scheme: 'world', id: 'anyone' } }]], [[{ perms: 31, id: { scheme: 'digest', id: 'owner:pw' } }]]])('recipe acl - refuses %j with InvalidArgumentError naming acl', (acl) => {
    expect(() => recipeACL(acl as never)).toThrow(InvalidArgumentError);
    expect(() => recipeACL(acl as never)).toThrow(/^acl: /);
  });
});
