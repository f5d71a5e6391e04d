/**
 * Token buckets (API.md §1, §7.2): `rps` tokens a second up to `burst`, one per workspace (per client
 * address without a key). In memory, per process: several processes behind one balancer each enforce the limit on the share they see.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSec: number;
  /** Seconds until one token is available (when refused). */
  retryAfterSec: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly rps: number,
    private readonly burst: number,
  ) {}

  get enabled() {
    return this.rps > 0;
  }

  take(key: string, now = Date.now()): RateDecision {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
      if (this.buckets.size > 100_000) this.evictFull(now);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rps);
      bucket.at = now;
    }
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: this.burst,
      remaining: Math.floor(bucket.tokens),
      resetSec: Math.ceil((this.burst - bucket.tokens) / this.rps),
      retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / this.rps)),
    };
  }

  /** Forgets buckets that have refilled; they would start full anyway. */
  private evictFull(now: number) {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.rps >= this.burst) this.buckets.delete(key);
    }
  }
}
