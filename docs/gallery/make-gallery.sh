#!/usr/bin/env bash
# Regenerates the gallery: every PNG in docs/gallery/, the warm-film LUT
# docs/gallery/warm-film.cube, and the tables of docs/gallery.md between its
# "gallery:begin" and "gallery:end" markers.
#
#   docs/gallery/make-gallery.sh
#
# The pictures are made by the release build of photokernels, run exactly as the
# tables show it; netpbm converts them to PNG for the web pages (the package itself
# reads and writes Netpbm only) and cuts and reduces the demo photo. Running the
# script twice gives the same bytes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
page="$root/docs/gallery.md"

for tool in pnmtopng pamcut pamscale; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "make-gallery.sh: '$tool' not found; it comes with netpbm (apt-get install netpbm)" >&2
        exit 69
    fi
done

(cd "$root" && swift build -c release --product photokernels)
PATH="$root/.build/release:$PATH"
export LC_ALL=C

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The thumbnail size: the demo photo (1000×800) reduced 4× by area.
size_w=250
size_h=200

# warm-film.cube: a 17³ grade that no matrix or curve can express, because its
# colour shift depends on the tone: teal shadows and amber highlights (split toning),
# a touch less saturation, a gentle S-curve and lifted, film-like blacks.
awk -v n=17 'function clamp(x) { return x < 0 ? 0 : (x > 1 ? 1 : x) }
function film(x) { x = clamp(x); return 0.04 + 0.92 * (0.6 * x + 0.4 * x * x * (3 - 2 * x)) }
BEGIN {
    print "TITLE \"Warm film\""
    print "LUT_3D_SIZE " n
    print "DOMAIN_MIN 0 0 0"
    print "DOMAIN_MAX 1 1 1"
    for (b = 0; b < n; b++) for (g = 0; g < n; g++) for (r = 0; r < n; r++) {
        R = r / (n - 1); G = g / (n - 1); B = b / (n - 1)
        y = 0.2126 * R + 0.7152 * G + 0.0722 * B
        R = y + 0.8 * (R - y); G = y + 0.8 * (G - y); B = y + 0.8 * (B - y)
        s = (1 - y) * (1 - y); h = y * y
        R = R - 0.10 * s + 0.10 * h
        G = G + 0.03 * s + 0.03 * h
        B = B + 0.08 * s - 0.12 * h
        printf "%.4f %.4f %.4f\n", film(R), film(G), film(B)
    }
}' > warm-film.cube
cp warm-film.cube "$here/warm-film.cube"

# One line per picture: section | kind | name | title | description | options.
# kind "photo" is the demo photo itself, "demo" a preset written by the demo command
# at full size and then reduced, "apply" an edit of the demo photo.
entries=$(cat <<'EOF'
The demo photo|photo|original|The demo photo|"Lake at sunrise": blue → pink → orange sky, yellow sun, orange → teal → indigo water, green hills at 80 % opacity.|
Presets|demo|vivid|vivid|Punchy colour: saturation 1.7, contrast 1.2, brightness 0.05.|--preset vivid
Presets|demo|noir|noir|Black and white with bite: saturation 0, contrast 1.35, brightness −0.05.|--preset noir
Presets|demo|dream|dream|Soft and shifted: saturation 1.2, contrast 0.85, brightness 0.1, hue 60°.|--preset dream
The sliders|apply|sliders|saturation, contrast, hue|Muted and cooler: the four sliders by hand.|--saturation 0.6 --contrast 1.15 --brightness -0.03 --hue -20
The sliders|apply|hue|hue 120°|Every hue turned a third of the way round the colour wheel.|--hue 120
Exposure and vibrance|apply|exposure-up|exposure +1|One stop brighter, in linear light: the sun and the hills reach full scale.|--exposure 1
Exposure and vibrance|apply|exposure-down|exposure −1|One stop darker, in linear light.|--exposure -1
Exposure and vibrance|apply|vibrance|vibrance 1|The muted hills and water gain the most colour; the sun and the orange sky hardly change.|--vibrance 1
Exposure and vibrance|apply|saturation|saturation 1.8|For comparison, plain saturation: every colour pushed alike, the sky and the water clip.|--saturation 1.8
Looks|apply|tonal|tonal|Neutral black and white.|--effect tonal
Looks|apply|mono|mono|Soft, low-contrast black and white.|--effect mono
Looks|apply|look-noir|noir|High-contrast black and white.|--effect noir
Looks|apply|chrome|chrome|Vivid colour with deeper contrast.|--effect chrome
Looks|apply|fade|fade|Muted colour with lifted blacks.|--effect fade
Looks|apply|instant|instant|A warm, slightly faded print.|--effect instant
Looks|apply|process|process|Cool, flat cross-processed colour.|--effect process
Looks|apply|transfer|transfer|A warm, bright vintage transfer.|--effect transfer
Sepia and monochrome|apply|sepia|sepia|The W3C sepia matrix at full strength.|--effect sepia
Sepia and monochrome|apply|sepia-half|sepia at 0.5|Half way between the photo and sepia.|--effect sepia --intensity 0.5
Sepia and monochrome|apply|monochrome|monochrome|Tinted towards one colour, the default 0.6,0.45,0.3.|--effect monochrome
Sepia and monochrome|apply|bw|B&W|Monochrome with a grey tint: plain black and white.|--effect monochrome --color 0.6,0.6,0.6
Tone curves|apply|curve|S-curve|Deeper shadows, brighter highlights: more contrast without clipping.|--curve "0,0 0.25,0.18 0.75,0.85 1,1"
Tone curves|apply|curve-channels|per-channel curves|Cross-processed: S-curves on red and green, blue flattened with lifted blacks, so the water turns teal.|--curve-red "0,0 0.25,0.15 0.75,0.88 1,1" --curve-green "0,0 0.25,0.2 0.75,0.82 1,1" --curve-blue "0,0.15 1,0.8"
Lookup table|apply|lut|warm-film.cube|A 17³ .cube grade: teal shadows, amber highlights, lifted blacks.|--lut warm-film.cube
Lookup table|apply|lut-half|warm-film.cube at 0.5|The same grade mixed half and half with the photo.|--lut warm-film.cube --lut-intensity 0.5
Vignettes|apply|vignette|--vignette|CIVignette: centred; at intensity 1 and radius 1 the darkening reaches black exactly at the corners.|--vignette 1,1
Vignettes|apply|vignette-effect|--vignette-effect|CIVignetteEffect: a pool of light around the sun, dark beyond it.|--vignette-effect 125,85,90,0.8,0.6
Vignettes|apply|vignette-bright|negative vignette|A negative intensity brightens the edges instead.|--vignette -0.5,1
Orientation|apply|orientation-6|orientation 6|EXIF orientation 6 undone: the stored raster turned 90° clockwise (200×250).|--orientation 6
A whole edit|apply|edit|exposure, curve, vibrance, LUT, vignette|Five stages in one recipe, compiled into one edit plan.|--exposure 0.3 --curve "0,0 0.3,0.26 0.7,0.76 1,1" --vibrance 0.3 --lut warm-film.cube --lut-intensity 0.8 --vignette 0.7,1.2
EOF
)

