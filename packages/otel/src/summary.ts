/**
 * Low-cardinality path summaries for span names and `db.query.summary`: the parts of a ZooKeeper
 * path that grow without bound (sequence suffixes, protected-node UUIDs, numbers, long hex ids)
 * become `*`, so two nodes of the same queue or lock give one name.
 */

/** Ten digits: the sequence suffix ZooKeeper appends to a sequential node's name. */
const SEQUENCE = /\d{10}$/;
/** A UUID anywhere in a name (Curator's protected prefix `_c_<uuid>-` holds one). */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** A name that is only digits, or a long run of hex digits (ids, hashes, session ids). */
const NUMBERISH = /^(?:\d+|(?:0x)?[0-9a-f]{16,})$/i;
/** Longer paths are cut to their first segments (the rest is one `*`). */
const MAX_SEGMENTS = 8;
/** Longer segments are masked whole. */
const MAX_SEGMENT = 64;

/** One path segment with its unbounded parts masked. */
function maskSegment(segment: string): string {
  if (segment.length > MAX_SEGMENT || NUMBERISH.test(segment)) return '*';
  return segment.replace(UUID, '*').replace(SEQUENCE, '*');
}

/**
 * The low-cardinality summary of a path: `/locks/job/_c_2f1c...-lock-0000000007` gives
 * `/locks/job/_c_*-lock-*`, `/jobs/42` gives `/jobs/*`. Paths deeper than eight segments keep
 * their first eight and end in `/*`. An undefined or empty path gives `''`.
 */
export function summarizePath(path: string | undefined): string {
  if (path === undefined || path === '') return '';
  if (path === '/') return '/';
  const known = summaries.get(path);
  if (known !== undefined) return known;
  const segments = path.split('/').slice(1);
  const kept = segments.slice(0, MAX_SEGMENTS).map(maskSegment);
  if (segments.length > MAX_SEGMENTS) kept.push('*');
  const summary = `/${kept.join('/')}`;
  // Most requests go to a few paths again and again: remembered, up to a bound (then forgotten at once).
  if (summaries.size >= MAX_REMEMBERED) summaries.clear();
  summaries.set(path, summary);
  return summary;
}

/** Paths summarized lately (see summarizePath). */
const summaries = new Map<string, string>();
const MAX_REMEMBERED = 4096;

/**
 * Whether `created` (the path a create answered with) is `requested` plus a sequence suffix: the
 * create was sequential, and its summary ends in `*` like the node's. Compares last segments only,
 * so a chroot on either side does not matter.
 */
export function isSequentialCreate(requested: string | undefined, created: unknown): boolean {
  if (requested === undefined || typeof created !== 'string') return false;
  const asked = requested.slice(requested.lastIndexOf('/') + 1);
  const got = created.slice(created.lastIndexOf('/') + 1);
  return got.length === asked.length + 10 && got.startsWith(asked) && SEQUENCE.test(got);
}

/**
 * The `db.query.summary` of a request, which is also its span's name: `{operation} {path summary}`
 * (`getData /app/config`), or the operation alone for a request without a path. `sequential`
 * marks a sequential create: its path summary ends in `*`, like the node it made.
 */
export function requestSummary(operation: string, path: string | undefined, sequential = false): string {
  const summary = summarizePath(path);
  if (summary === '') return operation;
  return sequential && !summary.endsWith('*') ? `${operation} ${summary}*` : `${operation} ${summary}`;
}
