#!/usr/bin/env bash
# The default job: installs and builds when needed (scripts/setup.sh), then trains LeNet on
# Fashion-MNIST on two CPU devices (configs/fmnist_lenet.yaml), appending per-epoch metrics to
# metrics.jsonl. Extra arguments go to cohort-train, e.g. --set epochs=2.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/apps/cohort-train --config configs/fmnist_lenet.yaml --metrics-out metrics.jsonl "$@"
