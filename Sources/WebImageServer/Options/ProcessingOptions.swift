import Foundation
import WebImage

/// The options of a request path by name: imgproxy's long and short names (and thumbor's or
/// ours where users come from there), each parsing its arguments into the request. The
/// geometry, effects and output families are in files of their own.
enum ProcessingOptions {
    /// Parses one option's arguments into the request.
    typealias Apply = @Sendable (inout ProcessingRequest, OptionArguments) throws(ProcessingRequestError) -> Void

    /// Every option, by each of its names.
    static let table: [String: Apply] = {
        var table: [String: Apply] = [:]
        for (names, apply) in geometry + effects + output {
            for name in names { table[name] = apply }
        }
        return table
    }()

    /// Options without arguments: a path segment with one of these names and no colon is an
    /// option, not the start of a base64url source.
    static let flags: Set<String> = ["strip", "gs", "ff", "info", "raw"]
}

/// One option's arguments, with the readers every option uses: each refusal is a 400 naming
/// the option and what it takes.
struct OptionArguments {
    let name: String
    let values: [String]
    let limits: ProcessingLimits

    var count: Int { values.count }
    subscript(index: Int) -> String { values[index] }

    func bad(_ reason: String) -> ProcessingRequestError { ProcessingRequestError(400, reason) }

    /// Refuses a count of arguments outside `allowed`.
    func expect(_ allowed: ClosedRange<Int>) throws(ProcessingRequestError) {
        guard allowed.contains(values.count) else {
            let counted = allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed.lowerBound) to \(allowed.upperBound)"
            throw bad("\(name) takes \(counted) argument\(allowed.upperBound == 1 ? "" : "s"), not \(values.count)")
        }
    }

    /// Whether argument `index` is there and not empty (an empty one keeps the default).
    func has(_ index: Int) -> Bool { index < values.count && !values[index].isEmpty }

    /// A whole number of pixels from 0 to the largest dimension.
    func size(_ index: Int, _ what: String) throws(ProcessingRequestError) -> Int {
        guard let value = Int(values[index]), value >= 0, value <= limits.maximumDimension else {
            throw bad("\(what) must be a whole number from 0 to \(limits.maximumDimension), not \"\(values[index])\"")
        }
        return value
    }

    /// A whole number within `range`.
    func integer(_ index: Int, _ what: String, _ range: ClosedRange<Int>) throws(ProcessingRequestError) -> Int {
        guard let value = Int(values[index]), range.contains(value) else {
            throw bad("\(what) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(values[index])\"")
        }
        return value
    }

    /// A finite number within `range`.
    func number(_ index: Int, _ what: String, _ range: ClosedRange<Double>) throws(ProcessingRequestError) -> Double {
        guard let value = Double(values[index]), value.isFinite, range.contains(value) else {
            throw bad("\(what) must be a number from \(range.lowerBound.formatted()) to \(range.upperBound.formatted()), not \"\(values[index])\"")
        }
        return value
    }

    /// A boolean as imgproxy spells them.
    func bool(_ index: Int) throws(ProcessingRequestError) -> Bool { try ProcessingRequest.bool(values[index], name) }

    /// A colour: `RRGGBB`/`RRGGBBAA` in one argument, or `R:G:B` in three from `index` (a
    /// first argument of one to three digits with two more after it).
    func color(from index: Int, _ what: String) throws(ProcessingRequestError) -> Color {
        if values.count - index >= 3, (1...3).contains(values[index].count), values[index].allSatisfy({ $0.isASCII && $0.isNumber }) {
            let channels = try (index..<(index + 3)).map { (i: Int) throws(ProcessingRequestError) -> Double in
                Double(try integer(i, "\(what)'s channel", 0...255)) / 255
            }
            return Color(red: channels[0], green: channels[1], blue: channels[2])
        }
        guard let color = ProcessingRequest.color(hex: values[index]) else {
            throw bad("\(what) must be a hex colour (RRGGBB or RRGGBBAA) or R:G:B, not \"\(values[index])\"")
        }
        return color
    }

    /// The nine anchors' names.
    static let anchors: [String: (Double, Double)] = ["ce": (0.5, 0.5), "no": (0.5, 0), "so": (0.5, 1), "ea": (1, 0.5), "we": (0, 0.5),
                                                      "nowe": (0, 0), "noea": (1, 0), "sowe": (0, 1), "soea": (1, 1)]

    /// A gravity from argument `index`: an anchor, `sm`, or `fp` with its x and y after it.
    /// Returns it and the index after what it took.
    func gravity(at index: Int) throws(ProcessingRequestError) -> (ProcessingRequest.Gravity, next: Int) {
        let type = values[index]
        if type == "sm" { return (.smart, index + 1) }
        if type == "fp" {
            guard values.count >= index + 3 else { throw bad("\(name):fp takes the focal point's x and y") }
            return (.focalPoint(x: try number(index + 1, "the focal point's x", 0...1), y: try number(index + 2, "the focal point's y", 0...1)),
                    index + 3)
        }
        guard let (x, y) = Self.anchors[type] else {
            throw bad("unknown gravity \"\(type)\" (ce, no, so, ea, we, nowe, noea, sowe, soea, sm, fp)")
        }
        return (.anchor(x: x, y: y), index + 1)
    }
}

extension ProcessingRequest {
    /// Applies one path segment's option.
    mutating func apply(option: String, limits: ProcessingLimits, depth: Int) throws(ProcessingRequestError) {
        let parts = option.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = parts[0]
        if name == "pr" || name == "preset" {
            guard parts.count > 1 else { throw ProcessingRequestError(400, "\(name) takes 1 or more arguments, not 0") }
            for preset in parts.dropFirst() { try apply(preset: preset, limits: limits, depth: depth) }
            return
        }
        guard let apply = ProcessingOptions.table[name] else { throw ProcessingRequestError(400, "unknown option \"\(name)\"") }
        try apply(&self, OptionArguments(name: name, values: Array(parts.dropFirst()), limits: limits))
    }

    /// Applies the options of the preset `name` (a preset may not name another).
    mutating func apply(preset name: String, limits: ProcessingLimits, depth: Int) throws(ProcessingRequestError) {
        guard let options = limits.presets[name] else { throw ProcessingRequestError(400, "unknown preset \"\(name)\"") }
        guard depth == 0 else { throw ProcessingRequestError(400, "the preset \"\(name)\" names another preset") }
        for option in options.split(separator: "/") where !option.isEmpty {
            try apply(option: String(option), limits: limits, depth: depth + 1)
        }
    }

    mutating func setFormat(_ text: String) throws(ProcessingRequestError) {
        let name = text.lowercased() == "jpg" ? "jpeg" : text.lowercased()
        guard let format = OutputFormat(rawValue: name) else {
            throw ProcessingRequestError(400, "unknown output format \"\(text)\" (png, jpeg, webp, gif, avif, jxl, heic or auto)")
        }
        self.format = format
    }
}
