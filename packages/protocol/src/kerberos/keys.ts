/**
 * EncryptionKey: a Kerberos key (RFC 4120 §5.2.9: keytype and keyvalue) that never shows its
 * bytes. util.inspect, JSON.stringify, String() and template literals all print the enctype only.
 */
import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/** A key of one encryption type. The bytes are reachable only through {@link EncryptionKey.material}. */
export class EncryptionKey {
  readonly #bytes: Buffer;

  constructor(
    /** The enctype number (17, 18, 19, 20). */
    readonly enctype: number,
    bytes: Buffer,
  ) {
    this.#bytes = Buffer.from(bytes);
  }

  /** The key bytes, for the crypto code and the DER encoder only. */
  material(): Buffer {
    return this.#bytes;
  }

  /** Overwrites the bytes (when a key is dropped: a replaced session key, a closed client). */
  wipe(): void {
    this.#bytes.fill(0);
  }

  toJSON(): { enctype: number; key: string } {
    return { enctype: this.enctype, key: REDACTED };
  }

  toString(): string {
    return `EncryptionKey(enctype ${this.enctype}, ${REDACTED})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** The text every secret holder prints in its place. */
export const REDACTED_TEXT = REDACTED;
