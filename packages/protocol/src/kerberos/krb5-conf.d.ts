import type { KdcAddress } from './kdc-transport.js';
/** A section or subsection: each tag's values in file order (strings, or nested subsections). */
export type ProfileNode = Map<string, Array<string | ProfileNode>>;
/** Parses one file's text into sections. */
export declare function parseProfile(text: string, into?: Map<string, ProfileNode>): Map<string, ProfileNode>;
/** What this client takes from krb5.conf. */
export interface Krb5Config {
    readonly defaultRealm: string | undefined;
    /** MIT default true; 'fallback' tries the name as given first. */
    readonly dnsCanonicalizeHostname: boolean | 'fallback';
    /** Reverse lookup while canonicalising (MIT default true). */
    readonly rdns: boolean;
    readonly udpPreferenceLimit: number | undefined;
    /** Seconds (MIT default 300). */
    readonly clockskew: number;
    readonly realms: ReadonlyMap<string, {
        readonly kdcs: readonly KdcAddress[];
    }>;
}
/** `host`, `host:port`, `[v6]:port`; a `tcp/` or `udp/` prefix is dropped; https:// (MS-KKDCP) entries are skipped. */
export declare function parseKdcEntry(entry: string): KdcAddress | undefined;
/** The client settings from a parsed profile. */
export declare function krb5Config(profile: Map<string, ProfileNode>): Krb5Config;
/** Reads KRB5_CONFIG's files (colon-separated; default /etc/krb5.conf), following include / includedir. Missing files are skipped. */
export declare function loadKrb5Conf(files?: string): Promise<Krb5Config>;
//# sourceMappingURL=krb5-conf.d.ts.map