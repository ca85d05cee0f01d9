import Foundation
import Testing

@Suite("Reference vectors")
struct VectorsTests {
    @Test("the in-repo copy of kernels.json equals ../shared/vectors/kernels.json when that is present")
    func copyIsCurrent() throws {
        let shared = ReferenceVectors.url.deletingLastPathComponent()  // Vectors
            .deletingLastPathComponent()                               // PhotoKernelsTests
            .deletingLastPathComponent()                               // Tests
            .deletingLastPathComponent()                               // package root
            .deletingLastPathComponent()                               // its parent
            .appendingPathComponent("shared/vectors/kernels.json")
        guard FileManager.default.fileExists(atPath: shared.path) else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "CI must have ../shared beside the checkout")
            print("note: \(shared.path) not found; the in-repo copy of the vectors is used as is")
            return
        }
        #expect(try Data(contentsOf: shared) == Data(contentsOf: ReferenceVectors.url),
                "Tests/PhotoKernelsTests/Vectors/kernels.json is out of date: copy ../shared/vectors/kernels.json over it")
    }

    @Test("the vectors hold exactly the kernel families the test files read (a new family fails here until tested)")
    func everyFamilyCovered() {
        let families = Set(ReferenceVectors.shared.cases.map(\.kernel))
        #expect(families == ["saturation", "contrast", "brightness", "hue", "adjustments", "exposure", "sepia",
                             "monochrome", "effect", "vignette", "vignetteEffect"])
    }
}
