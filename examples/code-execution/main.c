/* An agent that answers by running code, in a few lines of C.
 *
 *   EXECBOX_MODEL=openai:gpt-4o-mini OPENAI_API_KEY=... ./code-execution "What is 2**100?"
 *
 * The runtime comes from SANDBOX_ENV (jail when unset): to swap runtimes,
 * set SANDBOX_ENV or change the NULL passed to eb_runtime_new below. */
#include <execbox/execbox.h>
#include <stdio.h>
#include <stdlib.h>

static void print_event(void *user, const eb_event *ev) {
  (void)user;
  if (ev->type == EB_EVENT_TEXT_DELTA)
    fwrite(ev->text, 1, ev->len, stdout);
  else if (ev->type == EB_EVENT_TOOL_CALL_ARGS)
    fprintf(stderr, "[running] %s\n", ev->text);
  else if (ev->type == EB_EVENT_TOOL_RESULT)
    fprintf(stderr, "[result] %s\n", ev->text);
}

int main(int argc, char **argv) {
  const char *question = argc > 1 ? argv[1] : "What is the 30th Fibonacci number?";
  const char *model = getenv("EXECBOX_MODEL");
  if (model == NULL) {
    fprintf(stderr, "set EXECBOX_MODEL, e.g. openai:gpt-4o-mini, and the provider's API key\n");
    return 64;
  }
  eb_runtime *rt = NULL;
  eb_llm *llm = NULL;
  eb_tool *tool = NULL;
  eb_error *err = NULL;
  eb_conversation conv = {0};
  char *answer = NULL;
  int rc = 1;

  if (eb_runtime_new(NULL, &rt, &err) < 0 ||               /* SANDBOX_ENV, else jail */
      eb_runtime_enable_pool(rt, NULL, &err) < 0 ||         /* warm sandboxes (EXECBOX_POOL) */
      eb_execute_code_tool_new(rt, NULL, &tool, &err) < 0 ||
      eb_llm_new_from_spec(model, true, &llm, &err) < 0 ||
      eb_conversation_add_user(&conv, question, &err) < 0)
    goto out;

  eb_tool *tools[] = {tool};
  eb_agent_config cfg = {
      .llm = llm,
      .tools = tools,
      .n_tools = 1,
      .mode = EB_AGENT_AUTONOMOUS,                      /* no approvals, 60 min run timeout */
      .approval = EB_APPROVAL_AUTO,
      .tool_config = {.timeout_ms = 2 * 60 * 1000, .max_attempts = 1}, /* never re-run code */
      .on_event = print_event,
  };
  if (eb_agent_run(&cfg, NULL, &conv, &answer, &err) < 0)
    goto out;
  printf("\n");
  rc = 0;
out:
  if (err != NULL)
    fprintf(stderr, "code-execution: %s\n", err->msg);
  free(answer);
  eb_conversation_clear(&conv);
  eb_llm_free(llm);
  eb_tool_free(tool);
  eb_runtime_free(rt);
  eb_error_free(err);
  return rc;
}
