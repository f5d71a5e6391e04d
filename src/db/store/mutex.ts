/**
 * An async mutex: `run(fn)` waits for every earlier holder to finish, then runs `fn` alone. FIFO,
 * so writers are served in the order they asked.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  run<R>(fn: () => Promise<R> | R): Promise<R> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => {},
      () => {},
    );
    return result;
  }
}
