#!/bin/sh
# Builds infra/Dockerfile with Debian's buildah on a machine that cannot pull images (no registry
# reachable, no Docker engine): first a stand-in for node:24-slim from Debian bookworm (debootstrap)
# plus the repository's pinned Node 24 binary and npm from the npm registry, tagged
# docker.io/library/node:24-slim, then the real build against it. As root:
#   apt-get install -y buildah debootstrap && sh scripts/buildah-local-base.sh
set -eu
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export STORAGE_DRIVER=vfs

rootfs="$work/rootfs"
debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" http://deb.debian.org/debian
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
cp "$(readlink -f "$root/node_modules/node/bin/node")" "$rootfs/usr/local/bin/node"
(cd "$work" && npm pack npm@11 --loglevel=error >/dev/null && tar xzf npm-*.tgz)
mkdir -p "$rootfs/usr/local/lib/node_modules"
mv "$work/package" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# The machine's CA bundle, so npm and pnpm trust whatever proxy sits in front of the registry.
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
chroot "$rootfs" sh -c 'groupadd -g 1000 node && useradd -u 1000 -g node -m -s /bin/sh node'

base=$(buildah from scratch)
cp -a "$rootfs/." "$(buildah mount "$base")/"
buildah umount "$base"
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt --cmd node "$base"
buildah commit -q "$base" docker.io/library/node:24-slim
buildah rm "$base"

# --format docker keeps the HEALTHCHECK (the OCI format has none).
cd "$root"
buildah build --format docker --isolation chroot --pull=never -f infra/Dockerfile -t localhost/loops-sync:local .
