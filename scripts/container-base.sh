#!/usr/bin/env bash
# Build a Debian root file system with python3 as a tarball, for a container base where no registry
# image can be pulled (tests/container/test_container_image.py imports it with `podman import` and
# builds the Dockerfile on it through --build-arg BASE=...).
#   bash scripts/container-base.sh OUTPUT.tar
# Needs root and mmdebstrap (apt-get install mmdebstrap). The suite is this machine's Debian release
# (HIPPO_BASE_SUITE to choose), the mirror the first Debian archive in this machine's apt sources
# (HIPPO_BASE_MIRROR to choose), http://deb.debian.org/debian when there is none.
set -euo pipefail

out=${1:?usage: bash scripts/container-base.sh OUTPUT.tar}
# What the Dockerfile needs of its base: python3 with venv (pip comes with the venv), useradd (passwd,
# in every Debian system) and the certificate authorities.
PACKAGES=python3,python3-venv,python3-pip,ca-certificates

suite=${HIPPO_BASE_SUITE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}
suite=${suite:-bookworm}

host_mirror() {
    # deb822 files ("URIs: http://deb.debian.org/debian") and one-line ones ("deb http://... bookworm main").
    local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list)
    for file in "${files[@]}"; do
        [[ -f $file ]] || continue
        grep -hoE '^(URIs:|deb)[[:space:]]+[^[:space:]]+/debian/?([[:space:]]|$)' "$file" \
            | awk '{print $2}' | head -n 1
    done | head -n 1 || true  # none found: the default below
}
mirror=${HIPPO_BASE_MIRROR:-$(host_mirror)}
mirror=${mirror:-http://deb.debian.org/debian}

echo "hippo: building a $suite base with $PACKAGES from $mirror into $out" >&2
mkdir -p "$(dirname "$out")"
partial="$out.partial"
mmdebstrap --quiet --variant=minbase --include="$PACKAGES" --format=tar \
    "$suite" "$partial" "deb $mirror $suite main" "deb $mirror $suite-updates main"
mv "$partial" "$out"
