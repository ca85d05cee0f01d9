import PhotoKernels

/// A contact sheet: thumbnails laid out in a grid with a gap, like a photo editor's
/// filter strip, so every effect and preset can be compared at a glance.
///
/// Thumbnails are made with a box filter (each thumbnail pixel is the mean of the
/// source pixels its area covers), and the effects run on the thumbnails, as a filter
/// strip does.
struct ContactSheet {
    /// One cell: a label (printed as the grid order) and its image.
    struct Cell {
        var label: String
        var image: FloatImage
    }

    /// The cells, row by row.
    var cells: [Cell]
    /// Cells per row.
    var columns: Int
    /// Pixels between cells and around the edge.
    var gap = 10
    /// The colour behind the cells.
    var background = SIMD4<Float>(1, 1, 1, 1)

    /// Rows needed for all cells.
    var rows: Int { (cells.count + columns - 1) / columns }

    /// The grid order, one line per row: `row 1: original, sepia, …`.
    var gridOrder: [String] {
        stride(from: 0, to: cells.count, by: columns).enumerated().map { row, start in
            let labels = cells[start..<min(start + columns, cells.count)].map(\.label)
            return "row \(row + 1): " + labels.joined(separator: ", ")
        }
    }

    /// Lays the cells out, each in a slot as large as the largest cell, top-left aligned.
    ///
    /// - Precondition: at least one cell and one column.
    /// - Throws: `RasterError.invalidSize` if the sheet's pixel count does not fit (the
    ///   demo's thumbnails and grid are fixed, so its sides do).
    func render() throws(RasterError) -> FloatImage {
        let cellWidth = cells.map(\.image.width).max()!, cellHeight = cells.map(\.image.height).max()!
        let width = columns * cellWidth + (columns + 1) * gap
        let height = rows * cellHeight + (rows + 1) * gap
        var sheet = try FloatImage(width: width, height: height, color: background)
        sheet.withUnsafeMutablePixels { out in
            for (index, cell) in cells.enumerated() {
                let left = gap + (index % columns) * (cellWidth + gap)
                let top = gap + (index / columns) * (cellHeight + gap)
                cell.image.withUnsafePixels { source in
                    for y in 0..<cell.image.height {
                        let from = y * cell.image.width, to = (top + y) * width + left
                        for x in 0..<cell.image.width { out[to + x] = source[from + x] }
                    }
                }
            }
        }
        return sheet
    }

    /// A `width × height` box-filtered copy of `image`: destination pixel `(x, y)` is the
    /// mean of the source pixels `x·W/w ..< (x+1)·W/w` by `y·H/h ..< (y+1)·H/h` (at least
    /// one of each), so an exact 4 × 4 reduction averages 16 pixels.
    ///
    /// - Throws: `RasterError.invalidSize` for a side below 1 or above the image's.
    static func thumbnail(of image: FloatImage, width: Int, height: Int) throws(RasterError) -> FloatImage {
        guard 1...image.width ~= width, 1...image.height ~= height else { throw .invalidSize(width: width, height: height) }
        var pixels = [SIMD4<Float>](repeating: .zero, count: width * height)
        image.withUnsafePixels { source in
            for y in 0..<height {
                let y0 = y * image.height / height, y1 = max(y0 + 1, (y + 1) * image.height / height)
                for x in 0..<width {
                    let x0 = x * image.width / width, x1 = max(x0 + 1, (x + 1) * image.width / width)
                    var (r, g, b, a): (Float, Float, Float, Float) = (0, 0, 0, 0)
                    for sy in y0..<y1 {
                        for sx in x0..<x1 {
                            let p = source[sy * image.width + sx]
                            r += p.x; g += p.y; b += p.z; a += p.w
                        }
                    }
                    let n = Float((y1 - y0) * (x1 - x0))
                    pixels[y * width + x] = SIMD4(r / n, g / n, b / n, a / n)
                }
            }
        }
        return try FloatImage(width: width, height: height, pixels: pixels)
    }
}
