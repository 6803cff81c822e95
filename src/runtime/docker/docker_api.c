#include "runtime/docker/docker_api.h"

#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "core/http.h"
#include "core/util.h"

#define VERSION_TIMEOUT_MS 10000
#define MAX_ANSWER_HEADER 16384

static int unreachable(const docker_api *api, eb_error **err, const eb_error *cause) {
  return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                      "cannot reach the Docker daemon at %s (%s): is dockerd (or podman's "
                      "service) running? DOCKER_HOST selects another",
                      api->host, cause && cause->msg ? cause->msg : "no answer");
}

int docker_api_init(docker_api *api, const char *host, eb_error **err) {
  memset(api, 0, sizeof(*api));
  pthread_mutex_init(&api->mu, NULL);
  if (host == NULL || host[0] == '\0')
    host = getenv("DOCKER_HOST");
  if (host == NULL || host[0] == '\0')
    host = DOCKER_DEFAULT_HOST;
  api->host = strdup(host);
  if (api->host == NULL)
    return eb_error_set(err, ENOMEM, "allocate the Docker host");
  if (strncmp(host, "unix://", 7) == 0) {
    if (host[7] != '/')
      return eb_error_set(err, EB_ERR_USAGE, "DOCKER_HOST `%s`: the socket path must be absolute",
                          host);
    api->socket_path = strdup(host + 7);
    api->base = strdup("http://docker");
    api->host_header = strdup("docker");
  } else if (strncmp(host, "tcp://", 6) == 0 || strncmp(host, "http://", 7) == 0) {
    const char *hp = host + (host[0] == 't' ? 6 : 7);
    size_t n = strcspn(hp, "/");
    if (n == 0)
      return eb_error_set(err, EB_ERR_USAGE, "DOCKER_HOST `%s` names no host", host);
    const char *tls = getenv("DOCKER_TLS_VERIFY");
    if (tls != NULL && tls[0] != '\0')
      return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                          "DOCKER_TLS_VERIFY is set but the docker runtime speaks plain HTTP only; "
                          "use the unix socket or an SSH tunnel to it");
    /* Docker's plain-TCP port when none is given. */
    bool has_port = memchr(hp, ':', n) != NULL && hp[n - 1] != ']';
    if (asprintf(&api->base, "http://%.*s%s", (int)n, hp, has_port ? "" : ":2375") < 0)
      api->base = NULL;
    api->host_header = strndup(hp, n);
  } else {
    return eb_error_set(err, EB_ERR_USAGE,
                        "DOCKER_HOST `%s`: only unix:// and tcp:// are supported", host);
  }
  if (api->base == NULL || api->host_header == NULL ||
      (strncmp(host, "unix://", 7) == 0 && api->socket_path == NULL))
    return eb_error_set(err, ENOMEM, "allocate the Docker host");
  return 0;
}

void docker_api_free(docker_api *api) {
  free(api->host);
  free(api->socket_path);
  free(api->base);
  free(api->host_header);
  pthread_mutex_destroy(&api->mu);
  memset(api, 0, sizeof(*api));
}

const char *docker_api_message(const json_t *reply) {
  const char *m = json_string_value(json_object_get(reply, "message"));
  return m != NULL && m[0] != '\0' ? m : "the daemon gave no reason";
}

/* A request to url; a transport failure becomes "cannot reach the daemon". */
static int api_request(docker_api *api, eb_ctx *ctx, const char *method, const char *url,
                       const char *body, int64_t timeout_ms, long *status, json_t **reply,
                       eb_error **err) {
  eb_http_request req = {
      .method = method,
      .url = url,
      .unix_socket = api->socket_path,
      .body = body,
      .timeout_ms = timeout_ms,
      .transport_error = EB_ERR_RUNTIME_UNAVAILABLE,
  };
  eb_http_response res;
  eb_error *herr = NULL;
  if (reply != NULL)
    *reply = NULL;
  *status = 0;
  int r = eb_http_do(ctx, &req, &res, &herr);
  if (r < 0) {
    if (herr->code == EB_ERR_RUNTIME_UNAVAILABLE) {
      r = unreachable(api, err, herr);
      eb_error_free(herr);
    } else {
      r = eb_error_propagate(err, herr);
    }
    eb_http_response_free(&res);
    return r;
  }
  *status = res.status;
  if (reply != NULL && res.body.len > 0)
    *reply = json_loadb(res.body.data, res.body.len, 0, NULL);
  eb_http_response_free(&res);
  return 0;
}

