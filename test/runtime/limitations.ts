/**
 * What does not work on a runtime, and why. The driver requires each listed check to fail on
 * the listed runtimes with an error matching `error` (so the list stays honest: a limitation
 * that starts passing fails the run until it is removed here and from the README), and every
 * other check to pass. The README's "Runtimes" section states the same list.
 */
export interface Limitation {
  /** Runtime names (as in scripts/runtimes.mjs) it applies to. */
  readonly runtimes: readonly string[];
  /** The check's name, without its number. */
  readonly check: string;
  /** What the failure must say. */
  readonly error: RegExp;
  /** Why, for the README and the results file. */
  readonly reason: string;
}

export const LIMITATIONS: readonly Limitation[] = [
  {
    runtimes: ['deno'],
    check: "TLS client certificate: keytool's PKCS12 pfx (alias zk-runtime-client)",
    error: /failed to encode PFX contents: ASN1Error/,
    reason:
      "Deno's node:tls refuses a PKCS12 `pfx` whose friendlyName (keytool's alias) has 10 or more characters " +
      "('failed to encode PFX contents: ASN1Error { kind: Invalid }'; 9 or fewer, or none, work). " +
      'Pass the certificate and key as PEM (`cert`, `key`), or re-export the file without a friendlyName (`openssl pkcs12 -export` without `-name`).',
  },
  {
    runtimes: ['deno'],
    check: "a program allowed only the connect string's host:port (Deno: --allow-net=localhost:PORT)",
    error: /getaddrinfo EPERM localhost|Requires net access to "(127\.0\.0\.1|\[?::1\]?):\d+"/,
    reason:
      'The client resolves a host name itself (every address of a name is a server to try) and dials the addresses; ' +
      "Deno checks the lookup against the name without a port and the connection against the address dialed, so `--allow-net=zk1:2181` is not enough. " +
      'Grant the name and its addresses with the port (`--allow-net=zk1,10.0.0.5:2181`), or `--allow-net`.',
  },
  {
    runtimes: ['deno'],
    check: "a Kerberos program allowed only the server's and the KDC's host:port (Deno: --allow-net=ZK,KDC --allow-read=krb5.conf,keytab)",
    error: /NotCapable: Requires net access to "0\.0\.0\.0:0"/,
    reason:
      "Kerberos asks the KDC over UDP first (a small request, as MIT does), and Deno's node:dgram binds the socket to the wildcard address, which needs its own grant; " +
      "without it Deno throws NotCapable ('Requires net access to \"0.0.0.0:0\"') outside the client's reach, and the program ends. " +
      "Grant `0.0.0.0:0` beside the KDC's host:port, or set `udp_preference_limit = 1` in krb5.conf's [libdefaults] (the KDC asked by TCP first, UDP only when TCP fails), or `--allow-net`.",
  },
  {
    runtimes: ['deno'],
    check: "a Kerberos program allowed the server's and the KDC's host:port and 0.0.0.0:0 (Deno: not the server's address for its reverse lookup)",
    error: /AuthFailedError: .*does not know the service principal zookeeper\/127\.0\.0\.1@/,
    reason:
      "The service principal's host is the name the server's address reverse-resolves to (krb5.conf's rdns, as MIT; Java's canonicalize.hostname), and Deno checks that lookup " +
      "(node:dns lookupService) against the address with port 0: without the grant the lookup fails, the address itself is used, and the KDC knows no zookeeper/<address>. " +
      'Grant the address with port 0 (`--allow-net=10.0.0.5:0`), or name the service host (the `serviceHost` option), or `--allow-net`.',
  },
];

/** The limitation covering `check` on `runtime`, if any. */
export function limitationOf(runtime: string, check: string): Limitation | undefined {
  return LIMITATIONS.find((l) => l.runtimes.includes(runtime) && l.check === check);
}
