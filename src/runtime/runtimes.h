/* The built-in runtimes, for the registry. */
#ifndef EB_RUNTIME_RUNTIMES_H
#define EB_RUNTIME_RUNTIMES_H

#include <execbox/runtime.h>

extern const eb_runtime_ops eb_local_ops;
extern const eb_runtime_ops eb_jail_ops;
extern const eb_runtime_ops eb_remote_ops;
extern const eb_runtime_ops eb_docker_ops;

int eb_local_runtime_new(eb_runtime **out, eb_error **err);
int eb_jail_runtime_new(eb_runtime **out, eb_error **err);
int eb_remote_runtime_new(eb_runtime **out, eb_error **err);
/* The docker runtime configured from the environment (see execbox/docker.h). */
int eb_docker_runtime_new_default(eb_runtime **out, eb_error **err);

#endif
