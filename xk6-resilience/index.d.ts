/**
 * k6/x/resilience: client behaviour models, key streams, arrival shapes,
 * deadline and criticality headers, and Toxiproxy control for k6 scripts.
 *
 * ```js
 * import resilience from 'k6/x/resilience';
 * ```
 */
declare module 'k6/x/resilience' {
  /** A duration: milliseconds as a number, or a string like "250ms", "2s", "1m". */
  export type Duration = number | string;

  /** The extension's version, e.g. "v0.2.0". */
  export function version(): string;

  // ---------------------------------------------------------------- clients

  export type Model = 'naive' | 'backoff' | 'budgeted' | 'smart';

  export interface ClientOptions {
    /** Most retries per logical request (default 3). */
    retries?: number;
    /** Backoff: retry n waits uniform [0, min(cap, base·2ⁿ)) (defaults 50ms, 2s; naive never waits). */
    base?: Duration;
    cap?: Duration;
    /** budgeted, smart: retries/requests stay at or under this ratio over budgetWindow (default 0.1, 10s). */
    budget?: number;
    budgetWindow?: Duration;
    /** Deadline of a logical request, retries and pauses included (default none). */
    deadline?: Duration;
    /** Tier sent in the criticality header of every attempt. */
    tier?: string;
    /** Headers added to attempt.headers. */
    headers?: Record<string, string>;
    /** Header names (defaults from headerNames()). */
    deadlineHeader?: string;
    criticalityHeader?: string;
    /** Statuses worth retrying (default [429, 500, 502, 503, 504]); status 0 (no answer) always is. */
    retryOn?: number[];
    /** What a back-pressure answer is: a status in statuses with header: value, or with Retry-After. */
    backpressure?: { statuses?: number[]; header?: string; value?: string; retryAfter?: boolean };
    /** smart: consecutive failures that open the breaker, and for how long (defaults 5, 5s). */
    breaker?: { failures?: number; cooldown?: Duration };
    /** Seed of the backoff jitter; each VU and client mixes in its own number (default 1). */
    seed?: number;
  }

  /** What fn gets for each attempt. */
  export interface Attempt {
    /** 0 for the first attempt. */
    attempt: number;
    /** Headers to send: deadline (remaining ms), criticality, and the client's headers. */
    headers: Record<string, string>;
    /** Milliseconds left of the deadline (only with a deadline). */
    remaining?: number;
    /** The remaining time as a k6 http timeout, e.g. "734ms" (only with a deadline). */
    timeout?: string;
  }

  /** What fn returns: a k6 http Response, anything with status and headers, or a status number. */
  export type Answer = { status: number; headers?: Record<string, string> } | number;

  export interface RejectedAnswer {
    status: 0;
    error: string;
    rejected: true;
  }

  export interface ClientStats {
    requests: number;
    attempts: number;
    retries: number;
    backpressure: number;
    giveups: number;
    goodput: number;
    rejected: number;
  }

  export interface Client {
    readonly model: Model;
    /**
     * Runs one logical request: calls fn until it succeeds (2xx/3xx) or the
     * model gives up, pausing between attempts like k6's sleep. Returns fn's
     * last answer, or a RejectedAnswer when the smart client's breaker is open.
     * An exception thrown by fn is thrown again. Extra arguments are passed
     * to fn after the attempt, so fn can be defined once.
     */
    request<T extends Answer, A extends unknown[]>(fn: (a: Attempt, ...args: A) => T, ...args: A): T | RejectedAnswer;
    /** This VU's totals for this client. */
    stats(): ClientStats;
    /** The smart client's breaker: "closed", "open" or "half-open". */
    breaker(): 'closed' | 'open' | 'half-open';
  }

  export function client(model: Model, options?: ClientOptions): Client;
  /** Fixed retries, no pause. */
  export function naive(options?: ClientOptions): Client;
  /** Exponential backoff with full jitter. */
  export function backoff(options?: ClientOptions): Client;
  /** Backoff, retrying only while retries/requests stay under the budget ratio. */
  export function budgeted(options?: ClientOptions): Client;
  /** Budgeted backoff that never retries back pressure and opens a breaker. */
  export function smart(options?: ClientOptions): Client;

  // ---------------------------------------------------- deadline, criticality

  export interface Deadline {
    /** Milliseconds left, never negative. */
    remaining(): number;
    expired(): boolean;
    /** The remaining time as a k6 http timeout, e.g. "734ms" (at least 1ms). */
    timeout(): string;
    /** A copy of base with the deadline header (remaining ms) and, if set, the tier. */
    headers(base?: Record<string, string>): Record<string, string>;
  }

  /** A deadline of budget from now. */
  export function deadline(budget: Duration, options?: { tier?: string }): Deadline;
  /** A copy of base with the criticality header set to tier. */
  export function criticality(tier: string, base?: Record<string, string>): Record<string, string>;
  /** Sets this VU's header names (defaults X-Deadline-Ms, X-Criticality) and returns them. */
  export function headerNames(names?: { deadline?: string; criticality?: string }): { deadline: string; criticality: string };

  // ---------------------------------------------------------------- keys

  export interface StreamOptions {
    /** Key space: indices 0..n-1 (default 1000). */
    n?: number;
    /** Keys are prefix + index (default "key-"). */
    prefix?: string;
    /** Seed (default 1); with perVU (default true) each VU mixes in its number. */
    seed?: number;
    perVU?: boolean;
    /** Indices below this are kept as ready strings (default 4096): next() allocates nothing for them. */
    cache?: number;
  }

