import Foundation
import Testing
@testable import WebImage

/// `Image` is a value: its colour description is boxed (so that a copy is three references),
/// and a change to one copy's description never shows in another.
@Suite struct ImageValueTests {
    @Test func colorInfoIsAValueOfEachCopy() {
        let original = Image(bitmap: Bitmap(width: 1, height: 1, rgba: [1, 2, 3, 255]))
        #expect(original.colorInfo.isEmpty)
        var tagged = original
        let profile = Data(repeating: 7, count: 132)
        tagged.colorInfo.iccProfile = profile
        tagged.colorInfo.cicp = .init(colorPrimaries: 12, transferCharacteristics: 13, matrixCoefficients: 0, fullRange: true)
        #expect(original.colorInfo.isEmpty, "the copy's change stays in the copy")
        #expect(tagged.colorInfo.iccProfile == profile)
        #expect(tagged.colorInfo.cicp?.colorPrimaries == 12)

        var copy = tagged
        copy.colorInfo.iccProfile = nil
        #expect(tagged.colorInfo.iccProfile == profile, "the box is shared by copies, never written through")
        #expect(copy.colorInfo.iccProfile == nil && copy.colorInfo.cicp?.colorPrimaries == 12)
        copy.colorInfo = ImageColorInfo()
        #expect(copy.colorInfo.isEmpty && !tagged.colorInfo.isEmpty)
        #expect(copy.bitmap == tagged.bitmap, "the pixels are shared either way")
    }
}
