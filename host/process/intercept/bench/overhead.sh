#!/bin/sh
# Added nanoseconds per intercepted HIP call on the simulated runtime, in one
# invocation of this script: the same program (1) without the tool, (2)
# preloaded but not tracing (no ROCWASM_RUN), (3) tracing HIP_RUNTIME_API into
# the default 1 MiB LOSSLESS buffer with CSV output. Not a test: timings vary
# with the machine.
#
# Bursts of calls that fit in the buffer, with a pause after each for the
# delivery thread, give what the application thread pays per call; one long
# burst gives the sustained rate, which a LOSSLESS buffer ties to how fast the
# sinks write (CSV here).
#
#   host/process/intercept/bench/overhead.sh [target-dir] [burst] [bursts]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-$here/../../../../target}
burst=${2:-4000}
bursts=${3:-301}
sustained=200000
lib=${ROCWASM_INTERCEPT_LIB:-$target/release/librocwasm_intercept.so}
sim=$target/sim/lib
[ -f "$lib" ] || { echo "overhead.sh: no $lib (cargo build --release -p rocwasm-intercept)" >&2; exit 1; }
[ -f "$sim/libamdhip64.so" ] || { echo "overhead.sh: no simulated runtime in $sim (cargo xtask build-sim)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -D__HIP_PLATFORM_AMD__ "$here/overhead.c" -L"$sim" -lamdhip64 -ldl -o "$work/overhead"
cat > "$work/run.json" <<JSON
{"version":3,"output":{"directory":"$work/out","formats":["csv"],"kinds":["HIP_RUNTIME_API"]},"buffer":{"size":1048576,"watermark":524288,"policy":"Lossless"}}
JSON
run() { LD_LIBRARY_PATH=$sim "$@"; }
traced_rows() {
    rows=$(($(cat "$work"/out/*hip_api_trace.csv 2>/dev/null | wc -l) - 1))
    [ "$rows" -gt "$1" ] || { echo "overhead.sh: the traced run wrote $rows HIP rows (expected > $1): tracing is not on" >&2; exit 1; }
    rm -rf "$work/out"
}
base=$(run "$work/overhead" "$burst" "$bursts" 5000)
idle=$(LD_PRELOAD=$lib run "$work/overhead" "$burst" "$bursts" 5000)
traced=$(LD_PRELOAD=$lib ROCWASM_RUN=$work/run.json run "$work/overhead" "$burst" "$bursts" 5000)
traced_rows $((burst * bursts))
paired_5ms=$(LD_PRELOAD=$lib ROCWASM_RUN=$work/run.json run "$work/overhead" "$burst" "$bursts" 5000 paired)
traced_rows $((burst * bursts))
paired_1ms=$(LD_PRELOAD=$lib ROCWASM_RUN=$work/run.json run "$work/overhead" "$burst" "$bursts" 1000 paired)
traced_rows $((burst * bursts))
s_base=$(run "$work/overhead" "$sustained" 1 0)
s_traced=$(LD_PRELOAD=$lib ROCWASM_RUN=$work/run.json run "$work/overhead" "$sustained" 1 0)
traced_rows "$sustained"
cpu() { echo "${1% *}"; }
wall() { echo "${1#* }"; }
add() { echo "$1 - $2" | bc; }
row() { # label, run, baseline run
    if [ -z "${3:-}" ]; then
        printf '  %-20s %7s %7s\n' "$1" "$(cpu "$2")" "$(wall "$2")"
    else
        printf '  %-20s %7s %7s   (+%s cpu, +%s wall)\n' "$1" "$(cpu "$2")" "$(wall "$2")" \
            "$(add "$(cpu "$2")" "$(cpu "$3")")" "$(add "$(wall "$2")" "$(wall "$3")")"
    fi
}
echo "tool: $lib"
echo "ns per hipGetDevice: the calling thread's CPU time, and wall time"
echo "median of $bursts bursts of $burst calls (5 ms pause after each):"
row "no tool:" "$base"
row "preloaded, idle:" "$idle" "$base"
row "tracing HIP to CSV:" "$traced" "$base"
echo "sustained, one burst of $sustained calls (wall time bound by the CSV writer under LOSSLESS):"
row "no tool:" "$s_base"
row "tracing HIP to CSV:" "$s_traced" "$s_base"
echo "paired in one traced process: the runtime's own hipGetDevice vs the interposer, bursts alternating"
echo "(CPU ns per call, medians; added = median of the per-pair differences):"
paired_row() { # label, "direct traced added"
    set -- "$1" $2
    printf '  %-20s %7s %7s   (+%s)\n' "$1" "$2" "$3" "$4"
}
paired_row "5 ms pauses:" "$paired_5ms"
paired_row "1 ms pauses:" "$paired_1ms"
