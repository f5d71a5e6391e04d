/**
 * An async mutex: `run(fn)` waits for every earlier holder to finish, then runs `fn` alone. FIFO,
 * so writers are served in the order they asked.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private held = 0;

  /** Whether a holder is running or waiting. */
  get busy(): boolean {
    return this.held > 0;
  }

  run<R>(fn: () => Promise<R> | R): Promise<R> {
    this.held++;
    const result = this.tail.then(fn);
    const settled = result.then(
      () => {},
      () => {},
    );
    this.tail = settled;
    settled.then(() => {
      this.held--;
    });
    return result;
  }
}
