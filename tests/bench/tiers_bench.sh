#!/usr/bin/env bash
# Sleep and wake of a 16 GiB model directory between GPU 0 and host memory, tensorfs beside
# torch's pageable .to() and pinned copy_, in one run (issue 35, docs/tiers.md):
#   tests/bench/tiers_bench.sh [BUILD] [N] [MIB] [BIG_MIB]   (default build 64 256 0)
# BIG_MIB: two more tensors of that size (an LLM's embedding and lm_head, larger than a
# pool's segment: carved from its runs).
# Prints a Markdown table (tests/bench/tiers_bench.py). Needs the GPU machine: BUILD built
# with CUDA, redis-server, python3 with torch.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
exec python3 tests/bench/tiers_bench.py --build "$B" --n "${2:-64}" --mib "${3:-256}" --big-mib "${4:-0}"
