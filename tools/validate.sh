#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the thesis validation suite on RTL and model
# with the prototype's 2-clock SRAM flaw, printing the cycle-accuracy report (thesis Tables 5.1-5.4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
mkdir -p build/reports
set +e
./build/s2cosim regress vectors/thesis_qpe_validation.csv --flaw sram2clk \
  --json build/reports/thesis_qpe_validation.json --csv build/reports/thesis_qpe_validation.csv "$@"
status=$?
set -e
echo "reports: build/reports/thesis_qpe_validation.json, build/reports/thesis_qpe_validation.csv"
exit $status