# The demo photo at thumbnail size: the first cell of the demo's contact sheet, whose
# thumbnails are the photo reduced 4× by area (each pixel the mean of a 4×4 block),
# 10 pixels (the sheet's gap) in from the top-left corner. The demo reports on
# standard error what it wrote; that is shown only when it fails.
quietly() { "$@" 2> log.txt || { cat log.txt >&2; exit 1; }; }
quietly photokernels demo --strip -o strip.ppm > /dev/null
pamcut -left 10 -top 10 -width $size_w -height $size_h strip.ppm > lake.ppm

table="$work/table.md"
: > "$table"
section_open=""
while IFS='|' read -r section kind name title description options; do
    case "$kind" in
    photo)
        cp lake.ppm "$name.ppm"
        how="photokernels demo --strip -o strip.ppm<br>pamcut -left 10 -top 10 -width $size_w -height $size_h strip.ppm > lake.ppm"
        ;;
    demo)
        # -linear: the mean of the samples as stored, as Downscale.area and the contact
        # sheet take it; without it pamscale would mix in linear light.
        eval "quietly photokernels demo $options -o $name-full.ppm"
        pamscale -linear -width $size_w -height $size_h "$name-full.ppm" > "$name.ppm"
        how="photokernels demo $options -o $name-full.ppm<br>pamscale -linear -width $size_w -height $size_h $name-full.ppm > $name.ppm"
        ;;
    apply)
        eval "photokernels apply lake.ppm -o $name.ppm $options"
        how="photokernels apply lake.ppm -o $name.ppm $options"
        ;;
    *)
        echo "make-gallery.sh: unknown kind '$kind' for $name" >&2
        exit 70
        ;;
    esac
    pnmtopng -compression 9 "$name.ppm" > "$here/$name.png"
    if [ "$section" != "$section_open" ]; then
        [ -n "$section_open" ] && echo >> "$table"
        printf '## %s\n\n| picture | what and how |\n|---|---|\n' "$section" >> "$table"
        section_open=$section
    fi
    code=$(printf '%s' "$how" | sed 's/<br>/`<br>`/g')
    printf '| ![%s](gallery/%s.png) | **%s** — %s<br>`%s` |\n' \
        "$title" "$name" "$title" "$description" "$code" >> "$table"
done <<< "$entries"

# The before and after pair of the downscale guide: a 1:1 crop of the full-size
# vivid photo around the sun, and the whole frame reduced 4× by area.
pamcut -left 480 -top 330 -width $size_w -height $size_h vivid-full.ppm | pnmtopng -compression 9 > "$here/vivid-crop.png"

# Replace the generated part of the page, keeping the prose around it.
awk -v table="$table" '
    /<!-- gallery:begin -->/ { print; while ((getline line < table) > 0) print line; skipping = 1; next }
    /<!-- gallery:end -->/ { skipping = 0 }
    !skipping { print }
' "$page" > page.md
grep -q '<!-- gallery:end -->' page.md || { echo "make-gallery.sh: $page lacks the gallery markers" >&2; exit 70; }
cp page.md "$page"

count=$(printf '%s\n' "$entries" | wc -l)
total=$(cat "$here"/*.png | wc -c)
echo "wrote $count pictures to docs/gallery/ ($total bytes of PNG) and their tables to docs/gallery.md"
