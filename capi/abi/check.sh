#!/bin/sh
# Runs capi/tests/abi.rs without Cargo (it uses only std): builds it with rustc's
# built-in test harness and runs it.  Usage: sh capi/abi/check.sh  (from anywhere)
set -eu
capi=$(cd "$(dirname "$0")/.." && pwd)
out=${TMPDIR:-/tmp}/rocwasm-capi-abi-check.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
CARGO_MANIFEST_DIR="$capi" rustc --edition 2021 --test "$capi/tests/abi.rs" -o "$out/abi"
"$out/abi"