static int parse_version(const char *v, int *major, int *minor) {
  return v != NULL && sscanf(v, "%d.%d", major, minor) == 2 ? 0 : -1;
}

int docker_api_negotiate(docker_api *api, eb_ctx *ctx, eb_error **err) {
  cleanup_free char *url = NULL;
  pthread_mutex_lock(&api->mu);
  int ret = 0;
  if (api->negotiated)
    goto out;
  if (asprintf(&url, "%s/version", api->base) < 0) {
    ret = eb_error_set(err, ENOMEM, "allocate a URL");
    goto out;
  }
  long status = 0;
  json_t *reply = NULL;
  ret = api_request(api, ctx, "GET", url, NULL, VERSION_TIMEOUT_MS, &status, &reply, err);
  if (ret < 0)
    goto out;
  const char *v = json_string_value(json_object_get(reply, "ApiVersion"));
  const char *engine = json_string_value(json_object_get(reply, "Version"));
  int major = 0, minor = 0;
  if (status != 200 || parse_version(v, &major, &minor) < 0) {
    ret = eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                       "%s does not answer like a Docker daemon (GET /version: HTTP %ld)",
                       api->host, status);
    json_decref(reply);
    goto out;
  }
  if (major < DOCKER_API_MIN_MAJOR ||
      (major == DOCKER_API_MIN_MAJOR && minor < DOCKER_API_MIN_MINOR)) {
    ret = eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                       "the Docker daemon at %s speaks API %s; the docker runtime needs %d.%d "
                       "or newer",
                       api->host, v, DOCKER_API_MIN_MAJOR, DOCKER_API_MIN_MINOR);
    json_decref(reply);
    goto out;
  }
  if (major > DOCKER_API_MAX_MAJOR ||
      (major == DOCKER_API_MAX_MAJOR && minor > DOCKER_API_MAX_MINOR)) {
    major = DOCKER_API_MAX_MAJOR;
    minor = DOCKER_API_MAX_MINOR;
  }
  snprintf(api->version, sizeof(api->version), "%d.%d", major, minor);
  /* Podman names itself in the first component ("Podman Engine"). */
  const char *name =
      json_string_value(json_object_get(json_array_get(json_object_get(reply, "Components"), 0),
                                        "Name"));
  if (name == NULL || name[0] == '\0')
    name = "Docker Engine";
  api->podman = strstr(name, "Podman") != NULL;
  snprintf(api->engine, sizeof(api->engine), "%s %s", name, engine ? engine : "(no version)");
  json_decref(reply);
  api->negotiated = true;
out:
  pthread_mutex_unlock(&api->mu);
  return ret;
}

int docker_api_call(docker_api *api, eb_ctx *ctx, const char *method, const char *path,
                    const char *body, int64_t timeout_ms, long *status, json_t **reply,
                    eb_error **err) {
  int r = docker_api_negotiate(api, ctx, err);
  if (r < 0)
    return r;
  cleanup_free char *url = NULL;
  if (asprintf(&url, "%s/v%s%s", api->base, api->version, path) < 0)
    return eb_error_set(err, ENOMEM, "allocate a URL");
  return api_request(api, ctx, method, url, body, timeout_ms, status, reply, err);
}

/* ----------------------------------------------------------- the attach stream */

/* Waits until the stream's socket is ready for events (1), or ctx ends
 * (< 0 with EB_ERR_CANCELLED / EB_ERR_TIMEOUT). */
