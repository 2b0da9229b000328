/**
 * `ZooKeeperInstrumentation`: subscribes to the channels `@zk/protocol` and `@zk/locks` publish
 * and turns them into OpenTelemetry spans, span events and metrics. It patches nothing and needs
 * neither package at run time: with it disabled, the channels have no subscriber and the clients
 * pay one `hasSubscribers` test per request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import * as dc from 'node:diagnostics_channel';
import { metrics, trace, type MeterProvider, type ObservableResult, type TracerProvider } from '@opentelemetry/api';
import { ZooKeeperAttributes as A } from './attributes.js';
import { Channels, sessionHex, type StateMessage, type WatchEventMessage } from './channels.js';
import { lockHandlers } from './locks.js';
import { Instruments } from './metrics.js';
import { benignCodes, type Runtime, type Scope, type ZooKeeperInstrumentationConfig } from './options.js';
import { connectHandlers, requestHandlers, type TracingHandlers } from './requests.js';

const NAME = '@zk/otel';
/** States a session leaves for good: not counted as sessions. */
const TERMINAL = new Set(['closed', 'expired', 'authFailed']);
const CONNECTED = new Set(['connected', 'connectedReadOnly']);
const DISCONNECTED = new Set(['suspended', 'lost']);

type AnyTracing = dc.TracingChannel<unknown, object>;

function tracing(name: string): AnyTracing | undefined {
  const make = (dc as { tracingChannel?: (name: string) => AnyTracing }).tracingChannel;
  return typeof make === 'function' ? make(name) : undefined;
}

/**
 * OpenTelemetry instrumentation for `@zk/protocol` and `@zk/locks`, built on their
 * `diagnostics_channel`s (the shape of the OpenTelemetry contrib instrumentations, without a
 * dependency on `@opentelemetry/instrumentation`):
 *
 * ```ts
 * const zk = new ZooKeeperInstrumentation({ ignoreOperations: ['exists'] }); // enabled at once
 * // ... zk.disable(); zk.enable();
 * ```
 *
 * Spans: one CLIENT span per request (`getData /app/config`), a `connect` span, a span per lock,
 * permit or leadership wait (`lock.acquire mutex /locks/job`) with the requests it made as
 * children, and a span per hold (`lock.hold mutex /locks/job`) that carries the fencing token,
 * an event per session state change, and the loss of the hold. Metrics: see {@link ZooKeeperMetrics}.
 */
export class ZooKeeperInstrumentation {
  /** The instrumentation scope's name, `@zk/otel`. */
  readonly instrumentationName = NAME;
  #config: ZooKeeperInstrumentationConfig;
  #tracerProvider: TracerProvider | undefined;
  #meterProvider: MeterProvider | undefined;
  #unsubscribe: (() => void)[] = [];
  #runtime: Runtime | undefined;

  /** Makes the instrumentation and, unless `config.enabled` is `false`, subscribes at once. */
  constructor(config: ZooKeeperInstrumentationConfig = {}) {
    this.#config = { ...config };
    benignCodes(config.benignCodes); // bad names fail here, not at the first reply
    this.#tracerProvider = config.tracerProvider;
    this.#meterProvider = config.meterProvider;
    if (config.enabled !== false) this.enable();
  }

  /** Whether it is subscribed to the channels. */
  get enabled(): boolean {
    return this.#runtime !== undefined;
  }

