import { createServer, type Server as NetServer } from "node:net";

/** One request a receiver got. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export type Behaviour = (request: Request, body: string) => Response | Promise<Response>;

/**
 * A local webhook receiver: records every request and answers per path. `script(path, ...)` queues
 * answers for a path (the last one repeats); unknown paths answer 200.
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Behaviour[]>();
  private readonly server: ReturnType<typeof Bun.serve>;

  constructor() {
    this.server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      fetch: async (request) => {
        const body = await request.text();
        const path = new URL(request.url).pathname;
        this.received.push({ path, headers: request.headers.toJSON(), body });
        const queue = this.scripts.get(path);
        if (!queue || queue.length === 0) return new Response("ok");
        const next = queue.length > 1 ? (queue.shift() as Behaviour) : queue[0];
        return await next(request, body);
      },
    });
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.server.port}${path}`;
  }

  script(path: string, ...behaviours: Behaviour[]) {
    this.scripts.set(path, behaviours);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  stop() {
    this.server.stop(true);
  }
}

/** A TCP server that accepts connections and closes them without answering. */
export async function startClosingServer(): Promise<{ url: string; stop(): void }> {
  const server: NetServer = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/hook`, stop: () => server.close() };
}

/** A TCP server that accepts connections and never answers. */
export async function startHangingServer(): Promise<{ url: string; stop(): void }> {
  const sockets = new Set<import("node:net").Socket>();
  const server: NetServer = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    stop: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
