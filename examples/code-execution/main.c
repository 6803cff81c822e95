/* The smallest use of libexecbox: run a Python snippet and print the result.
 * To swap runtimes, change only the name passed to eb_runtime_new ("jail",
 * "local", ...) or set SANDBOX_ENV and pass NULL. */
#include <execbox/execbox.h>
#include <stdio.h>

int main(void) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  eb_exec_result res = {0};
  int rc = 1;

  if (eb_runtime_new(NULL, &rt, &err) < 0)
    goto out;
  if (eb_execute(rt, NULL, "python", "import math\nprint(math.factorial(20))\n", &res, &err) < 0)
    goto out;
  printf("exit_code=%d status=%s\noutput:\n%s", res.exit_code, eb_status_name(res.status),
         res.output);
  rc = res.exit_code;
out:
  if (err != NULL)
    fprintf(stderr, "code-execution: %s\n", err->msg);
  eb_exec_result_clear(&res);
  eb_runtime_free(rt);
  eb_error_free(err);
  return rc;
}
