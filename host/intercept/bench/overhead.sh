#!/bin/sh
# Added nanoseconds per intercepted HIP call on the simulated runtime:
# the same program, in one invocation of this script, (1) without the tool,
# (2) preloaded but not tracing (no ROCWASM_RUN), (3) tracing HIP_RUNTIME_API
# into a buffer (CSV output). Not a test: timings vary with the machine.
#
#   host/intercept/bench/overhead.sh [target-dir] [calls]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-$here/../../../target}
calls=${2:-200000}
lib=${ROCWASM_INTERCEPT_LIB:-$target/release/librocwasm_intercept.so}
sim=$target/sim/lib
work=$(mktemp -d)
gcc -O2 -D__HIP_PLATFORM_AMD__ "$here/overhead.c" -lamdhip64 -o "$work/overhead"
cat > "$work/run.json" <<JSON
{"version":1,"output_dir":"$work/out","formats":["csv"],"kinds":["HIP_RUNTIME_API"]}
JSON
base=$(LD_LIBRARY_PATH=$sim "$work/overhead" "$calls")
idle=$(LD_LIBRARY_PATH=$sim LD_PRELOAD=$lib "$work/overhead" "$calls")
traced=$(LD_LIBRARY_PATH=$sim LD_PRELOAD=$lib ROCWASM_RUN=$work/run.json "$work/overhead" "$calls")
echo "tool: $lib"
echo "ns per hipGetDevice (median of 9 x $calls calls)"
echo "  no tool:            $base"
echo "  preloaded, idle:    $idle   (+$(echo "$idle - $base" | bc) ns)"
echo "  tracing HIP to CSV: $traced   (+$(echo "$traced - $base" | bc) ns)"
rm -rf "$work"
