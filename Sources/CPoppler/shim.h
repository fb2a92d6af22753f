// poppler's GLib interface (Debian's libpoppler-glib-dev), drawn with cairo, through its
// pkg-config (poppler-glib: GLib's, cairo's and poppler's own include paths).
#include <poppler.h>
