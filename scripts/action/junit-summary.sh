#!/usr/bin/env bash
# Prints the JUnit results below a results folder as Markdown: totals and
# one row per test case (the combined junit.xml of a folder run, else each
# scenario's). Needs xmllint (Debian libxml2-utils).
# Usage: junit-summary.sh RESULTS_DIR
set -euo pipefail
dir=${1:?usage: junit-summary.sh RESULTS_DIR}
files=()
if [ -f "$dir/junit.xml" ]; then
  files=("$dir/junit.xml")
else
  while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$dir" -mindepth 2 -maxdepth 2 -name junit.xml -print0 | sort -z)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "### JUnit: no junit.xml in $(basename "$dir")"
  exit 0
fi
x() { xmllint --xpath "$2" "$1" 2>/dev/null || true; }
cell() { tr '\n|' ' /' | sed 's/[[:space:]]*$//' | cut -c1-300; }
tests=0 failures=0 errors=0 rows=""
for f in "${files[@]}"; do
  tests=$((tests + $(x "$f" 'count(//testcase)')))
  failures=$((failures + $(x "$f" 'count(//testcase[failure])')))
  errors=$((errors + $(x "$f" 'count(//testcase[error])')))
  n=$(x "$f" 'count(//testcase)')
  for ((i = 1; i <= n; i++)); do
    tc="(//testcase)[$i]"
    suite=$(x "$f" "string($tc/../@name)" | cell)
    name=$(x "$f" "string($tc/@name)" | cell)
    time=$(x "$f" "string($tc/@time)")
    msg=$(x "$f" "string($tc/failure/@message)" | cell)
    err=$(x "$f" "string($tc/error/@message)" | cell)
    result="✅ pass"
    if [ -n "$msg" ]; then result="❌ fail"; fi
    if [ -n "$err" ]; then result="⚠️ error"; msg=$err; fi
    rows+="| $suite | $name | $result | ${time}s | $msg |"$'\n'
  done
done
echo "### JUnit: $tests tests, $failures failures, $errors errors"
echo
echo "| suite | test | result | time | message |"
echo "|---|---|---|---|---|"
printf '%s' "$rows"
