/**
 * Curator's `UriSpec`: a URI template such as `{scheme}://{address}:{port}/api`, kept as parts
 * (literal text, or the name of a variable) in the instance's JSON, and built into a URI.
 */
import { InvalidArgumentError } from '@zk/protocol';

/** One part of a template: literal text, or (`variable`) the name of a field between braces. */
export interface UriSpecPart {
  readonly value: string;
  readonly variable: boolean;
}

/** A parsed template, as the instance's JSON holds it (`{"parts": [...]}`). */
export interface UriSpec {
  readonly parts: readonly UriSpecPart[];
}

/**
 * Parses a template the way Curator's `UriSpec(String)` does: text between `{` and `}` is a
 * variable (trimmed), the rest literal; a nested `{`, a `}` without `{` or an unclosed `{` is
 * refused (InvalidArgumentError; Curator throws IllegalStateException). Empty literal runs make
 * no part (Java's StringTokenizer returns no empty token).
 */
export function parseUriSpec(template: string): UriSpec {
  if (typeof template !== 'string') throw new InvalidArgumentError('uriSpec', 'must be a string');
  const parts: UriSpecPart[] = [];
  let inside = false;
  for (const token of template.split(/([{}])/u)) {
    if (token === '') continue;
    if (token === '{') {
      if (inside) throw new InvalidArgumentError('uriSpec', `{ inside a variable in ${JSON.stringify(template)}`);
      inside = true;
    } else if (token === '}') {
      if (!inside) throw new InvalidArgumentError('uriSpec', `} without { in ${JSON.stringify(template)}`);
      inside = false;
    } else {
      parts.push(Object.freeze({ value: inside ? token.trim() : token, variable: inside }));
    }
  }
  if (inside) throw new InvalidArgumentError('uriSpec', `unclosed { in ${JSON.stringify(template)}`);
  return Object.freeze({ parts: Object.freeze(parts) });
}

/** The fields of an instance a template may name. */
export interface UriFields {
  readonly name: string;
  readonly id: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly sslPort: number | null;
  readonly registrationTimeUTC: number;
  readonly serviceType: string;
}

/**
 * Builds the URI as Curator's `UriSpec.build(instance, variables)`: `scheme` is `https` when the
 * instance has an sslPort, else `http`; `name`, `id`, `address`, `port`, `ssl-port`,
 * `registration-time-utc`, `service-type` (lower case) come from the instance (null as ''); `[` and
 * `]` stand for literal braces; `variables` override all of them; an unknown variable is left out.
 */
export function buildUri(spec: UriSpec, instance?: UriFields, variables: Readonly<Record<string, unknown>> = {}): string {
  const values: Record<string, unknown> = { '[': '{', ']': '}', scheme: 'http' };
  if (instance) {
    Object.assign(values, {
      name: instance.name,
      id: instance.id,
      address: instance.address ?? '',
      port: instance.port ?? '',
      'ssl-port': instance.sslPort ?? '',
      'registration-time-utc': instance.registrationTimeUTC,
      'service-type': instance.serviceType.toLowerCase(),
    });
    if (instance.sslPort !== null) values.scheme = 'https';
  }
  Object.assign(values, variables);
  let uri = '';
  for (const part of spec.parts) {
    if (!part.variable) uri += part.value;
    else if (values[part.value] !== undefined && values[part.value] !== null) uri += String(values[part.value]);
  }
  return uri;
}
