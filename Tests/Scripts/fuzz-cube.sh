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
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fuzz-common.sh"

fuzz_setup fuzz-cube cube-fuzzer "$@"
fuzz_build CubeFuzzer "$root/Tests/Fuzz/CubeFuzzer.swift" "$root"/Sources/PhotoKernels/*.swift

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
fuzz_run "$root/Tests/Fuzz/cube.dict" "add the input as a test to Tests/PhotoKernelsTests/CubeFileTests.swift (see docs/lut.md)."
