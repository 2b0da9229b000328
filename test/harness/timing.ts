/**
 * Test durations: base values times `ZK_TEST_TIMING` (default 1), so a slow machine can stretch
 * every wait at once instead of editing tests.
 */
const factor = Number(process.env.ZK_TEST_TIMING ?? '1') || 1;

/** `ms` scaled by the timing multiplier. */
export function timing(ms: number): number {
  return Math.round(ms * factor);
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = timing(30_000), intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Whatever `p` settles with: its value, or the error it rejects with (for tables of expected failures). */
export function outcome(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => v,
    (e: unknown) => e,
  );
}
