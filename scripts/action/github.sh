#!/usr/bin/env bash
# Sourced by the action's scripts: the GitHub REST API through curl.
# Env: GITHUB_API_URL (default https://api.github.com), GITHUB_TOKEN.

# gh_api METHOD PATH [JSON_BODY]: prints the response body; fails on a
# status other than 2xx, naming it.
gh_api() {
  local method=$1 path=$2 body=${3:-} out code
  out=$(mktemp)
  local args=(-sS -o "$out" -w '%{http_code}' -X "$method"
    -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28"
    -H "Authorization: Bearer ${GITHUB_TOKEN:?GITHUB_TOKEN is needed for the GitHub API}")
  if [ -n "$body" ]; then args+=(-H "Content-Type: application/json" --data-binary @-); fi
  code=$(printf '%s' "$body" | curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$path") || { rm -f "$out"; return 1; }
  if [ "${code:0:1}" != "2" ]; then
    echo "GitHub API: $method $path: HTTP $code: $(head -c 300 "$out")" >&2
    rm -f "$out"
    return 1
  fi
  cat "$out"
  rm -f "$out"
}

# event_field JQ: a field of the event that started the workflow.
event_field() { jq -r "$1 // empty" "${GITHUB_EVENT_PATH:?}"; }