  /** The options in force. */
  getConfig(): ZooKeeperInstrumentationConfig {
    return { ...this.#config };
  }

  /** Replaces the options (the providers are kept unless given); takes effect at once. */
  setConfig(config: ZooKeeperInstrumentationConfig): void {
    benignCodes(config.benignCodes);
    this.#config = { ...config };
    if (config.tracerProvider !== undefined) this.#tracerProvider = config.tracerProvider;
    if (config.meterProvider !== undefined) this.#meterProvider = config.meterProvider;
    this.#restart();
  }

  /** Uses `provider` for the spans from now on. */
  setTracerProvider(provider: TracerProvider): void {
    this.#tracerProvider = provider;
    this.#restart();
  }

  /** Uses `provider` for the metrics from now on. */
  setMeterProvider(provider: MeterProvider): void {
    this.#meterProvider = provider;
    this.#restart();
  }

  /**
   * Subscribes to the channels (no-op when enabled). Requests and waits already in flight are
   * not traced; those started from now on are.
   */
  enable(): void {
    if (this.#runtime !== undefined) return;
    const rt: Runtime = {
      tracer: (this.#tracerProvider ?? trace.getTracerProvider()).getTracer(NAME),
      instruments: new Instruments((this.#meterProvider ?? metrics.getMeterProvider()).getMeter(NAME)),
      config: this.#config,
      benign: benignCodes(this.#config.benignCodes),
      scope: new AsyncLocalStorage<Scope | undefined>(),
    };
    this.#runtime = rt;
    const locks = lockHandlers(rt);
    const requests = requestHandlers(rt);
    this.#traceChannel(Channels.request, requests.handlers);
    this.#traceChannel(Channels.connect, connectHandlers(rt));
    this.#traceChannel(Channels.acquire, locks.acquire, locks.enter, rt);
    this.#plain(Channels.hold, locks.hold);
    this.#plain(Channels.lost, locks.lost);
    this.#plain(Channels.revoke, locks.revoke);
    this.#plain(Channels.leadership, locks.leadership);
    this.#plain(Channels.event, (m: WatchEventMessage) => rt.instruments.watchEvents.add(1, { [A.WATCH_EVENT_TYPE]: m.type }));
    const states = new Map<bigint, string>();
    this.#plain(Channels.state, (m: StateMessage) => {
      const before = states.get(m.sessionId);
      if (before !== undefined) rt.instruments.sessions.add(-1, { [A.SESSION_STATE]: before });
      if (TERMINAL.has(m.to)) states.delete(m.sessionId);
      else {
        states.set(m.sessionId, m.to);
        rt.instruments.sessions.add(1, { [A.SESSION_STATE]: m.to });
      }
      if (CONNECTED.has(m.to) && DISCONNECTED.has(m.from)) rt.instruments.reconnects.add(1);
      const event = { [A.SESSION_STATE]: m.to, [A.SESSION_PREVIOUS_STATE]: m.from, [A.SESSION_ID]: sessionHex(m.sessionId) };
      const active = trace.getActiveSpan();
      const holds = locks.holdsOf(m.sessionId);
      if (active !== undefined && !holds.includes(active)) active.addEvent('zookeeper.session.state', event);
      for (const span of holds) span.addEvent('zookeeper.session.state', event);
    });
    // The requests in flight, read when the metrics are collected (nothing per request). Once
    // disabled it observes 0 (a removed callback would leave its last value standing).
    const system = { [A.DB_SYSTEM_NAME]: 'zookeeper' };
    const live = { on: true };
    rt.instruments.outstanding.addCallback((result: ObservableResult) => result.observe(live.on ? requests.pending() : 0, system));
    // Disabled, the gauges would keep what they counted with no way down: take it back.
    this.#unsubscribe.push(() => {
      for (const state of states.values()) rt.instruments.sessions.add(-1, { [A.SESSION_STATE]: state });
      live.on = false;
    });
  }

  /**
   * Unsubscribes from every channel: nothing more is recorded until `enable()`. Spans of
   * requests and waits in flight are left unended (their end would come through the channels);
   * the session and outstanding-request gauges drop what they counted (after `enable()`, a
   * session is counted again at its next state change).
   */
  disable(): void {
    for (const undo of this.#unsubscribe.splice(0)) undo();
    this.#runtime = undefined;
  }

  #restart(): void {
    if (this.#runtime === undefined) return;
    this.disable();
    this.enable();
  }

  #traceChannel<T extends object>(name: string, handlers: TracingHandlers<T>, enter?: (ctx: T) => Scope | undefined, rt?: Runtime): void {
    const tc = tracing(name);
    if (tc === undefined) return;
    const subscribers = handlers as unknown as dc.TracingChannelSubscribers<object>;
    tc.subscribe(subscribers);
    this.#unsubscribe.push(() => tc.unsubscribe(subscribers));
    // A traced wait's span is in scope while it runs: the requests it makes become its children.
    if (enter !== undefined && rt !== undefined && typeof tc.start.bindStore === 'function') {
      const store = rt.scope as AsyncLocalStorage<unknown>;
      tc.start.bindStore(store, (ctx) => enter(ctx as T));
      this.#unsubscribe.push(() => tc.start.unbindStore(store));
    }
  }

  #plain<T>(name: string, fn: (message: T) => void): void {
    const listener = (message: unknown) => fn(message as T);
    dc.subscribe(name, listener);
    this.#unsubscribe.push(() => dc.unsubscribe(name, listener));
  }
}
