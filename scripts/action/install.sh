#!/usr/bin/env bash
# Installs chaosrun from the action's own checkout (the action's ref) into
# RUNNER_TEMP and puts it on the job's PATH; with INSTALL_DEPS=true also the
# Debian packages the catalog uses (scripts/install-deps.sh).
# Env: GITHUB_ACTION_PATH, RUNNER_TEMP, GITHUB_PATH, INSTALL_DEPS.
set -euo pipefail
bin="${RUNNER_TEMP:?}/chaosrun-bin"
mkdir -p "$bin"
(cd "${GITHUB_ACTION_PATH:?}" && GOBIN="$bin" go install ./cmd/chaosrun)
echo "$bin" >> "${GITHUB_PATH:?}"
"$bin/chaosrun" version
if [ "${INSTALL_DEPS:-true}" = "true" ]; then
  "$GITHUB_ACTION_PATH/scripts/install-deps.sh"
fi
