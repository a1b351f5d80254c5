// The DNS-SD API: the system's on Apple platforms, Avahi's compatibility header on Linux (Debian:
// libavahi-compat-libdnssd-dev).
#if defined(__APPLE__)
#include <dns_sd.h>
#else
#include <avahi-compat-libdns_sd/dns_sd.h>
#endif
