import type { TestServer } from "./server";

/**
 * Puts `number` into a workspace (default: the bootstrap one) through `POST /v1/numbers`; returns
 * its id. `dailyLimit` is set with a PATCH.
 */
export async function orderNumber(
  s: TestServer,
  number: string,
  options: { key?: string; dailyLimit?: number } = {},
): Promise<string> {
  const answer = await s.api("POST", "/v1/numbers", { number }, { key: options.key });
  if (answer.status !== 200 || answer.body.added !== 1)
    throw new Error(`could not order ${number}: ${answer.status} ${JSON.stringify(answer.body)}`);
  const list = await s.api("GET", "/v1/numbers?limit=200", undefined, { key: options.key });
  const id = list.body.numbers.find((n: { number: string }) => n.number === number).id as string;
  if (options.dailyLimit !== undefined) {
    const patched = await s.api(
      "PATCH",
      `/v1/numbers/${id}`,
      { daily_limit: options.dailyLimit },
      { key: options.key },
    );
    if (patched.status !== 200) throw new Error(`could not set daily_limit: ${JSON.stringify(patched.body)}`);
  }
  return id;
}

/**
 * Polls `read` until `done` holds or `attempts` run out, returning the last value: the test's
 * assertion then says what was expected (no timing is asserted).
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, attempts = 400) {
  let value = await read();
  for (let i = 0; i < attempts && !done(value); i++) {
    await Bun.sleep(25);
    value = await read();
  }
  return value;
}

/**
 * The simulated carrier's ledger rows (`GET /v1/sandbox/outbox`) as hand-offs: a row whose
 * message was handed over twice (`handoffs: 2`, sent once) counts twice, so a test counting sends
 * still fails on a duplicate hand-off.
 */
// biome-ignore lint/suspicious/noExplicitAny: ledger rows as the tests read them (parsed JSON)
export function handOffs(sends: any[]): any[] {
  return sends.flatMap((send) => Array.from({ length: send.handoffs }, () => send));
}
