#!/usr/bin/env bash
# Builds the service's image from the Dockerfile with Debian's buildah, on a Debian base made
# without any container registry, then starts it with podman and checks /healthz from inside the
# container (docs/container.md). Run as root on Debian (or Ubuntu) with apt configured:
#
#   deploy/container/build-and-run.sh
#
# 1. tools     buildah, podman and debootstrap, installed with apt-get when missing
# 2. base      debootstrap --variant=minbase of bookworm from apt's own mirror, slimmed (no manuals,
#              translations, documentation), brought up to date with bookworm-updates and
#              bookworm-security, imported as localhost/mdqs-base:bookworm
#              (the root filesystem's tarball is kept in /var/cache/mdqs-container for the next run)
# 3. build     buildah build of the Dockerfile into localhost/mdqs:latest (--format docker keeps its
#              HEALTHCHECK; --layers caches each step for the next build); its RUN steps reach apt's mirror and the npm registry on the host's
#              network, npm trusting the host's CA bundle (a build secret: a proxy's CA, if any)
# 4. run       podman run, then /healthz from inside the container, the image's HEALTHCHECK, and a
#              stop (SIGTERM) that must drain and exit 0
#
# Two refusals of podman have a known way round, taken after printing podman's error: limits above
# this process's own (it runs containers with this shell's limits) and hybrid cgroups that Debian
# 12's crun refuses (it installs runc and uses it). Where this machine cannot run containers
# otherwise (no namespaces, no overlay mounts, …), the script prints podman's exact error, still
# builds the image (buildah's chroot isolation), skips step 4 and exits 0 after saying so. Any
# other failure exits non-zero.
#
# Environment:
#   MDQS_IMAGE            the image to build (localhost/mdqs:latest)
#   MDQS_BASE_IMAGE       the base to build on (localhost/mdqs-base:bookworm); an image that exists
#                         is used as it is, so docker.io/library/debian:bookworm-slim works with a registry
#   MDQS_CONTAINER_CACHE  where the base's root filesystem tarball is kept (/var/cache/mdqs-container)
#   MDQS_REBUILD_BASE=1   make the base again (a fresh debootstrap) even if it exists
#   DEBIAN_MIRROR         the mirror for debootstrap (apt's own for bookworm when unset)
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE="${MDQS_IMAGE:-localhost/mdqs:latest}"
BASE_IMAGE="${MDQS_BASE_IMAGE:-localhost/mdqs-base:bookworm}"
CACHE_DIR="${MDQS_CONTAINER_CACHE:-/var/cache/mdqs-container}"
SUITE=bookworm
CONTAINER="mdqs-check-$$"

started=$SECONDS
step() { printf '\n== %s (%ds)\n' "$*" "$((SECONDS - started))"; }
die() { printf 'build-and-run: %s\n' "$*" >&2; exit 1; }

# --- 1. tools -------------------------------------------------------------------------------------
step "tools: buildah, podman, debootstrap"
missing=()
for tool in buildah podman debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "missing ${missing[*]}; run as root to install them with apt-get"
  echo "installing ${missing[*]} with apt-get"
  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}") >/dev/null
fi
echo "$(buildah --version); $(podman --version)"

# --- 2. base --------------------------------------------------------------------------------------
# apt's configured sites, "URI suite" per line: the mirror of bookworm and of bookworm-security.
apt_site() {
  apt-get indextargets --format '$(SITE) $(RELEASE)' 'Created-By: Packages' 2>/dev/null \
    | awk -v suite="$1" '$2 == suite { print $1; exit }'
}

