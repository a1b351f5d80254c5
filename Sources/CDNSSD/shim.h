// The DNS-SD API: Avahi's compatibility header on Linux (its folder comes from pkg-config), the system's on Apple's.
#include <dns_sd.h>
