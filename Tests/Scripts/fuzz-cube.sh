#!/usr/bin/env bash
# Fuzzes the .cube reader (and the LUT kernel on what it reads) with libFuzzer for a given time.
#
#   Tests/Scripts/fuzz-cube.sh [SECONDS] [extra libFuzzer flags...]     (default 600 s)
#
# 1. Builds Tests/Fuzz/CubeFuzzer.swift together with Sources/PhotoKernels/*.swift into
#    .build/fuzz-cube/cube-fuzzer (swiftc -sanitize=fuzzer,address; outside SwiftPM, whose
#    manifest cannot ask for sanitizer flags without unsafeFlags).
# 2. Fills the working corpus .build/fuzz-cube/corpus/ with a few small valid and invalid
#    .cube seeds. The corpus is kept between runs, and libFuzzer adds the inputs that find
#    new coverage to it.
# 3. Runs the fuzzer for SECONDS with the .cube dictionary (Tests/Fuzz/cube.dict),
#    writing crash-/timeout-/oom-/leak- artifacts to .build/fuzz-cube/artifacts/.
#
# Exits 0 when the run ends without a finding, 1 when it leaves a new artifact (and prints
# how to reproduce it), 2 on a usage or build error. See docs/lut.md.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"

usage() {
    echo "usage: $0 [SECONDS] [extra libFuzzer flags...]   (SECONDS defaults to 600)" >&2
    exit 2
}

seconds="${1:-600}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    usage
fi
shift $(($# > 0 ? 1 : 0))

swiftc="${SWIFTC:-$(command -v swiftc || true)}"
if [[ -z "$swiftc" ]]; then
    echo "error: swiftc not found on PATH (or set SWIFTC=/path/to/swiftc)" >&2
    exit 2
fi
toolchain_bin="$(dirname "$(readlink -f "$swiftc")")"

work="$root/.build/fuzz-cube"
binary="$work/cube-fuzzer"
corpus="$work/corpus"
artifacts="$work/artifacts"
logs="$work/logs"
mkdir -p "$corpus" "$artifacts" "$logs"

# --- 1. Build -----------------------------------------------------------------------
# One module holds the library and the harness, so the harness needs no `import PhotoKernels`.
# lld avoids gold's flood of "Cannot export local symbol '__asan_check_...'" warnings.
echo "== building $binary"
sources=("$root"/Sources/PhotoKernels/*.swift)
if ! "$swiftc" -sanitize=fuzzer,address -use-ld=lld -parse-as-library -O -swift-version 6 \
    -module-name CubeFuzzer "${sources[@]}" "$root/Tests/Fuzz/CubeFuzzer.swift" \
    -o "$binary.tmp"; then
    echo "error: building the fuzzer failed (see the compiler output above)" >&2
    exit 2
fi
mv -f "$binary.tmp" "$binary"

# --- 2. Corpus ----------------------------------------------------------------------
echo "== corpus $corpus"
# Tiny files of every shape (printf %b expands \n, \r, \t and \xHH).
seed() { printf '%b' "$2" >"$corpus/seed-$1"; }
id2='0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n'
seed 3d.cube           "TITLE \"two\"\nLUT_3D_SIZE 2\n$id2"
seed 3d-domain.cube    "# c\nLUT_3D_SIZE 2\nDOMAIN_MIN -0.5 0 0.25\nDOMAIN_MAX 1.5 2 0.75\n$id2"
seed 3d-range.cube     "LUT_3D_INPUT_RANGE 0 4\r\nLUT_3D_SIZE 2\r\n0 0 0\r\n1 0 0\r\n0 1 0\r\n1 1 0\r\n0 0 1\r\n1 0 1\r\n0 1 1\r\n1 1 1"
seed 3d-values.cube    "LUT_3D_SIZE 2\n0.5 1e-05 -0.25\n3.0e2 0.125 .5\n0 1 0\n1 1 0\n\t0 0 1\n1 0 1 \n0 1 1\n1 1 1\n"
seed 1d.cube           "\xef\xbb\xbfLUT_1D_SIZE 3\n0 0 0\n0.5 0.25 0.125\n1 1 1\n"
seed 1d-range.cube     "TITLE \"curve\"\nLUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE -1 2\n1 0 0.5\n0 1 0.5\n"
seed bad-keyword.cube  "LUT_3D_SIZE 2\nLUT_IN_VIDEO_RANGE\n$id2"
seed bad-count.cube    "LUT_3D_SIZE 2\n0 0 0\n1 0 0 0\n"
seed bad-domain.cube   "LUT_3D_SIZE 2\nDOMAIN_MIN 1 0 0\nDOMAIN_MAX 1 1 1\n$id2"
seed bad-value.cube    "LUT_3D_SIZE 2\nnan 0 0\n1e39 0 0\n"

# --- 3. Fuzz ------------------------------------------------------------------------
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
log="$logs/fuzz-$stamp.log"
list_artifacts() { find "$artifacts" -maxdepth 1 -type f -printf '%f\n' | sort; }
before="$(list_artifacts)"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$toolchain_bin/llvm-symbolizer}"

echo "== fuzzing for $seconds s (log: $log)"
# One process, one thread (libFuzzer's default; -jobs/-workers stay at 1 on a 2-core
# machine). Relative artifact prefix as documented; run from the repository root.
cd "$root"
status=0
"$binary" \
    -max_total_time="$seconds" \
    -rss_limit_mb=2048 \
    -timeout=5 \
    -max_len=65536 \
    -dict="$root/Tests/Fuzz/cube.dict" \
    -artifact_prefix=.build/fuzz-cube/artifacts/ \
    -print_final_stats=1 \
    "$@" \
    "$corpus" 2>&1 | tee "$log" || status=$?

new_artifacts=()
while IFS= read -r name; do
    case "$name" in
        crash-* | timeout-* | oom-* | leak-*) new_artifacts+=(".build/fuzz-cube/artifacts/$name") ;;
    esac
done < <(comm -13 <(printf '%s\n' "$before") <(list_artifacts))

echo
echo "== summary"
grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true
grep -E '^Done [0-9]+ runs' "$log" | tail -n 1 || true

if ((${#new_artifacts[@]} > 0)); then
    echo "FINDING: the fuzzer left ${#new_artifacts[@]} artifact(s):" >&2
    for artifact in "${new_artifacts[@]}"; do
        echo "  $artifact" >&2
    done
    cat >&2 <<EOF

Reproduce (from $root):
  .build/fuzz-cube/cube-fuzzer ${new_artifacts[0]}
Minimise a crash:
  .build/fuzz-cube/cube-fuzzer -minimize_crash=1 -max_total_time=60 -artifact_prefix=.build/fuzz-cube/artifacts/minimized- ${new_artifacts[0]}
Show the bytes:
  od -A d -c ${new_artifacts[0]} | head -n 20
Then add the input as a test to Tests/PhotoKernelsTests/CubeFileTests.swift (see docs/lut.md).
EOF
    exit 1
fi
if ((status != 0)); then
    echo "error: the fuzzer exited with status $status but left no artifact; see $log" >&2
    exit 2
fi
echo "OK: no crash, timeout, out-of-memory or leak in $seconds s."
