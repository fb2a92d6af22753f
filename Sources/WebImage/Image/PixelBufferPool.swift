import CWebImageCodecs

/// Pixel buffers recycled between decodes.
///
/// When an image's pixels are freed, a buffer of 64 KiB to 4 MiB is kept, up to `limit` bytes in
/// all (16 MiB by default, at most 32 buffers), and the next decode of an image with the same
/// byte count writes into it instead of into fresh memory. Without it, glibc hands the top of a
/// thread's heap back to the system when the pixels of several images in flight are freed
/// together, and the next decode faults each page in again (Benchmarks/README.md, "Figures once
/// in source comments").
///
/// The pool is process-wide and thread-safe. It is drained when an `ImageCache` sees memory
/// pressure; `limit = 0` turns it off. Under AddressSanitizer a kept buffer is poisoned until a
/// decode takes it, so a pointer kept past its image's end is still reported.
public enum PixelBufferPool {
    /// The most bytes the pool keeps (default 16 MiB). Lowering it below what is kept frees
    /// everything kept; 0 turns recycling off.
    public static var limit: Int {
        get { Int(wi_pixel_pool_limit()) }
        set { _ = wi_pixel_pool_set_limit(size_t(max(0, newValue))) }
    }

    /// The bytes kept now, waiting for a decode of their size.
    public static var heldBytes: Int { Int(wi_pixel_pool_bytes()) }

    /// Frees every kept buffer; returns how many bytes that was.
    @discardableResult
    public static func drain() -> Int { Int(wi_pixel_pool_drain()) }
}
