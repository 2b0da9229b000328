/**
 * A Kerberos GSS acceptor for the tests, built on @zk/protocol's kerberos codecs: it reads an
 * AP-REQ with the service's keytab keys (as a ZooKeeper server's JGSS would), answers with an
 * AP-REP carrying an acceptor subkey, and wraps / unwraps per-message tokens. It plays the
 * server's side of SASL GSSAPI (RFC 4752 §3.3) too. Test code: no replay cache, no skew check.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { decodeApReq, decodeAuthenticator, decodeEncTicketPart, encodeApRep, encodeEncApRepPart } from '../../../packages/protocol/src/kerberos/ap-messages.js';
import { decrypt, encrypt, enctype } from '../../../packages/protocol/src/kerberos/crypto.js';
import { decode } from '../../../packages/protocol/src/kerberos/der.js';
import { frameContextToken, GSS_CHECKSUM_TYPE, TokId, unframeContextToken, unwrap, wrap, type WrapKeys } from '../../../packages/protocol/src/kerberos/gss-tokens.js';
import { EncryptionKey } from '../../../packages/protocol/src/kerberos/keys.js';
import { KeyUsage } from '../../../packages/protocol/src/kerberos/messages.js';
import type { Principal } from '../../../packages/protocol/src/kerberos/principal.js';

export class TestAcceptor {
  client: Principal | undefined;
  flags = 0;
  #keys: WrapKeys | undefined;
  #sendSeq = BigInt(randomInt(0, 1 << 30));
  #recvSeq = 0n;

  constructor(private readonly serviceKeys: readonly EncryptionKey[], private readonly options: { wrongApRepKey?: boolean } = {}) {}

  /** Reads the initial token; returns the AP-REP token. */
  accept(token: Buffer): Buffer {
    const { tokId, inner } = unframeContextToken(token);
    if (tokId !== TokId.AP_REQ) throw new Error(`acceptor: TOK_ID 0x${tokId.toString(16)}`);
    const apReq = decodeApReq(decode(inner));
    const serviceKey = this.serviceKeys.find((k) => k.enctype === apReq.ticket.encPart.etype);
    if (!serviceKey) throw new Error(`acceptor: no service key of enctype ${apReq.ticket.encPart.etype}`);
    const ticket = decodeEncTicketPart(decrypt(serviceKey, KeyUsage.TICKET, apReq.ticket.encPart.cipher));
    const auth = decodeAuthenticator(decrypt(ticket.key, KeyUsage.AP_REQ_AUTHENTICATOR, apReq.authenticator.cipher));
    if (auth.checksum?.type !== GSS_CHECKSUM_TYPE || auth.checksum.value.length < 24) throw new Error('acceptor: no GSS checksum');
    this.client = auth.client;
    this.flags = auth.checksum.value.readUInt32LE(20);
    this.#recvSeq = BigInt(auth.seqNumber ?? 0);
    const subkey = new EncryptionKey(ticket.key.enctype, randomBytes(enctype(ticket.key.enctype).keySize));
    this.#keys = { key: subkey, acceptorSubkey: true };
    const part = encodeEncApRepPart({ ctime: auth.ctime, cusec: auth.cusec, subkey, seqNumber: Number(this.#sendSeq) });
    const replyKey = this.options.wrongApRepKey ? new EncryptionKey(ticket.key.enctype, randomBytes(enctype(ticket.key.enctype).keySize)) : ticket.key;
    return frameContextToken(TokId.AP_REP, encodeApRep({ etype: replyKey.enctype, kvno: undefined, cipher: encrypt(replyKey, KeyUsage.AP_REP_ENC_PART, part) }));
  }

  wrap(message: Buffer, confidential: boolean): Buffer {
    const token = wrap(this.#k(), true, this.#sendSeq, message, confidential);
    this.#sendSeq++;
    return token;
  }

  unwrap(token: Buffer): { message: Buffer; confidential: boolean } {
    const { message, seq, confidential } = unwrap(this.#k(), false, token);
    if (seq !== this.#recvSeq) throw new Error(`acceptor: sequence ${seq}, expected ${this.#recvSeq}`);
    this.#recvSeq++;
    return { message, confidential };
  }

  #k(): WrapKeys {
    if (!this.#keys) throw new Error('acceptor: no context');
    return this.#keys;
  }
}

/** The server side of SASL GSSAPI over a TestAcceptor: the same token sequence ZooKeeper's server sends. */
export class TestSaslServer {
  authorizationId: string | undefined;
  complete = false;
  #step = 0;
  constructor(readonly acceptor: TestAcceptor) {}

  /** The server's answer to a client token. */
  evaluate(token: Buffer): Buffer {
    switch (this.#step++) {
      case 0:
        return this.acceptor.accept(token);
      case 1:
        if (token.length !== 0) throw new Error('sasl server: expected an empty response after the AP-REP');
        // Offer: no layer, integrity or privacy; maximum buffer 64 KiB.
        return this.acceptor.wrap(Buffer.from([0x07, 0x01, 0x00, 0x00]), false);
      case 2: {
        const { message } = this.acceptor.unwrap(token);
        if (message[0] !== 1) throw new Error(`sasl server: the client chose layer ${message[0]}`);
        this.authorizationId = message.subarray(4).toString('utf8');
        this.complete = true;
        return Buffer.alloc(0);
      }
      default:
        throw new Error('sasl server: token after completion');
    }
  }
}