static int stream_wait(docker_stream *s, eb_ctx *ctx, short events, eb_error **err) {
  struct pollfd p[33];
  int ctx_fds[32];
  int n_ctx = eb_ctx_cancel_fds(ctx, ctx_fds, 32);
  if (n_ctx > 32)
    n_ctx = 32;
  p[0] = (struct pollfd){.fd = s->fd, .events = events};
  for (int i = 0; i < n_ctx; i++)
    p[1 + i] = (struct pollfd){.fd = ctx_fds[i], .events = POLLIN};
  for (;;) {
    eb_ctx_state st = eb_ctx_state_now(ctx);
    if (st == EB_CTX_CANCELLED)
      return eb_error_set(err, EB_ERR_CANCELLED, "attaching to the container: cancelled");
    if (st == EB_CTX_DEADLINE)
      return eb_error_set(err, EB_ERR_TIMEOUT, "attaching to the container: timed out");
    int64_t left = eb_ctx_remaining_ms(ctx);
    int wait_ms = left < 0 || left > 1000 ? 1000 : (int)left + 1;
    int r = poll(p, (nfds_t)(1 + n_ctx), wait_ms);
    if (r < 0 && errno != EINTR)
      return eb_error_set(err, errno, "poll on the Docker socket");
    if (r > 0 && p[0].revents != 0)
      return 1;
  }
}

int docker_stream_send(docker_stream *s, const char *data, size_t len, size_t *n, eb_error **err) {
  *n = 0;
  CURLcode c = curl_easy_send(s->curl, data, len, n);
  if (c == CURLE_AGAIN)
    return 1;
  if (c != CURLE_OK)
    return eb_error_set(err, EB_ERR_SANDBOX, "write to the container's stdin: %s",
                        curl_easy_strerror(c));
  return 0;
}

int docker_stream_recv(docker_stream *s, char *buf, size_t size, size_t *n, eb_error **err) {
  *n = 0;
  if (s->pending_len > 0) {
    size_t k = s->pending_len < size ? s->pending_len : size;
    memcpy(buf, s->pending, k);
    memmove(s->pending, s->pending + k, s->pending_len - k);
    s->pending_len -= k;
    *n = k;
    return 0;
  }
  CURLcode c = curl_easy_recv(s->curl, buf, size, n);
  if (c == CURLE_AGAIN)
    return 1;
  if (c != CURLE_OK)
    return eb_error_set(err, EB_ERR_SANDBOX, "read the container's output: %s",
                        curl_easy_strerror(c));
  return 0;
}

void docker_stream_close_write(docker_stream *s) {
  if (s->fd >= 0)
    shutdown(s->fd, SHUT_WR);
}

void docker_stream_close(docker_stream *s) {
  if (s->curl != NULL)
    curl_easy_cleanup(s->curl);
  free(s->pending);
  memset(s, 0, sizeof(*s));
  s->fd = -1;
}

/* Sends all of data, waiting for the socket as needed. */
static int stream_send_all(docker_stream *s, eb_ctx *ctx, const char *data, size_t len,
                           eb_error **err) {
  while (len > 0) {
    size_t n = 0;
    int r = docker_stream_send(s, data, len, &n, err);
    if (r < 0)
      return r;
    if (r == 1) {
      r = stream_wait(s, ctx, POLLOUT, err);
      if (r < 0)
        return r;
      continue;
    }
    data += n;
    len -= n;
  }
  return 0;
}

/* The status code of an HTTP answer's first line, 0 if malformed. */
static long answer_status(const char *head) {
  long status = 0;
  if (strncmp(head, "HTTP/1.", 7) != 0 || sscanf(head + 8, " %ld", &status) != 1)
    return 0;
  return status;
}

