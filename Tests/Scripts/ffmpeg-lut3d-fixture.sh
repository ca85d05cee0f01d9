#!/usr/bin/env bash
# Regenerates the ffmpeg lut3d reference outputs that ColorCubeFFmpegTests compares against.
#
#   Tests/Scripts/ffmpeg-lut3d-fixture.sh
#
# 1. Writes, with a small standalone Swift program, the two inputs the test rebuilds in
#    memory: a 17³ .cube file sampled from a nonlinear closed form (in the exact text
#    CubeFile.encoded() produces) and a 32×32 planar float image (gbrpf32le: the G, B and
#    R planes). The test checks their SHA-256 against the digests printed here, so it
#    knows it gives our kernel the same table and pixels ffmpeg saw.
# 2. Runs ffmpeg's lut3d filter on them, float in and float out (ffmpeg's 8-bit output
#    truncates instead of rounding), once per interpolation:
#      ffmpeg -f rawvideo -pix_fmt gbrpf32le -s 32x32 -i input.raw \
#             -vf lut3d=file=table.cube:interp=tetrahedral \
#             -f rawvideo -pix_fmt gbrpf32le tetrahedral.raw
# 3. Copies the outputs to Tests/PhotoKernelsTests/Fixtures/ffmpeg-lut3d/ (12 KB each).
#
# Needs swift and ffmpeg (Debian: apt-get install ffmpeg). Exits 2 if either is missing.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"
fixtures="$root/Tests/PhotoKernelsTests/Fixtures/ffmpeg-lut3d"
for tool in swift ffmpeg; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found on PATH" >&2; exit 2; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/inputs.swift" <<'SWIFT'
import Foundation
// Keep in step with ColorCubeFFmpegTests: the same closed form, grid and image.
func closedForm(_ c: SIMD3<Double>) -> SIMD3<Double> {
    let r = c.x, g = c.y, b = c.z
    return SIMD3(r * r * (1 - 0.3 * g) + 0.2 * b,
                 0.5 * (g + r * b) + 0.25 * g * g,
                 b * (0.6 + 0.4 * r) - 0.1 * g + 0.05)
}
func pixel(_ x: Int, _ y: Int) -> SIMD3<Float> {
    let r: Float = y == 0 ? -0.25 : Float(x) / 31
    let g = Float(y) / 31
    let b: Float = x == 31 ? 1.25 : Float((x * 7 + y * 13) % 32) / 31
    return SIMD3(r, g, b)
}
let n = 17
var text = "TITLE \"PhotoKernels ffmpeg lut3d fixture\"\nLUT_3D_SIZE \(n)\nDOMAIN_MIN 0.0 0.0 0.0\nDOMAIN_MAX 1.0 1.0 1.0\n"
for k in 0..<n { for j in 0..<n { for i in 0..<n {
    func grid(_ i: Int) -> Double { i == n - 1 ? 1 : 0 + Double(i) * (1 - 0) / Double(n - 1) }
    let o = closedForm(SIMD3(grid(i), grid(j), grid(k)))
    text += "\(Float(o.x)) \(Float(o.y)) \(Float(o.z))\n"
} } }
try! Data(text.utf8).write(to: URL(fileURLWithPath: CommandLine.arguments[1] + "/table.cube"))
var planes = Data()
for plane in [1, 2, 0] {  // gbrp: G, B, R
    for y in 0..<32 { for x in 0..<32 {
        withUnsafeBytes(of: pixel(x, y)[plane].bitPattern.littleEndian) { planes.append(contentsOf: $0) }
    } }
}
try! planes.write(to: URL(fileURLWithPath: CommandLine.arguments[1] + "/input.raw"))
SWIFT

echo "== writing the inputs"
swift "$work/inputs.swift" "$work"
for interp in tetrahedral trilinear; do
    echo "== ffmpeg lut3d interp=$interp"
    ffmpeg -hide_banner -loglevel error -y -f rawvideo -pix_fmt gbrpf32le -s 32x32 -i "$work/input.raw" \
        -vf "lut3d=file=$work/table.cube:interp=$interp" -f rawvideo -pix_fmt gbrpf32le "$work/$interp.raw"
done
mkdir -p "$fixtures"
cp "$work/tetrahedral.raw" "$fixtures/tetrahedral-32x32-gbrpf32le.raw"
cp "$work/trilinear.raw" "$fixtures/trilinear-32x32-gbrpf32le.raw"
echo "== SHA-256 of the inputs (ColorCubeFFmpegTests checks these)"
sha256sum "$work/table.cube" "$work/input.raw" | sed "s|$work/||"
ffmpeg -hide_banner -version | head -n 1
