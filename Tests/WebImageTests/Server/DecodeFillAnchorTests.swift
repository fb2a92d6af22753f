import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// A fill cut by the decoder (`ProcessingRequest.decodeFillAnchor`) only where nothing else of the
/// geometry follows it, and at the same corner as the server's own cut (`Placement`), so that the
/// result is the same pixels either way.
struct DecodeFillAnchorTests {
    func anchor(_ options: String) throws -> FillAnchor? {
        try ProcessingRequest.parse(path: "/unsafe/\(options)/plain/http://o/a.jpg").request.decodeFillAnchor
    }

    @Test func onlyAFillWithACompassGravityAndNothingAfterItIsCutByTheDecoder() throws {
        #expect(try anchor("rs:fill:300:200") == .center)
        #expect(try anchor("rs:fill-down:300:200/g:so") == FillAnchor(x: 0.5, y: 1))
        #expect(try anchor("rs:fill:300:200/g:nowe") == FillAnchor(x: 0, y: 0))
        for options in ["rs:fit:300:200", "rs:fill:300:0", "rs:force:300:200", "rs:auto:300:200", "rs:fill:300:200/g:sm",
                        "rs:fill:300:200/g:fp:0.2:0.3", "rs:fill:300:200/g:ce:10:0", "rs:fill:300:200/z:1.5",
                        "rs:fill:300:200/mw:400", "rs:fill:300:200/ex:1", "rs:fill:300:200/c:100:100", "rs:fill:300:200/t:10"] {
            #expect(try anchor(options) == nil, "\(options)")
        }
    }

    @Test func theDecodersCornerIsTheServersCorner() throws {
        // Fills of each box: as wide as it and taller, or as tall and wider (by odd and even room).
        for box in [PixelSize(width: 300, height: 200), PixelSize(width: 1, height: 1), PixelSize(width: 7, height: 7),
                    PixelSize(width: 99, height: 100)] {
            for extra in [0, 1, 2, 3, 100, 999] {
                for fill in [PixelSize(width: box.width + extra, height: box.height), PixelSize(width: box.width, height: box.height + extra)] {
                    for (x, y) in [(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (0.0, 0.5), (0.5, 0.5), (1.0, 0.5), (0.0, 1.0), (0.5, 1.0), (1.0, 1.0)] {
                        let server = try Placement.origin(of: box, in: fill, gravity: .anchor(x: x, y: y), offsetX: 0, offsetY: 0, pixels: nil)
                        let decoder = FillAnchor(x: x, y: y).cut(box, width: fill.width, height: fill.height)
                        if extra == 0 {
                            #expect(decoder == nil, "the box itself is kept")
                        } else {
                            #expect(decoder?.x == server.x && decoder?.y == server.y, "\(box) in \(fill) at \(x), \(y)")
                        }
                    }
                }
            }
        }
    }
}