int docker_attach(docker_api *api, eb_ctx *ctx, const char *id, docker_stream *s, long *status,
                  eb_error **err) {
  memset(s, 0, sizeof(*s));
  s->fd = -1;
  *status = 0;
  int r = docker_api_negotiate(api, ctx, err);
  if (r < 0)
    return r;
  eb_http_global_init();
  CURL *curl = curl_easy_init();
  if (curl == NULL)
    return eb_error_set(err, ENOMEM, "curl_easy_init");
  s->curl = curl;
  curl_easy_setopt(curl, CURLOPT_URL, api->base);
  if (api->socket_path != NULL)
    curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, api->socket_path);
  curl_easy_setopt(curl, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
  CURLcode c = curl_easy_perform(curl);
  curl_socket_t fd = CURL_SOCKET_BAD;
  if (c == CURLE_OK)
    c = curl_easy_getinfo(curl, CURLINFO_ACTIVESOCKET, &fd);
  if (c != CURLE_OK || fd == CURL_SOCKET_BAD) {
    eb_error cause = {.msg = (char *)curl_easy_strerror(c)};
    r = unreachable(api, err, &cause);
    docker_stream_close(s);
    return r;
  }
  s->fd = (int)fd;

  /* The upgrade makes the daemon hand the connection over to the raw
   * stream (101); older daemons answer 200 and do the same. */
  cleanup_free char *request = NULL;
  int len = asprintf(&request,
                     "POST /v%s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
                     "Host: %s\r\n"
                     "User-Agent: execbox/" EXECBOX_VERSION "\r\n"
                     "Content-Length: 0\r\n"
                     "Connection: Upgrade\r\n"
                     "Upgrade: tcp\r\n"
                     "\r\n",
                     api->version, id, api->host_header);
  if (len < 0) {
    docker_stream_close(s);
    return eb_error_set(err, ENOMEM, "allocate the attach request");
  }
  r = stream_send_all(s, ctx, request, (size_t)len, err);
  if (r < 0) {
    docker_stream_close(s);
    return r;
  }

  /* The answer's head, up to the blank line; what follows is stream. */
  char *head = malloc(MAX_ANSWER_HEADER + 1);
  size_t have = 0;
  char *end = NULL;
  if (head == NULL) {
    docker_stream_close(s);
    return eb_error_set(err, ENOMEM, "allocate the attach answer");
  }
  while (end == NULL) {
    if (have == MAX_ANSWER_HEADER) {
      r = eb_error_set(err, EB_ERR_PROTOCOL, "the daemon's answer to attach has no end of header");
      goto fail;
    }
    size_t n = 0;
    r = docker_stream_recv(s, head + have, MAX_ANSWER_HEADER - have, &n, err);
    if (r < 0)
      goto fail;
    if (r == 1) {
      r = stream_wait(s, ctx, POLLIN, err);
      if (r < 0)
        goto fail;
      continue;
    }
    if (n == 0) {
      r = eb_error_set(err, EB_ERR_PROTOCOL, "the daemon closed the attach connection");
      goto fail;
    }
    have += n;
    head[have] = '\0';
    end = strstr(head, "\r\n\r\n");
  }
  *status = answer_status(head);
  size_t head_len = (size_t)(end + 4 - head);
  if (*status == 101 || *status == 200) {
    s->pending_len = have - head_len;
    if (s->pending_len > 0) {
      s->pending = malloc(s->pending_len);
      if (s->pending == NULL) {
        r = eb_error_set(err, ENOMEM, "allocate the stream");
        goto fail;
      }
      memcpy(s->pending, head + head_len, s->pending_len);
    }
    free(head);
    return 0;
  }
  /* An error: the body (JSON with a message) follows, usually whole. */
  for (int tries = 0; tries < 50 && have < MAX_ANSWER_HEADER && strchr(end + 4, '}') == NULL;
       tries++) {
    size_t n = 0;
    int rr = docker_stream_recv(s, head + have, MAX_ANSWER_HEADER - have, &n, NULL);
    if (rr < 0 || (rr == 0 && n == 0))
      break;
    if (rr == 1) {
      if (stream_wait(s, ctx, POLLIN, NULL) < 0)
        break;
      continue;
    }
    have += n;
    head[have] = '\0';
  }
  {
    const char *open = strchr(end + 4, '{');
    const char *close = strrchr(end + 4, '}');
    json_t *reply = open && close > open ? json_loadb(open, (size_t)(close - open + 1), 0, NULL) : NULL;
    r = eb_error_set(err, EB_ERR_SANDBOX, "attach to container: %s (HTTP %ld)",
                     docker_api_message(reply), *status);
    json_decref(reply);
  }
fail:
  free(head);
  docker_stream_close(s);
  return r < 0 ? r : -1;
}
