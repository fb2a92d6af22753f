// libmemcached (Debian's libmemcached-dev), for the WebImageMemcached shared cache tier.
#include <libmemcached/memcached.h>
#include <stdlib.h>
