/**
 * A service instance and its JSON, byte for byte as Curator 5's `JsonInstanceSerializer` writes
 * it (checked against Java's own output, see test/interop/discovery.test.ts).
 *
 * Field order: name, id, address, port, sslPort, payload, registrationTimeUTC, serviceType,
 * uriSpec, then `enabled` only from a serializer made with `compatibleSerializationMode` false.
 * `ServiceDiscoveryBuilder.build()` makes `new JsonInstanceSerializer(payloadClass)`, whose mode
 * is true: it writes the old layout without `enabled` (read back as true), so that is our default.
 * Readers ignore unknown fields (FAIL_ON_UNKNOWN_PROPERTIES is off in both modes).
 *
 * The payload carries Jackson's type information (`@JsonTypeInfo(use = CLASS, defaultImpl =
 * Object.class)` on ServiceInstance.payload): an object gets a leading `"@class"` property, a
 * list or a Long is wrapped as `["java.util.ArrayList", [...]]`; strings, booleans, ints and
 * doubles go as they are. A reader built with `builder(Map.class)` accepts an object with or
 * without `@class`; one built with a POJO class needs `@class` naming that class, or its
 * `Class.cast` fails. So an object payload goes out with `"@class": payloadClass`, by default
 * `java.util.LinkedHashMap` (what Java writes for a Map).
 */
import { randomUUID } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { InvalidArgumentError, validatePath } from '@zk/protocol';
import { DiscoveryError } from '../errors.js';
import { parseUriSpec, type UriSpec } from './uri-spec.js';

/** Curator's `ServiceType`: DYNAMIC is an ephemeral node, DYNAMIC_SEQUENTIAL an ephemeral sequential one, STATIC and PERMANENT persistent ones. */
export type ServiceType = 'DYNAMIC' | 'STATIC' | 'PERMANENT' | 'DYNAMIC_SEQUENTIAL';

const SERVICE_TYPES: ReadonlySet<string> = new Set(['DYNAMIC', 'STATIC', 'PERMANENT', 'DYNAMIC_SEQUENTIAL']);

/** A JSON value, as a payload may hold. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A registered instance of a service, as Curator's `ServiceInstance` has it. */
export interface ServiceInstance<P extends JsonValue = JsonValue> {
  /** The service's name: the node under the base path holding its instances. */
  readonly name: string;
  /** The instance's id: its node's name (plus a sequence suffix for DYNAMIC_SEQUENTIAL). */
  readonly id: string;
  /** Host name or address, or null. */
  readonly address: string | null;
  /** Port, or null. */
  readonly port: number | null;
  /** TLS port, or null. */
  readonly sslPort: number | null;
  /** The payload (without Jackson's type information), or null. */
  readonly payload: P | null;
  /** The Java class Jackson's type information names for the payload (`java.util.LinkedHashMap`, a POJO), if any. */
  readonly payloadClass: string | undefined;
  /** When it was registered, ms since the epoch. */
  readonly registrationTimeUTC: number;
  /** How its node lives. */
  readonly serviceType: ServiceType;
  /** The URI template, or null. */
  readonly uriSpec: UriSpec | null;
  /** False when marked down (ServiceProviders skip it). */
  readonly enabled: boolean;
}

/** What `register` takes: a name, and any field to set instead of its default. */
export interface ServiceInstanceInput<P extends JsonValue = JsonValue> {
  /** The service's name (one path segment). */
  name: string;
  /** Default: a random UUID, as Curator's builder. */
  id?: string;
  /** Default: the first non-internal IPv4 address of this host (Curator: the first non-loopback one), else 127.0.0.1. */
  address?: string | null;
  /** 0-65535, or null (the default). */
  port?: number | null;
  /** 0-65535, or null (the default). */
  sslPort?: number | null;
  /** Any JSON value (default null). Objects and arrays carry `payloadClass` for Java. */
  payload?: P | null;
  /** The Java class for an object or array payload: default `java.util.LinkedHashMap` / `java.util.ArrayList`. */
  payloadClass?: string;
  /** Default: now. */
  registrationTimeUTC?: number;
  /** Default DYNAMIC. */
  serviceType?: ServiceType;
  /** A template such as `{scheme}://{address}:{port}/api`, or parsed parts. */
  uriSpec?: string | UriSpec | null;
  /** Default true. False is kept only with the `writeEnabled` option (Curator's default serializer drops it). */
  enabled?: boolean;
}

