#include <execbox/execbox.h>

EB_EXPORT const char *eb_version(void) { return EXECBOX_VERSION; }
