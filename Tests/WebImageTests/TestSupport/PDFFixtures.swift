import Foundation

/// PDF documents written by the tests: objects numbered from 1, a cross-reference table with
/// their real offsets, one or more pages of a given size and content.
enum PDFFixtures {
    /// A page: its media box in points, its content stream, and extra entries of its dictionary.
    struct Page {
        var width: Double
        var height: Double
        var content: String
        var extra = ""
    }

    /// Drawing on a 200 x 150 point page: red and blue rectangles, a green stroke, a line of
    /// Helvetica text (whatever face fontconfig gives it; both renderers get the same).
    static let shapes = """
        1 1 0.8 rg 0 0 200 150 re f
        1 0 0 rg 10 10 90 50 re f
        0 0 1 rg 110 60 70 70 re f
        0 0.6 0 RG 4 w 20 130 m 180 80 l S
        0 g BT /F1 18 Tf 20 85 Td (WebImage PDF) Tj ET
        """

    /// `shapes` without its line of text.
    static let shapesWithoutText = shapes.split(separator: "\n").filter { !$0.contains("Tj") }.joined(separator: "\n")

    /// A document of `pages`; `catalogExtra` joins the catalog (an /OpenAction, say) and
    /// `objects` are appended after the fixed ones, numbered from `firstExtraObject`.
    static func document(_ pages: [Page], catalogExtra: String = "", objects: [String] = []) -> Data {
        // 1 catalog, 2 pages, 3 font, then per page: the page and its content; then `objects`.
        var bodies: [String] = []
        let kids = pages.indices.map { "\(4 + $0 * 2) 0 R" }.joined(separator: " ")
        bodies.append("<< /Type /Catalog /Pages 2 0 R \(catalogExtra) >>")
        bodies.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages.count) >>")
        bodies.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        for (index, page) in pages.enumerated() {
            bodies.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(page.width) \(page.height)] "
                          + "/Resources << /Font << /F1 3 0 R >> >> /Contents \(5 + index * 2) 0 R \(page.extra) >>")
            let stream = Data(page.content.utf8)
            bodies.append("<< /Length \(stream.count) >>\nstream\n\(page.content)\nendstream")
        }
        bodies.append(contentsOf: objects)
        var out = Data("%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int] = []
        for (index, body) in bodies.enumerated() {
            offsets.append(out.count)
            out.append(Data("\(index + 1) 0 obj\n\(body)\nendobj\n".utf8))
        }
        let xref = out.count
        var table = "xref\n0 \(bodies.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { table += String(format: "%010d 00000 n \n", offset) }
        table += "trailer\n<< /Size \(bodies.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        out.append(Data(table.utf8))
        return out
    }

    /// The number the first of `objects` gets in `document(pages:...)`.
    static func firstExtraObject(pages: Int) -> Int { 4 + pages * 2 }
}
