# syntax=docker/dockerfile:1
#
# Bunker image: one static-ish executable on a distroless base.
#   docker build -t bunker .
#   docker run -p 8080:8080 -p 2525:2525 -v bunker-data:/data bunker
# The first start prints a one-time setup link (/admin/#setup=...) in the logs.

# --- build: the same path as a developer machine (npm ci brings bun, npm run build) ---
FROM node:20-bookworm-slim AS build
WORKDIR /src
# Dependencies first so source edits do not invalidate the npm layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# scripts/build.ts compiles dist/bunker and checks it runs from an empty directory.
RUN npm run build \
 && mkdir -p /out/data \
 && cp dist/bunker /out/bunker

# --- runtime: glibc + libgcc, no shell, no package manager, runs as uid 65532 ---
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/bunker /bunker
# An empty /data owned by the runtime user, so a fresh named volume is writable. The binary
# writes its embedded libvips to /data/runtime/ on the first image upload (and bun the sharp
# addon to /tmp): neither may be mounted noexec, or uploads end image_processing_unavailable.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080 \
    SMTP_PORT=2525
VOLUME /data
EXPOSE 8080 2525
# No curl in distroless: the binary checks its own /healthz (exit 0 healthy, 1 not).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 CMD ["/bunker", "healthcheck"]
# SIGTERM (docker stop) drains HTTP and SMTP, checkpoints the WAL and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/bunker"]
CMD ["serve"]