make_base() {
  local tarball="$CACHE_DIR/$SUITE-minbase.tar"
  if [ -s "$tarball" ] && [ "${MDQS_REBUILD_BASE:-0}" != 1 ]; then
    echo "root filesystem from $tarball"
  else
    [ "$(id -u)" -eq 0 ] || die "debootstrap needs root"
    local mirror="${DEBIAN_MIRROR:-$(apt_site "$SUITE")}"
    local security; security="$(apt_site "$SUITE-security")"
    [ -n "$mirror" ] || die "no apt source for $SUITE in /etc/apt/sources.list*; set DEBIAN_MIRROR"
    local rootfs="$CACHE_DIR/rootfs"
    mkdir -p "$CACHE_DIR"
    # --one-file-system: never into /proc or /sys that a failed debootstrap left mounted there.
    rm -rf --one-file-system "$rootfs"
    echo "debootstrap --variant=minbase $SUITE from $mirror"
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$CACHE_DIR/debootstrap.log" 2>&1 \
      || { tail -n 20 "$CACHE_DIR/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE_DIR/debootstrap.log)"; }
    # Slim like Debian's own container images: no manuals, translations or documentation but the
    # copyright files, now and in whatever apt installs later (the build stage's packages).
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/mdqs-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
    (cd "$rootfs/usr/share" && find doc -type f ! -name copyright -delete && find doc -mindepth 1 -type d -empty -delete \
      && rm -rf man/* groff/* info/* lintian/* && find locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +)
    # Its updates and security fixes, from the same sites apt uses here.
    {
      echo "deb $mirror $SUITE main"
      echo "deb $mirror $SUITE-updates main"
      [ -z "$security" ] || echo "deb $security $SUITE-security main"
    } >"$rootfs/etc/apt/sources.list"
    cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
    echo "apt-get upgrade from $SUITE-updates and $SUITE-security"
    chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
      'apt-get update -qq && apt-get -y -qq -o Dpkg::Use-Pty=0 upgrade && apt-get clean' >>"$CACHE_DIR/debootstrap.log" 2>&1 \
      || { tail -n 20 "$CACHE_DIR/debootstrap.log" >&2; die "apt-get upgrade in the root filesystem failed"; }
    # The container runtime provides resolv.conf; package lists and caches are left out of the image.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs/etc/resolv.conf"
    : >"$rootfs/etc/resolv.conf"
    tar --numeric-owner --xattrs -C "$rootfs" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf --one-file-system "$rootfs"
  fi
  local previous; previous="$(podman image inspect --format '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || true)"
  podman import --change 'CMD ["/bin/bash"]' "$tarball" "$BASE_IMAGE" >/dev/null
  # The base this one replaces, unless images built on it still need it.
  [ -z "$previous" ] || [ "$previous" = "$(podman image inspect --format '{{.Id}}' "$BASE_IMAGE")" ] \
    || podman rmi "$previous" >/dev/null 2>&1 || true
}

step "base: $BASE_IMAGE"
if [ "${MDQS_REBUILD_BASE:-0}" != 1 ] && podman image exists "$BASE_IMAGE"; then
  echo "$BASE_IMAGE exists"
elif [ "$BASE_IMAGE" = localhost/mdqs-base:bookworm ] || [ "${MDQS_REBUILD_BASE:-0}" = 1 ]; then
  make_base
else
  echo "pulling $BASE_IMAGE"
  podman pull "$BASE_IMAGE" >/dev/null
fi

# --- can this machine run a container? ------------------------------------------------------------
# A trial run of the base. Two refusals have a known way round, each printed with podman's own
# words before it is taken: podman's default limits (1048576 open files and processes) above this
# process's hard limits where it lacks CAP_SYS_RESOURCE ("setrlimit … Operation not permitted": the
# container gets this shell's limits instead), and crun refusing hybrid cgroups (v1 plus a v2
# hierarchy with a controller: runc, installed with apt-get, handles them). Anything else means no
# containers here: the image is still built, with buildah's chroot isolation, and not started.
runtime=()     # podman's and buildah's --runtime
limits=()      # podman run's --ulimit
probe() { podman "${runtime[@]}" run --rm --network none "${limits[@]}" "$BASE_IMAGE" true 2>&1; }
step "probe: podman run $BASE_IMAGE"
can_run=0
for _ in 1 2 3; do
  if probe_error="$(probe)"; then can_run=1; break; fi
  printf 'podman run said:\n%s\n' "$probe_error"
  if [[ "$probe_error" == *rlimit* || "$probe_error" == *RLIMIT* ]] && [ "${#limits[@]}" -eq 0 ]; then
    nproc="$(ulimit -Hu)"; pid_max="$(cat /proc/sys/kernel/pid_max)"
    [ "$nproc" != unlimited ] && [ "$nproc" -lt "$pid_max" ] || nproc="$pid_max"
    limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=$nproc:$nproc")
    echo "-> again with this shell's limits: ${limits[*]}"
  elif [[ "$probe_error" == *"hybrid mode not supported"* ]] && [ "${#runtime[@]}" -eq 0 ]; then
    if ! command -v runc >/dev/null 2>&1; then
      [ "$(id -u)" -eq 0 ] || die "crun refuses this machine's cgroups and runc is missing; run as root to install it"
      (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y runc) >/dev/null
    fi
    runtime=(--runtime runc)
    echo "-> again with runc"
  else
    break
  fi
done
if [ "$can_run" = 1 ]; then
  echo "containers run here${runtime[*]:+ (${runtime[*]})}${limits[*]:+ (${limits[*]})}"
else
  echo "This machine cannot run containers (podman's error above). The image is still built" \
    "(buildah --isolation chroot); it is not started."
fi

# --- 3. build -------------------------------------------------------------------------------------
step "build: $IMAGE"
build_args=(--format docker --layers --network host --build-arg "BASE=$BASE_IMAGE" --tag "$IMAGE" --file Dockerfile)
# This machine's CA bundle for npm's downloads in the build: it holds the CA of an HTTPS-inspecting
# proxy when there is one (certificates added under /usr/local/share/ca-certificates).
hostca=/etc/ssl/certs/ca-certificates.crt
[ ! -s "$hostca" ] || build_args+=(--secret "id=ca-certificates,src=$hostca")
if [ "$can_run" = 1 ]; then build_args+=("${runtime[@]}"); else build_args+=(--isolation chroot); fi
previous="$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
buildah build "${build_args[@]}" .
# The image this one replaces, if no longer used (the cached steps of --layers stay).
current="$(podman image inspect --format '{{.Id}}' "$IMAGE")"
[ -z "$previous" ] || [ "$previous" = "$current" ] || podman rmi "$previous" >/dev/null 2>&1 || true
echo "image $IMAGE: $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }')"

if [ "$can_run" = 0 ]; then
  step "done: built, not started (this machine cannot run containers)"
  exit 0
fi

# --- 4. run ---------------------------------------------------------------------------------------
step "run: $CONTAINER"
cleanup() { podman rm --force --time 0 "$CONTAINER" >/dev/null 2>&1 || true; }
trap cleanup EXIT
# The HEALTHCHECK is run below by hand (--health-interval disable: no timer, which needs systemd).
podman "${runtime[@]}" run --detach --name "$CONTAINER" --health-interval disable "${limits[@]}" "$IMAGE" >/dev/null
run_started=$SECONDS

# From inside the container, with the image's own Node: its address is loopback there whatever the
# host's network looks like (the default keys file holds the demo key, so the server listens on
# 127.0.0.1: config/default.yaml, server.host).
healthz='fetch("http://127.0.0.1:8080/healthz").then(async (r) => { console.log(r.status, await r.text()); process.exit(r.ok ? 0 : 1); }, (e) => { console.log(String(e.cause ?? e)); process.exit(1); })'
answer=""
for _ in $(seq 1 60); do
  if [ "$(podman inspect --format '{{.State.Running}}' "$CONTAINER")" != true ]; then
    podman logs "$CONTAINER" >&2 || true
    die "the container stopped before /healthz answered"
  fi
  if answer="$(podman exec "$CONTAINER" node -e "$healthz" 2>&1)"; then break; fi
  answer="" && sleep 0.5
done
[ -n "$answer" ] || { podman logs "$CONTAINER" >&2 || true; die "/healthz did not answer within 30 s"; }
echo "GET /healthz from inside the container, $((SECONDS - run_started)) s after podman run: $answer"
echo "runs as: $(podman exec "$CONTAINER" id)"

podman healthcheck run "$CONTAINER" >/dev/null || die "the image's HEALTHCHECK failed"
echo "HEALTHCHECK: healthy"

step "stop: SIGTERM, drain"
podman stop --time 20 "$CONTAINER" >/dev/null
code="$(podman inspect --format '{{.State.ExitCode}}' "$CONTAINER")"
[ "$code" = 0 ] || { podman logs "$CONTAINER" >&2 || true; die "the server exited $code on SIGTERM"; }
echo "exited 0"

step "done: built, started, /healthz answered, stopped"