  export interface KeyStream {
    readonly kind: 'uniform' | 'zipf' | 'hotset' | 'bot';
    readonly n: number;
    /** The next key: prefix + index. */
    next(): string;
    /** The next key's index in [0, n). */
    index(): number;
    /** The last key's class: "hot" (index below hot), "cold" or "bot"; for a key_class tag. */
    class(): 'hot' | 'cold' | 'bot';
  }

  export const keys: {
    uniform(options?: StreamOptions & { hot?: number }): KeyStream;
    /** P(rank k) ∝ k^-s, k = index+1; any s > 0 (default 1.1). */
    zipf(options?: StreamOptions & { s?: number; hot?: number }): KeyStream;
    /** p of draws (default 0.9) on the hot keys 0..hot-1 (default n/100), the rest uniform over the others. */
    hotset(options?: StreamOptions & { hot?: number; p?: number }): KeyStream;
    /** Always one key: key, else prefix + index (default 0). */
    bot(options?: { key?: string; index?: number; prefix?: string }): KeyStream;
  };

  // ---------------------------------------------------------------- shapes

  export interface Stage {
    target: number;
    duration: string;
  }

  /** A k6 scenario for an arrival-rate executor; spread it and add exec, tags, … */
  export interface Scenario {
    executor: 'ramping-arrival-rate' | 'constant-arrival-rate';
    startRate?: number;
    rate?: number;
    timeUnit: string;
    duration?: string;
    startTime?: string;
    stages?: Stage[];
    preAllocatedVUs: number;
    maxVUs: number;
  }

  export interface VUOptions {
    /** Default peak/10 (at least 1) and 4× that. */
    preAllocatedVUs?: number;
    maxVUs?: number;
    startTime?: Duration;
  }

  export const shapes: {
    /** base requests/s with a burst to peak every `every`, lasting `length` (rise included) (rise default 1s). */
    bursts(o: VUOptions & { base: number; peak: number; every: Duration; length: Duration; duration: Duration; rise?: Duration }): Scenario;
    /** baseline×capacity (default 0.5) for before, factor×capacity (default 2) for hold, back for after. */
    stepOverload(o: VUOptions & { capacity: number; factor?: number; baseline?: number; before?: Duration; hold: Duration; after?: Duration; rise?: Duration }): Scenario;
    /** A constant rate for duration. */
    flood(o: VUOptions & { rate: number; duration: Duration }): Scenario;
  };

  // ---------------------------------------------------------------- faults

  export interface Proxy {
    name: string;
    listen: string;
    upstream: string;
    enabled: boolean;
    toxics?: Toxic[];
  }

  export interface Toxic {
    name?: string;
    /**
     * Toxiproxy's TCP toxics: latency, bandwidth, slow_close, timeout,
     * reset_peer, slicer, limit_data. On chaosrun's proxy server (`chaosrun
     * serve toxiproxy --http-stage`) also the HTTP-aware http_error and
     * http_latency, which act on whole requests, and grpc_error,
     * grpc_latency and grpc_reset, which act on gRPC calls (path is the
     * call's /package.Service/Method; see HTTPToxicAttributes).
     */
    type?: string;
    stream?: 'downstream' | 'upstream';
    /** The fraction of connections (TCP toxics) or matched requests (HTTP toxics) affected. */
    toxicity?: number;
    attributes?: Record<string, number> | HTTPToxicAttributes;
  }

  /** Attributes of the stage's toxics (http_*, grpc_*); every matcher given must hold. */
  export interface HTTPToxicAttributes {
    /** http_error: the status answered without forwarding (default 503). */
    status?: number;
    /** http_error: seconds, adds a Retry-After header. */
    retry_after?: number;
    /** http_latency: ms; fixed, ± jitter (uniform), or lognormal with median latency and this p99. */
    latency?: number;
    jitter?: number;
    p99?: number;
    /** grpc_error: the gRPC status answered (1..16, default 14 UNAVAILABLE) and a pushback in ms. */
    code?: number;
    pushback_ms?: number;
    /** grpc_reset: 1 ends the call's connection with GOAWAY instead of resetting its stream. */
    goaway?: number;
    /** grpc_latency: 1 forwards the call at once and holds its response headers for the latency. */
    response?: number;
    /** Matchers: method, path glob (* any run, ? one), RE2 on the path, header globs (metadata for gRPC). */
    method?: string;
    path?: string;
    path_regex?: string;
    header?: Record<string, string>;
  }

  /**
   * A Toxiproxy API client. Changing calls work from setup(), default or a
   * scenario's exec (not the init context); each change emits one
   * resilience_fault_events sample tagged proxy, toxic and action. Failures throw.
   */
  export interface Toxiproxy {
    createProxy(p: { name: string; upstream: string; listen?: string; enabled?: boolean }): Proxy;
    deleteProxy(name: string): void;
    proxy(name: string): Proxy;
    proxies(): Record<string, Proxy>;
    enable(name: string): void;
    disable(name: string): void;
    addToxic(proxy: string, toxic: Toxic & { type: string }): Toxic;
    updateToxic(proxy: string, name: string, toxic: Toxic): Toxic;
    removeToxic(proxy: string, name: string): void;
    reset(): void;
  }

  /** A client of the Toxiproxy API at url (http://HOST:PORT); token is sent as a Bearer token. */
  export function toxiproxy(url: string, options?: { token?: string }): Toxiproxy;

  const resilience: {
    version: typeof version;
    client: typeof client;
    naive: typeof naive;
    backoff: typeof backoff;
    budgeted: typeof budgeted;
    smart: typeof smart;
    deadline: typeof deadline;
    criticality: typeof criticality;
    headerNames: typeof headerNames;
    keys: typeof keys;
    shapes: typeof shapes;
    toxiproxy: typeof toxiproxy;
  };
  export default resilience;
}
