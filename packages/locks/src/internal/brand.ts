/**
 * Class brands that survive module duplication: with two copies of `@zk/locks` in one process (two
 * installed versions, or the bundled entry next to tsc's modules), `instanceof` against a class of
 * one copy is false for an instance of the other's. A branded class recognises instances by a
 * `Symbol.for` key instead, which every copy shares. (`@zk/protocol` brands its errors the same
 * way, under its own key; this package uses only its public API, so the helper is repeated here.)
 */

/** A class, abstract or not, whatever its constructor takes. */
type Class = abstract new (...args: never[]) => object;

const ordinaryHasInstance = Function.prototype[Symbol.hasInstance];

/**
 * Brands `cls` as `name` under `key`, and makes `value instanceof cls` true for every object
 * branded `name` by any copy: its prototype chain carries, under `key`, the names of the branded
 * classes it descends from (`['LockError', 'LockTimeoutError']`), so `instanceof` on a base class
 * is true for its subclasses too. A subclass declared elsewhere (a user's own) is not branded and
 * keeps the plain prototype-chain test. Names are a contract between versions: once shipped, kept.
 */
export function brandClass(key: symbol, cls: Class, name: string): void {
  const proto = cls.prototype as Record<symbol, unknown>;
  const inherited = proto[key];
  const names: readonly string[] = Object.freeze([...(Array.isArray(inherited) ? (inherited as string[]) : []), name]);
  Object.defineProperty(proto, key, { value: names });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      // Inherited by an unbranded subclass: that class is not shared between copies.
      if (this !== cls) return ordinaryHasInstance.call(this, value);
      if (typeof value !== 'object' || value === null) return false;
      const brand = (value as Record<symbol, unknown>)[key];
      return Array.isArray(brand) && brand.includes(name);
    },
  });
}
