// cairo and GLib's headers, found through cairo's pkg-config (librsvg's own would add gio's
// and gdk-pixbuf's, whose -pthread SwiftPM refuses with a warning); wi_svg.c declares the few
// librsvg functions it calls.
#include <cairo.h>
#include <glib-object.h>
