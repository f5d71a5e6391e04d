# syntax=docker/dockerfile:1
# Build: compile the single executable with the project's own toolchain (bun comes from npm).
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Run: the binary alone on a slim base, as a non-root user, with the database on a volume.
FROM debian:bookworm-slim
RUN groupadd --system outreach && useradd --system --gid outreach --home-dir /data outreach \
  && mkdir -p /data && chown outreach:outreach /data
COPY --from=build /src/dist/outreach /usr/local/bin/outreach
USER outreach
WORKDIR /data
VOLUME ["/data"]
ENV OUTREACH_DB=/data/outreach.db PORT=3000 HOST=0.0.0.0
EXPOSE 3000
ENTRYPOINT ["/usr/local/bin/outreach"]
CMD ["serve"]
