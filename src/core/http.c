#include "core/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

#define MAX_BODY_BYTES (64u << 20) /* a reply larger than this is not an LLM reply */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void eb_http_global_init(void) { pthread_once(&curl_once, curl_init_once); }

typedef struct transfer {
  CURL *curl;
  eb_http_response *res;
  eb_http_body_fn on_body;
  void *user;
  int aborted_by_callback;
} transfer;

int64_t eb_http_parse_retry_after(const char *value) {
  char *end = NULL;
  double v = strtod(value, &end);
  if (end == value || !isfinite(v) || v < 0 || v > 3600)
    return -1;
  return (int64_t)(v * 1000.0);
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg) {
  transfer *t = arg;
  size_t len = size * n;
  char line[256];
  size_t k = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
  memcpy(line, buf, k);
  line[k] = '\0';
  if (strncasecmp(line, "HTTP/", 5) == 0) {
    t->res->retry_after_ms = -1; /* a new response (after a 100 Continue, say) */
    return len;
  }
  char *colon = strchr(line, ':');
  if (colon == NULL)
    return len;
  *colon = '\0';
  const char *value = colon + 1;
  while (*value == ' ')
    value++;
  if (strcasecmp(line, "retry-after-ms") == 0) {
    char *end = NULL;
    double ms = strtod(value, &end);
    if (end != value && isfinite(ms) && ms >= 0 && ms <= 3600e3)
      t->res->retry_after_ms = (int64_t)ms; /* the more precise header wins */
  } else if (strcasecmp(line, "retry-after") == 0 && t->res->retry_after_ms < 0) {
    t->res->retry_after_ms = eb_http_parse_retry_after(value);
  }
  return len;
}

static size_t on_write(char *buf, size_t size, size_t n, void *arg) {
  transfer *t = arg;
  size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (t->on_body != NULL && status >= 200 && status < 300) {
    if (t->on_body(t->user, buf, len) < 0) {
      t->aborted_by_callback = 1;
      return 0;
    }
    return len;
  }
  if (t->res->body.len + len > MAX_BODY_BYTES || eb_buf_append(&t->res->body, buf, len) < 0)
    return 0;
  return len;
}

int eb_http_do(eb_ctx *ctx, const eb_http_request *req, eb_http_response *res, eb_error **err) {
  pthread_once(&curl_once, curl_init_once);
  memset(res, 0, sizeof(*res));
  res->retry_after_ms = -1;
  int ret = 0;
  int transport = req->transport_error ? req->transport_error : EB_ERR_LLM_PROVIDER;
  const char *url = req->url;
  char content_type[128];
  struct curl_slist *hdrs = NULL;
  CURLM *multi = NULL;
  transfer t = {.res = res, .on_body = req->on_body, .user = req->user};
  t.curl = curl_easy_init();
  if (t.curl == NULL)
    return eb_error_set(err, ENOMEM, "curl_easy_init");
  for (const char *const *h = req->headers; h != NULL && *h != NULL; h++)
    hdrs = curl_slist_append(hdrs, *h);
  snprintf(content_type, sizeof(content_type), "Content-Type: %s",
           req->content_type ? req->content_type : "application/json");
  hdrs = curl_slist_append(hdrs, content_type);
  hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
  curl_easy_setopt(t.curl, CURLOPT_URL, url);
  curl_easy_setopt(t.curl, CURLOPT_HTTPHEADER, hdrs);
  if (req->unix_socket != NULL)
    curl_easy_setopt(t.curl, CURLOPT_UNIX_SOCKET_PATH, req->unix_socket);
  if (req->body != NULL) {
    curl_easy_setopt(t.curl, CURLOPT_POSTFIELDS, req->body);
    curl_easy_setopt(t.curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)(req->body_len ? req->body_len : strlen(req->body)));
  } else if (req->method != NULL && strcmp(req->method, "GET") != 0) {
    /* A POST without a body (Docker's start, wait, kill): Content-Length 0. */
    curl_easy_setopt(t.curl, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(t.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
  } else {
    curl_easy_setopt(t.curl, CURLOPT_HTTPGET, 1L);
  }
  if (req->method != NULL && strcmp(req->method, "GET") != 0 && strcmp(req->method, "POST") != 0)
    curl_easy_setopt(t.curl, CURLOPT_CUSTOMREQUEST, req->method);
  if (req->timeout_ms > 0)
    curl_easy_setopt(t.curl, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
  curl_easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(t.curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(t.curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(t.curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(t.curl, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
  curl_easy_setopt(t.curl, CURLOPT_USERAGENT, "execbox/" EXECBOX_VERSION);
  curl_easy_setopt(t.curl, CURLOPT_PROTOCOLS_STR, "http,https");

  multi = curl_multi_init();
  if (multi == NULL || curl_multi_add_handle(multi, t.curl) != CURLM_OK) {
    ret = eb_error_set(err, ENOMEM, "curl_multi_init");
    goto out;
  }
  int ctx_fds[32];
  int n_ctx = eb_ctx_cancel_fds(ctx, ctx_fds, (int)EB_ARRAY_SIZE(ctx_fds));
  if (n_ctx > (int)EB_ARRAY_SIZE(ctx_fds))
    n_ctx = (int)EB_ARRAY_SIZE(ctx_fds);
  struct curl_waitfd extra[32];
  for (int i = 0; i < n_ctx; i++)
    extra[i] = (struct curl_waitfd){.fd = ctx_fds[i], .events = CURL_WAIT_POLLIN};

  for (;;) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK) {
      ret = eb_error_set(err, transport, "%s: %s", url, curl_multi_strerror(mc));
      goto out;
    }
    if (running == 0)
      break;
    eb_ctx_state st = eb_ctx_state_now(ctx);
    if (st == EB_CTX_CANCELLED) {
      ret = eb_error_set(err, EB_ERR_CANCELLED, "request to %s cancelled", url);
      goto out;
    }
    if (st == EB_CTX_DEADLINE) {
      ret = eb_error_set(err, EB_ERR_TIMEOUT, "request to %s timed out", url);
      goto out;
    }
    int64_t left = eb_ctx_remaining_ms(ctx);
    int wait_ms = left < 0 || left > 1000 ? 1000 : (int)left + 1;
    curl_multi_poll(multi, extra, (unsigned)n_ctx, wait_ms, NULL);
  }
  CURLMsg *msg;
  int queued;
  CURLcode cc = CURLE_OK;
  while ((msg = curl_multi_info_read(multi, &queued)) != NULL)
    if (msg->msg == CURLMSG_DONE)
      cc = msg->data.result;
  res->never_sent = cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
                    cc == CURLE_COULDNT_RESOLVE_PROXY;
  if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && t.aborted_by_callback)) {
    ret = eb_error_set(err, transport, "%s: %s", url, curl_easy_strerror(cc));
    goto out;
  }
  curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &res->status);
out:
  if (multi != NULL) {
    curl_multi_remove_handle(multi, t.curl);
    curl_multi_cleanup(multi);
  }
  curl_easy_cleanup(t.curl);
  curl_slist_free_all(hdrs);
  return ret;
}

int eb_http_post(eb_ctx *ctx, const char *url, const char *const *headers, const char *body,
                 eb_http_body_fn on_body, void *user, eb_http_response *res, eb_error **err) {
  eb_http_request req = {.url = url, .headers = headers, .body = body, .on_body = on_body,
                         .user = user};
  return eb_http_do(ctx, &req, res, err);
}

void eb_http_response_free(eb_http_response *res) {
  free(res->body.data);
  memset(res, 0, sizeof(*res));
}
