#!/usr/bin/env bash
# Install evigate with its test dependencies into ./.venv and run the whole test suite:
#   1. lint (ruff), 2. the fast offline suite, 3. the slow suite (real local model, headless browser, real servers)
#   on a budget.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
# llama-cpp-python compiles llama.cpp from source on first install: about 5-10 minutes on 2 cores.
.venv/bin/pip install -q -e '.[dev]'

# The MLflow UI and workbench tests drive Debian's headless Chromium (CJK fonts: the pages' Chinese text in the
# screenshots); install it where we are allowed to (root, apt available).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null) \
    || echo "chromium could not be installed: the browser test will skip"
fi

# The connector tests start a real Prometheus (promtool loads its data) and a real PostgreSQL 15 on 127.0.0.1.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  [ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
  if [ "${#missing[@]}" -gt 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null) || echo "${missing[*]} could not be installed: the server tests will skip"
  fi
fi

.venv/bin/ruff check .
# mypy: rules/ and signatures/ clean with no type: ignore; the rest may not grow its error count (pyproject).
.venv/bin/python scripts/typecheck.py

# pytest exits 5 when a selection is empty; that is not a failure of the suite.
run_pytest() { .venv/bin/pytest "$@" || { code=$?; [ "$code" -eq 5 ] || return "$code"; }; }

run_pytest -q -m "not local_model and not browser and not servers and not model_server"
# Slow tests, with a hard time budget: the real local model end to end, the MLflow UI in Chromium, real servers
# (Prometheus, PostgreSQL 15, an MCP server) and real model servers (llama_cpp.server, misbehaving HTTP servers).
timeout --signal=INT 3600 .venv/bin/pytest -q -m "local_model or browser or servers or model_server" \
  || { code=$?; [ "$code" -eq 5 ] || exit "$code"; }
