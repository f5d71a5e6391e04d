import { afterAll, beforeAll } from "bun:test";
import { and, asc, eq, inArray } from "drizzle-orm";
import { webhookDeliveries } from "../../src/db/schema";
import type { TestServer } from "./server";
import { Receiver } from "./webhook-receiver";

export interface LoggedEvent {
  type: string;
  workspaceId: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary event data
  data: any;
}

/**
 * What workspaces emitted, seen as a webhook subscriber sees it (an event that no subscription
 * wants is fanned out to nobody and kept nowhere). `watch` subscribes a workspace to every event
 * (`*`, delivered to a local receiver that answers 200); `of` reads the events emitted since, from
 * the subscriptions' deliveries (each holds the payload it sends), oldest first. Registers its own
 * beforeAll/afterAll for the receiver: call it at the top of a test file.
 */
export function eventLog(server: () => TestServer) {
  let receiver: Receiver | undefined;
  const webhookIds: string[] = [];
  beforeAll(() => {
    receiver = new Receiver();
  });
  afterAll(() => receiver?.stop());
  return {
    /** Subscribes the workspace of `key` (the bootstrap workspace without one) to every event. */
    async watch(key?: string) {
      if (!receiver) throw new Error("the event log starts before the tests");
      const created = await server().api(
        "POST",
        "/v1/webhooks",
        { url: receiver.url("/events"), events: ["*"], description: "test event log" },
        key === undefined ? {} : { key },
      );
      if (created.status !== 200) throw new Error(`event log subscription: ${JSON.stringify(created.body)}`);
      webhookIds.push(created.body.webhook.id);
    },
    /** The watched workspaces' events of `type` or types (of one workspace when given), oldest first. */
    async of(type: string | string[], workspaceId?: string): Promise<LoggedEvent[]> {
      if (webhookIds.length === 0) return [];
      return (
        await server()
          .server.handle.db.select()
          .from(webhookDeliveries)
          .where(
            and(
              inArray(webhookDeliveries.webhookId, webhookIds),
              inArray(webhookDeliveries.eventType, Array.isArray(type) ? type : [type]),
              workspaceId === undefined ? undefined : eq(webhookDeliveries.workspaceId, workspaceId),
            ),
          )
          .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
          .all()
      ).map((row) => ({
        type: row.eventType,
        workspaceId: row.workspaceId,
        data: JSON.parse(row.payload).data,
      }));
    },
  };
}
