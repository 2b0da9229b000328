/**
 * Following the ensemble (Curator's EnsembleTracker, on our client): the config node is read with
 * a watch, and every new membership becomes the session's host list through updateServerList, so
 * a client whose original servers are all replaced keeps its session. Uses only the client's
 * public methods.
 */
import { debug } from '../diagnostics.js';
import { ZooKeeperError, ErrorCode } from '../errors.js';
import type { HostAddress } from '../session/hosts.js';
import type { SessionState, StateListener } from '../session/session.js';
import type { WatchListener } from '../session/watches.js';
import { clientHosts, sameHost, type EnsembleConfig } from './reconfig.js';

/** What the tracker needs of the client. */
export interface TrackedClient {
  getConfig(options: { watch?: WatchListener }): Promise<EnsembleConfig>;
  updateServerList(hosts: readonly HostAddress[]): boolean;
  readonly serverList: readonly HostAddress[];
  onStateChange(listener: StateListener): () => void;
}

const TERMINAL: ReadonlySet<SessionState> = new Set(['expired', 'authFailed', 'closed']);

/**
 * Keeps a client's host list equal to the ensemble's client addresses. A read that fails (the
 * connection dropped) is made again once the session is connected; a change made while the
 * client was away fires the watch when the session resumes (SetWatches), as any data watch does.
 */
export class EnsembleTracker {
  readonly #client: TrackedClient;
  readonly #onChange: ((config: EnsembleConfig, moved: boolean) => void) | undefined;
  #stopped = false;
  #retry = false;
  #off: () => void = () => {};
  /** The newest config applied (by version). */
  #last: EnsembleConfig | undefined;

  constructor(client: TrackedClient, onChange?: (config: EnsembleConfig, moved: boolean) => void) {
    this.#client = client;
    this.#onChange = onChange;
  }

  /** The newest configuration seen, if any. */
  get config(): EnsembleConfig | undefined {
    return this.#last;
  }

  /** Reads the config (and leaves the watch); resolves when the first read is done, failed or not. */
  start(): Promise<void> {
    this.#off = this.#client.onStateChange((state) => {
      if (TERMINAL.has(state)) this.stop();
      else if ((state === 'connected' || state === 'connectedReadOnly') && this.#retry) void this.#refresh();
    });
    return this.#refresh();
  }

  /** Stops following (the last host list stays). */
  stop(): void {
    this.#stopped = true;
    this.#off();
  }

  readonly #onEvent: WatchListener = (event) => {
    if (event.type === 'SessionExpired') this.stop();
    else void this.#refresh();
  };

  async #refresh(): Promise<void> {
    if (this.#stopped) return;
    this.#retry = false;
    let config: EnsembleConfig;
    try {
      config = await this.#client.getConfig({ watch: this.#onEvent });
    } catch (err) {
      // A server without dynamic configuration (3.4) has no config node: nothing to follow.
      if (err instanceof ZooKeeperError && (err.code === ErrorCode.NONODE || err.code === ErrorCode.UNIMPLEMENTED)) return this.stop();
      debug('ensemble tracker: reading the config failed (%s); again once connected', (err as Error)?.message);
      if (!this.#stopped) this.#retry = true;
      return;
    }
    this.#apply(config);
  }

  #apply(config: EnsembleConfig): void {
    // Replies and notifications arrive in order, but two reads may overlap: never go back.
    if (this.#last && config.version >= 0n && config.version < this.#last.version) return;
    this.#last = config;
    const hosts = clientHosts(config);
    if (hosts.length === 0 || this.#stopped) return;
    const current = this.#client.serverList;
    if (hosts.length === current.length && hosts.every((h) => current.some((c) => sameHost(c, h)))) return;
    const moved = this.#client.updateServerList(hosts);
    debug('ensemble tracker: config %s, %d servers%s', config.version.toString(16), hosts.length, moved ? '; moving' : '');
    try {
      this.#onChange?.(config, moved);
    } catch (err) {
      debug('ensemble tracker: onChange threw: %s', (err as Error)?.message);
    }
  }
}
