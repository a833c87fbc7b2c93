#!/usr/bin/env bash
# The whole test suite on a fresh machine: system services, npm dependencies, then every test.
# Ends with the line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-services.sh
npm ci --no-audit --no-fund --loglevel=error
npm test
