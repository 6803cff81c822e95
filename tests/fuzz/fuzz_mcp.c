/* libFuzzer target: the MCP server's JSON-RPC message handler on arbitrary
 * messages. The runtime behind it refuses to run anything, so that fuzzing
 * never executes code; every other path (parsing, dispatch, validation,
 * errors, the call table) is exercised. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <execbox/execbox.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int refuse(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req, eb_exec_result *res,
                  eb_error **err) {
  (void)rt;
  (void)ctx;
  (void)req;
  (void)res;
  return eb_error_set(err, EB_ERR_SANDBOX, "the fuzzing runtime runs nothing");
}

static void destroy(eb_runtime *rt) { (void)rt; }

static const eb_runtime_ops refusing_ops = {.name = "refuse", .execute = refuse, .destroy = destroy};
static eb_runtime refusing = {.ops = &refusing_ops};

static void discard(void *user, const char *message, const char *related, bool final) {
  (void)user;
  (void)related;
  (void)final;
  if (message != NULL && message[0] != '{') /* every message is a JSON object */
    __builtin_trap();
  if (message == NULL && !final) /* only a cancelled call's end has no message */
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static eb_mcp *mcp;
  if (mcp == NULL) {
    eb_mcp_options o = {.runtime = &refusing, .max_message_bytes = 1 << 16};
    eb_error *err = NULL;
    if (eb_mcp_new(&o, discard, NULL, &mcp, &err) < 0)
      abort();
  }
  eb_mcp_handle(mcp, (const char *)data, size);
  return 0;
}
