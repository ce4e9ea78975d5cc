#!/usr/bin/env bash
# Runs the scenarios, writes the Markdown summary and the JUnit results to
# the job summary, and records chaosrun's exit code as the output code
# (0 all held, 1 a breach, 2 a bad scenario, 3 a harness error) and whether
# to upload the results as ARTIFACT (output upload): always, but under the
# baseline's name (BASELINE_ARTIFACT) only for code 0 or 1, since a bad
# scenario or a harness error leaves records no comparison can use.
# chaosrun runs in the action's folder (it finds the k6 extension and the
# bundled scripts there); scenarios and the results folder are resolved
# against the workspace.
# Env: SCENARIOS (space-separated files or folders), OUT_DIR, RUN_ARGS,
# ARTIFACT, BASELINE_ARTIFACT,
# CHAOSRUN (the binary, default chaosrun on PATH), GITHUB_ACTION_PATH,
# GITHUB_WORKSPACE, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ws=${GITHUB_WORKSPACE:-$PWD}
abs() { case "$1" in /*) echo "$1" ;; *) echo "$ws/$1" ;; esac; }
out=$(abs "${OUT_DIR:-chaosrun-results}")
read -r -a scenarios <<< "${SCENARIOS:-scenarios/}"
read -r -a extra <<< "${RUN_ARGS:-}"
paths=()
for s in "${scenarios[@]}"; do paths+=("$(abs "$s")"); done
set +e
(cd "${GITHUB_ACTION_PATH:?}" && "${CHAOSRUN:-chaosrun}" run --quiet --out-dir "$out" "${extra[@]}" "${paths[@]}")
code=$?
set -e
echo "code=$code" >> "${GITHUB_OUTPUT:?}"
echo "out-dir=$out" >> "$GITHUB_OUTPUT"
upload=true
if [ -n "${ARTIFACT:-}" ] && [ "$ARTIFACT" = "${BASELINE_ARTIFACT:-}" ] && [ "$code" != "0" ] && [ "$code" != "1" ]; then
  upload=false
  echo "No baseline uploaded: chaosrun run exited $code (2: a bad scenario or flags, 3: a harness error), so $ARTIFACT would hold records no comparison can use." >> "${GITHUB_STEP_SUMMARY:?}"
  echo "not uploading $ARTIFACT: chaosrun run exited $code"
fi
echo "upload=$upload" >> "$GITHUB_OUTPUT"
{
  if [ -f "$out/summary.md" ]; then
    cat "$out/summary.md"
  else
    find "$out" -mindepth 2 -maxdepth 2 -name summary.md -print0 | sort -z | xargs -0 -r cat
  fi
  echo
  "$here/junit-summary.sh" "$out"
} >> "${GITHUB_STEP_SUMMARY:?}"
echo "chaosrun run exited $code"
