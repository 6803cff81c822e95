/* execbox: run code written by an LLM in a fast, fail-closed sandbox.
 * Umbrella header. */
#ifndef EXECBOX_H
#define EXECBOX_H

#include <execbox/error.h>
#include <execbox/context.h>
#include <execbox/language.h>
#include <execbox/runtime.h>
#include <execbox/tool.h>
#include <execbox/llm.h>
#include <execbox/agent.h>
#include <execbox/mcp.h>
#include <execbox/docker.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, e.g. "0.1.0". Static string. */
EB_EXPORT const char *eb_version(void);

#ifdef __cplusplus
}
#endif
#endif
