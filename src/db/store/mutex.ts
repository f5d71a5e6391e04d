/**
 * An async mutex: `run(fn)` waits for every earlier holder to finish, then runs `fn` alone. FIFO,
 * so writers are served in the order they asked.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  /** Nobody holds the mutex and nobody waits for it. */
  get idle(): boolean {
    return this.holders === 0;
  }

  run<R>(fn: () => Promise<R> | R): Promise<R> {
    this.holders++;
    const result = this.tail.then(fn);
    this.tail = this.released(result);
    return result;
  }

  /**
   * `run`, except that the next holder may start as soon as `fn` calls `handOn` (it need not wait
   * for the rest of `fn`); a holder that never calls it hands on when it is over.
   */
  runHandingOn<R>(fn: (handOn: () => void) => Promise<R> | R): Promise<R> {
    this.holders++;
    const handedOn = Promise.withResolvers<void>();
    const result = this.tail.then(() => fn(handedOn.resolve));
    this.tail = Promise.race([handedOn.promise, this.released(result)]);
    return result;
  }

  /** Settles once `result` has, either way, with its holder counted out. */
  private released(result: Promise<unknown>): Promise<void> {
    const release = () => {
      this.holders--;
    };
    return result.then(release, release);
  }
}
