#!/usr/bin/env bash
# Installs the Debian packages the tests use (as root, or through sudo).
# Go modules, xk6 and k6 are fetched and built by the Go toolchain itself.
# With --bench it also installs what `go run ./bench` compares against
# (wrk), which CI does not need; the bench runs the catalog, so it needs
# the rest too. vegeta and benchstat are built by the bench from the
# pinned tools module tools/vegeta.
set -euo pipefail
pkgs=(redis-server chromium libxml2-utils fonts-dejavu-core prometheus shellcheck jq curl)
case "${1:-}" in
  "") ;;
  --bench) pkgs+=(wrk) ;;
  *) echo "usage: $0 [--bench]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all present (${pkgs[*]})"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
