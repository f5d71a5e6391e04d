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
    this.tail = result.then(
      () => {
        this.holders--;
      },
      () => {
        this.holders--;
      },
    );
    return result;
  }
}
