/**
 * A map of at most `max` entries that is emptied when full. For values derived from keys that
 * rarely change (an endpoint's URL, its signing key): a key no longer used must not be kept for
 * ever, and after an emptying each key in use costs one computation again.
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.#entries.size >= this.#max && !this.#entries.has(key)) this.#entries.clear();
    this.#entries.set(key, value);
  }
}
