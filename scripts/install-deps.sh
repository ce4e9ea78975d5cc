#!/usr/bin/env bash
# Installs the Debian packages the tests use (as root, or through sudo).
# Go modules, xk6 and k6 are fetched and built by the Go toolchain itself.
#
#   scripts/install-deps.sh              install what is missing (sudo may ask for a password)
#   scripts/install-deps.sh --no-prompt  what `make test` runs first: install what is missing
#                                        only where no password is needed (root, or sudo -n),
#                                        else fail at once naming the command to run; then
#                                        check that a Docker engine answers
#   scripts/install-deps.sh --bench      also what `go run ./bench` compares against (wrk)
#
# Each package and the tests that need it: redis-server (the cache and quota
# targets, cache-slow-redis, the Docker images chaosrun-redis:local and
# redis:7-bookworm-local), postgresql-15 and nginx-light (the Compose
# project's images postgres:15-bookworm-local and nginx:1.22-bookworm-local,
# built by internal/testimages),
# chromium (the game-day page in a real browser), libxml2-utils (xmllint:
# JUnit XML against its schema), fonts-dejavu-core (text in the plots),
# prometheus (the remote-write and scrape exports), shellcheck (the action's
# scripts and the workflows' shell), jq and curl (the GitHub action's steps).
# vegeta and benchstat are built by the bench from the pinned tools module
# tools/vegeta.
set -euo pipefail
pkgs=(redis-server postgresql-15 nginx-light chromium libxml2-utils fonts-dejavu-core prometheus shellcheck jq curl)
prompt=yes
case "${1:-}" in
  "") ;;
  --no-prompt) prompt=no ;;
  --bench) pkgs+=(wrk) ;;
  *) echo "usage: $0 [--no-prompt | --bench]" >&2; exit 2 ;;
esac

# check_docker fails unless a Docker engine answers (the --testbed docker
# tests need one; they never pull, so it need not reach a registry).
check_docker() {
  if command -v docker >/dev/null 2>&1; then
    docker info --format 'install-deps: docker {{.ServerVersion}} answers' && return 0
  else
    sock="${DOCKER_HOST:-unix:///var/run/docker.sock}"
    sock="${sock#unix://}"
    if [ -S "$sock" ] && curl -fsS --max-time 5 --unix-socket "$sock" http://docker/_ping >/dev/null; then
      echo "install-deps: a docker engine answers at $sock"
      return 0
    fi
  fi
  echo "install-deps: no Docker engine answers: start it (or set DOCKER_HOST); the --testbed docker tests need one" >&2
  return 1
}

if ! command -v dpkg >/dev/null 2>&1; then
  echo "install-deps: not a Debian-based system (no dpkg); install these packages' programs by hand: ${pkgs[*]}" >&2
  exit 1
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all present (${pkgs[*]})"
  if [ "$prompt" = no ]; then check_docker; fi
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
  if [ "$prompt" = no ] && ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
    echo "install-deps: the tests need Debian packages that are missing: ${missing[*]}" >&2
    echo "install-deps: run this once (it asks for your password), then make test again:" >&2
    echo "  sudo scripts/install-deps.sh" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
if [ "$prompt" = no ]; then check_docker; fi
