/**
 * `--name value` for the demo and `npm run zk -- check`; their TLS, credentials and `--acl` come
 * from zk-lock's own readers (`securityFromEnv`, `parseAcl` of @zk/locks), so the tools cannot
 * drift apart.
 */
export { parseAcl, securityFromEnv } from '@zk/locks';

/** The value of `--name value` in `args`, if given. */
export function optionValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}