/** Checks a service name or instance id: one path segment (Curator joins them with ZKPaths.makePath). */
export function checkSegment(what: 'name' | 'id', value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(what, 'must be a non-empty string');
  if (value.includes('/')) throw new InvalidArgumentError(what, `must be one path segment (no '/'), got ${JSON.stringify(value)}`);
  try {
    validatePath(`/${value}`); // '.', '..', control and reserved characters: what ZooKeeper refuses in a path
  } catch (err) {
    throw new InvalidArgumentError(what, `${JSON.stringify(value)} is not a valid node name: ${(err as Error).message}`);
  }
  return value;
}

function checkPort(what: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) throw new InvalidArgumentError(what, `must be an integer 0-65535 or null, got ${String(value)}`);
  return value;
}

/** The default address: the first non-internal IPv4 address, else the first non-internal one, else 127.0.0.1. */
export function localAddress(): string {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? []).filter((a) => !a.internal);
  return (all.find((a) => a.family === 'IPv4') ?? all[0])?.address ?? '127.0.0.1';
}

/** Checks `value` is JSON (no cycles, functions, bigints, undefined, NaN or Infinity). */
function checkJson(value: unknown, where: string, seen: Set<object>): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidArgumentError('payload', `${where} is not a finite number`);
    return;
  }
  if (typeof value !== 'object') throw new InvalidArgumentError('payload', `${where} is a ${typeof value}, not JSON`);
  if (seen.has(value)) throw new InvalidArgumentError('payload', `${where} is a cycle`);
  seen.add(value);
  if (Array.isArray(value)) value.forEach((v, i) => checkJson(v, `${where}[${i}]`, seen));
  else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw new InvalidArgumentError('payload', `${where} is not a plain object`);
    for (const [k, v] of Object.entries(value)) checkJson(v, `${where}.${k}`, seen);
  }
  seen.delete(value);
}

/** Fills the defaults of `input` and checks every field; throws InvalidArgumentError before anything is sent. */
export function makeInstance<P extends JsonValue>(input: ServiceInstanceInput<P>): ServiceInstance<P> {
  if (typeof input !== 'object' || input === null) throw new InvalidArgumentError('instance', 'must be an object');
  const name = checkSegment('name', input.name);
  const id = input.id === undefined ? randomUUID() : checkSegment('id', input.id);
  const address = input.address === undefined ? localAddress() : input.address;
  if (address !== null && typeof address !== 'string') throw new InvalidArgumentError('address', 'must be a string or null');
  const serviceType = input.serviceType ?? 'DYNAMIC';
  if (!SERVICE_TYPES.has(serviceType)) throw new InvalidArgumentError('serviceType', `must be one of ${[...SERVICE_TYPES].join(', ')}, got ${String(serviceType)}`);
  const registrationTimeUTC = input.registrationTimeUTC ?? Date.now();
  if (!Number.isSafeInteger(registrationTimeUTC)) throw new InvalidArgumentError('registrationTimeUTC', 'must be an integer (ms since the epoch)');
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw new InvalidArgumentError('enabled', 'must be a boolean');
  const payload = input.payload ?? null;
  checkJson(payload, 'payload', new Set());
  let payloadClass: string | undefined;
  if (input.payloadClass !== undefined) {
    if (typeof input.payloadClass !== 'string' || !/^[\p{L}_$][\p{L}\p{N}_$]*(?:[.$][\p{L}_$][\p{L}\p{N}_$]*)*$/u.test(input.payloadClass)) {
      throw new InvalidArgumentError('payloadClass', `must be a Java class name, got ${String(input.payloadClass)}`);
    }
    if (payload === null || typeof payload !== 'object') throw new InvalidArgumentError('payloadClass', 'applies to object and array payloads only (Jackson writes no type for strings, numbers and booleans)');
    payloadClass = input.payloadClass;
  } else if (payload !== null && typeof payload === 'object') {
    payloadClass = Array.isArray(payload) ? 'java.util.ArrayList' : 'java.util.LinkedHashMap';
  }
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload) && Object.hasOwn(payload, '@class')) {
    throw new InvalidArgumentError('payload', "must not have an '@class' key (Jackson's type property): use payloadClass");
  }
  const uriSpec = input.uriSpec === undefined || input.uriSpec === null ? null : typeof input.uriSpec === 'string' ? parseUriSpec(input.uriSpec) : checkParts(input.uriSpec);
  return Object.freeze({
    name,
    id,
    address,
    port: checkPort('port', input.port),
    sslPort: checkPort('sslPort', input.sslPort),
    payload,
    payloadClass,
    registrationTimeUTC,
    serviceType,
    uriSpec,
    enabled: input.enabled ?? true,
  });
}

