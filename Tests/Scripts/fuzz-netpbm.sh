#!/usr/bin/env bash
# Fuzzes the Netpbm reader with libFuzzer for a given time.
#
#   Tests/Scripts/fuzz-netpbm.sh [SECONDS] [extra libFuzzer flags...]     (default 600 s)
#
# 1. Builds Tests/Fuzz/NetpbmFuzzer.swift together with Sources/Netpbm/*.swift into
#    .build/fuzz/netpbm-fuzzer (swiftc -sanitize=fuzzer,address; outside SwiftPM, whose
#    manifest cannot ask for sanitizer flags without unsafeFlags).
# 2. Fills the working corpus .build/fuzz/corpus/ with every file of
#    ../shared/corpus/pnm-public/ (flattened) and a few tiny P1–P7 seeds. The corpus is kept
#    between runs, and libFuzzer adds the inputs that find new coverage to it.
# 3. Runs the fuzzer for SECONDS with the Netpbm dictionary (Tests/Fuzz/netpbm.dict),
#    writing crash-/timeout-/oom-/leak- artifacts to .build/fuzz/artifacts/.
#
# Exits 0 when the run ends without a finding, 1 when it leaves a new artifact (and prints
# how to reproduce it), 2 on a usage or build error. See docs/testing.md.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fuzz-common.sh"

fuzz_setup fuzz netpbm-fuzzer "$@"
shared_corpus="$root/../shared/corpus/pnm-public"
fuzz_build NetpbmFuzzer "$root/Tests/Fuzz/NetpbmFuzzer.swift" "$root"/Sources/Netpbm/*.swift

# --- 2. Corpus ----------------------------------------------------------------------
echo "== corpus $corpus"
if [[ -d "$shared_corpus" ]]; then
    copied=0
    while IFS= read -r -d '' file; do
        relative="${file#"$shared_corpus"/}"
        cp -f "$file" "$corpus/pnm-public__${relative//\//__}"
        copied=$((copied + 1))
    done < <(find "$shared_corpus" -type f -print0)
    echo "   $copied files from $shared_corpus"
else
    echo "warning: $shared_corpus not found; fuzzing from the seeds and the kept corpus only" >&2
fi

# Tiny valid files of every format (printf %b expands \n, \r and \xHH).
seed() { printf '%b' "$2" >"$corpus/seed-$1"; }
seed p1.pbm            'P1\n# plain bitmap\n3 2\n0 1 0\n101\n'
seed p2.pgm            'P2\n2 2\n15\n0 15\n7 3\n'
seed p2-16.pgm         'P2 2 1 65535 0 65535\n'
seed p3.ppm            'P3\n1 2\n255\n255 0 0\n0 0 255\n'
seed p4.pbm            'P4\n9 2\n\xff\x80\x00\x7f'
seed p5.pgm            'P5\n2 2\n255\n\x00\xff\x10\x20'
seed p5-16.pgm         'P5\n2 1\n65535\n\x12\x34\xff\xff'
seed p5-maxval-1023.pgm 'P5 1 2 1023\n\x03\xff\x00\x01'
seed p6.ppm            'P6\n1 1\n255\n\x01\x02\x03'
seed p6-16.ppm         'P6 1 1 65535#c\n\x00\x01\x00\x02\xff\xfe'
seed p7-rgba.pam       'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n\x01\x02\x03\x04'
seed p7-gray16.pam     'P7\n# comment\nMAXVAL 65535\nDEPTH 1\nWIDTH 2\nHEIGHT 1\nTUPLTYPE GRAYSCALE\nENDHDR\n\x00\x10\xff\xff'
seed p7-bw.pam         'P7\r\nWIDTH 3\r\nHEIGHT 1\r\nDEPTH 1\r\nMAXVAL 1\r\nTUPLTYPE BLACKANDWHITE\r\nENDHDR\r\n\x00\x01\x00'
seed p7-custom.pam     'P7\nWIDTH 1\nHEIGHT 1\nDEPTH 5\nMAXVAL 7\nTUPLTYPE CMYK\nTUPLTYPE EXTRA\nENDHDR\n\x01\x02\x03\x04\x05'
seed stream.pnm        'P5\n1 1\n255\n\x07\nP4 8 1\n\xaa\n\nP7\nWIDTH 1\nHEIGHT 1\nDEPTH 2\nMAXVAL 3\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n\x01\x03'

# --- 3. Fuzz ------------------------------------------------------------------------
fuzz_run "$root/Tests/Fuzz/netpbm.dict" "add a test to Tests/NetpbmTests/FuzzRegressionTests.swift (see docs/testing.md)."
