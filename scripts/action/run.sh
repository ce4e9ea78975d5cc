#!/usr/bin/env bash
# Runs the scenarios, writes the Markdown summary and the JUnit results to
# the job summary, and records chaosrun's exit code as the output code
# (0 all held, 1 a breach, 2 a bad scenario, 3 a harness error).
# chaosrun runs in the action's folder (it finds the k6 extension and the
# bundled scripts there); scenarios and the results folder are resolved
# against the workspace.
# Env: SCENARIOS (space-separated files or folders), OUT_DIR, RUN_ARGS,
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