function checkParts(spec: UriSpec): UriSpec {
  if (typeof spec !== 'object' || spec === null || !Array.isArray(spec.parts)) throw new InvalidArgumentError('uriSpec', 'must be a template string or { parts: [{ value, variable }] }');
  for (const p of spec.parts) {
    if (typeof p?.value !== 'string' || typeof p.variable !== 'boolean') throw new InvalidArgumentError('uriSpec', 'each part must be { value: string, variable: boolean }');
  }
  return Object.freeze({ parts: Object.freeze(spec.parts.map((p) => Object.freeze({ value: p.value, variable: p.variable }))) });
}

/** The payload as Jackson writes it, with its type information. */
function typedPayload(instance: ServiceInstance): unknown {
  const { payload, payloadClass } = instance;
  if (payload === null || typeof payload !== 'object' || payloadClass === undefined) return payload;
  if (Array.isArray(payload)) return [payloadClass, payload];
  return { '@class': payloadClass, ...payload };
}

/**
 * The node data of `instance`: Curator's JSON. `writeEnabled` adds the trailing `enabled` field
 * (a serializer made with `compatibleSerializationMode` false); without it, as Curator's default.
 */
export function encodeInstance(instance: ServiceInstance, writeEnabled = false): Buffer {
  const json: Record<string, unknown> = {
    name: instance.name,
    id: instance.id,
    address: instance.address,
    port: instance.port,
    sslPort: instance.sslPort,
    payload: typedPayload(instance),
    registrationTimeUTC: instance.registrationTimeUTC,
    serviceType: instance.serviceType,
    uriSpec: instance.uriSpec === null ? null : { parts: instance.uriSpec.parts.map((p) => ({ value: p.value, variable: p.variable })) },
  };
  if (writeEnabled) json.enabled = instance.enabled;
  return Buffer.from(JSON.stringify(json), 'utf8');
}

/**
 * Reads a node's data as Curator does (missing fields take the defaults of ServiceInstance's
 * no-argument constructor, unknown ones are ignored). Throws DiscoveryError `not-an-instance`
 * where Jackson throws: not a JSON object, a field of the wrong type, an unknown service type, a
 * payload list or Long without its type.
 */
export function decodeInstance(data: Uint8Array, path: string): ServiceInstance {
  const bad = (why: string, cause?: unknown) => new DiscoveryError(path, 'not-an-instance', `${path} does not hold a service instance: ${why}`, { cause });
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch (err) {
    throw bad('not JSON', err);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw bad('not a JSON object');
  const o = json as Record<string, unknown>;
  const str = (k: string): string | null => {
    const v = o[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw bad(`${k} is not a string`);
    return v;
  };
  const int = (k: string): number | null => {
    const v = o[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(`${k} is not an integer`);
    return v;
  };
  const serviceType = o.serviceType ?? 'DYNAMIC';
  if (typeof serviceType !== 'string' || !SERVICE_TYPES.has(serviceType)) throw bad(`serviceType ${JSON.stringify(serviceType)} is not one of ${[...SERVICE_TYPES].join(', ')}`);
  if (o.enabled !== undefined && o.enabled !== null && typeof o.enabled !== 'boolean') throw bad('enabled is not a boolean');
  const { payload, payloadClass } = untypedPayload(o.payload, bad);
  let uriSpec: UriSpec | null = null;
  if (o.uriSpec !== undefined && o.uriSpec !== null) {
    try {
      uriSpec = checkParts(o.uriSpec as UriSpec);
    } catch (err) {
      throw bad('uriSpec is not { parts: [{ value, variable }] }', err);
    }
  }
  return Object.freeze({
    name: str('name') ?? '',
    id: str('id') ?? '',
    address: str('address'),
    port: int('port'),
    sslPort: int('sslPort'),
    payload,
    payloadClass,
    registrationTimeUTC: int('registrationTimeUTC') ?? 0,
    serviceType: serviceType as ServiceType,
    uriSpec,
    enabled: o.enabled === false ? false : true,
  });
}

function untypedPayload(value: unknown, bad: (why: string) => Error): { payload: JsonValue | null; payloadClass: string | undefined } {
  if (value === undefined || value === null) return { payload: null, payloadClass: undefined };
  if (Array.isArray(value)) {
    // Jackson's WRAPPER_ARRAY form: [className, value].
    if (value.length !== 2 || typeof value[0] !== 'string') throw bad('payload is a list without its Java type ([className, value])');
    return { payload: value[1] as JsonValue, payloadClass: value[0] };
  }
  if (typeof value === 'object') {
    const { '@class': cls, ...rest } = value as Record<string, JsonValue>;
    if (cls !== undefined && typeof cls !== 'string') throw bad('payload @class is not a string');
    return { payload: rest, payloadClass: cls };
  }
  return { payload: value as JsonValue, payloadClass: undefined };
}
