/**
 * At most `limit` pieces of async work at once; the rest wait their turn, first come first served.
 * A finished piece hands its place straight to the next waiter, so the limit is never exceeded.
 */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error("a gate's limit is a positive integer");
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Work running now (for tests and metrics). */
  get running(): number {
    return this.active;
  }
}
