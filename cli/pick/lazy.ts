// Previews computed one at a time, on demand, and cached. Asking for a value
// never waits: it answers with what is known and starts the work. While one
// computation runs, only the latest request waits behind it, so a cursor
// moving quickly over 1,000 snapshots waits for at most one computation.

export type Lazy<V> = { state: "ready"; value: V } | { state: "failed"; error: Error } | { state: "pending" };

export class LazyCache<K, V> {
  private readonly done = new Map<K, Lazy<V>>();
  private running: K | undefined;
  private wanted: K | undefined;

  constructor(
    private readonly compute: (key: K) => Promise<V>,
    /** Called whenever a value arrives (the picker redraws). */
    private readonly onReady: (key: K) => void,
  ) {}

  /** What is known about `key`; starts computing it when nothing is. */
  get(key: K): Lazy<V> {
    const known = this.done.get(key);
    if (known) return known;
    // The latest request replaces any older one still waiting.
    this.wanted = this.running === key ? undefined : key;
    if (this.running === undefined) void this.pump();
    return { state: "pending" };
  }

  /** A finished value, without asking for it. */
  peek(key: K): Lazy<V> | undefined {
    return this.done.get(key);
  }

  private async pump(): Promise<void> {
    while (this.wanted !== undefined) {
      const key = this.wanted;
      this.wanted = undefined;
      this.running = key;
      try {
        this.done.set(key, { state: "ready", value: await this.compute(key) });
      } catch (e) {
        this.done.set(key, { state: "failed", error: e instanceof Error ? e : new Error(String(e)) });
      }
      this.running = undefined;
      this.onReady(key);
    }
  }
}
