#!/usr/bin/env bash
# Cache keys and folders of the action: Go's module and build caches keyed
# by the action's go.sum, the k6 build keyed as k6build keys it (k6 version,
# the extension's sources). hashFiles() cannot read the action's folder
# (outside the workspace), so the keys are made here.
# Env: GITHUB_ACTION_PATH, RUNNER_OS, RUNNER_TEMP, GITHUB_OUTPUT.
set -euo pipefail
root=${GITHUB_ACTION_PATH:?}
hash_files() { (cd "$root" && find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
k6_version=$(sed -n 's/^[[:space:]]*go\.k6\.io\/k6 \(v[0-9.]*\).*/\1/p' "$root/xk6-resilience/go.mod" | head -n1)
{
  echo "go=chaosrun-go-${RUNNER_OS:-Linux}-$(hash_files go.sum)"
  echo "k6=chaosrun-k6-${k6_version:-unknown}-${RUNNER_OS:-Linux}-$(hash_files xk6-resilience tools/xk6/go.sum)"
  echo "gomodcache=$(go env GOMODCACHE)"
  echo "gocache=$(go env GOCACHE)"
  echo "k6-cache=${RUNNER_TEMP:?}/chaosrun-cache"
} >> "${GITHUB_OUTPUT:?}"
