#if WEBIMAGE_TSAN
import WebImage

/// ThreadSanitizer builds use a lock TSan can see (see `SanitizerMutex` in WebImage).
typealias Mutex = SanitizerMutex
#endif
