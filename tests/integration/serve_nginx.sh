#!/bin/sh
# Scale-out on loopback: two `execbox serve` instances behind nginx (with
# the retry rules of deploy/nginx/execbox.conf), both serve traffic, one is
# killed mid-run, and the next requests still succeed.
. "$(dirname "$0")/lib.sh" "$1"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx is not installed (apt-get install nginx-light)"
[ "$(id -u)" = 0 ] || skip "nginx as set up here needs root"
A= B= NG=
trap 'kill -9 $A $B 2>/dev/null; [ -n "$NG" ] && kill $NG 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

start_serve() { # NAME -> sets PID_x, PORT_x
  "$EXECBOX" serve --runtime "$RUNTIME" -l 127.0.0.1:0 2>"$T/$1.err" &
  eval "PID_$1=$!"
  i=0
  while ! grep -q 'http://' "$T/$1.err" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  eval "PORT_$1=$(grep -o 'http://[^ ]*' "$T/$1.err" | head -1 | sed 's/.*://')"
}
start_serve a
start_serve b
A=$PID_a B=$PID_b
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$T/nginx"
cat >"$T/nginx.conf" <<CONF
worker_processes 1;
pid $T/nginx.pid;
error_log $T/nginx-error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $T/nginx/body;
  proxy_temp_path $T/nginx/proxy;
  fastcgi_temp_path $T/nginx/fastcgi;
  uwsgi_temp_path $T/nginx/uwsgi;
  scgi_temp_path $T/nginx/scgi;
  upstream execbox {
    least_conn;
    server 127.0.0.1:$PORT_a max_fails=1 fail_timeout=30s;
    server 127.0.0.1:$PORT_b max_fails=1 fail_timeout=30s;
  }
  server {
    listen 127.0.0.1:$PORT;
    location / {
      proxy_pass http://execbox;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error http_503 http_429;
      proxy_next_upstream_tries 2;
      proxy_read_timeout 60s;
      proxy_buffering off;
    }
  }
}
CONF
"$NGINX" -p "$T" -c "$T/nginx.conf" -g 'daemon off;' 2>"$T/nginx.out" &
NG=$!
i=0
while ! curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
export EXECBOX_REMOTE_URL="http://127.0.0.1:$PORT" EXECBOX_EXEC="$EXECBOX" OUTDIR="$T/out.d"
mkdir -p "$OUTDIR"

batch() { # FROM TO CODE-SECONDS
  seq "$1" "$2" | xargs -P 8 -I{} sh -c \
    '"$EXECBOX_EXEC" run --runtime remote -l sh -c "sleep '"$3"'; echo tok-{}" >"$OUTDIR/{}" 2>&1; echo $? >"$OUTDIR/{}.rc"'
}
check() { # FROM TO WHAT
  bad=0
  i=$1
  while [ $i -le $2 ]; do
    [ "$(cat "$OUTDIR/$i")" = "tok-$i" ] || bad=$((bad + 1))
    i=$((i + 1))
  done
  [ $bad -eq 0 ] || fail "$3: $bad of $(($2 - $1 + 1)) requests failed (e.g. $(cat "$OUTDIR/$1"))"
}

batch 1 40 0.05
check 1 40 "both up"
na=$(grep -c '"path":"/v1/execute","status":200' "$T/a.err")
nb=$(grep -c '"path":"/v1/execute","status":200' "$T/b.err")
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || fail "both instances should serve traffic (a: $na, b: $nb)"

# Kill one instance while requests run; those on it may fail; the next succeed.
batch 41 56 1 &
RUNNING=$!
sleep 0.5
kill -9 "$A"
wait "$RUNNING"
batch 57 96 0.05
check 57 96 "after one instance died"
echo "served: a=$na b=$nb before the kill"

# The killed instance could not remove its (empty) cgroups; the next execbox
# would, after 10 s. Remove them now so later tests see a clean host.
for _ in $(seq 50); do
  left=0
  for d in /sys/fs/cgroup/*/execbox/run-$A-* /sys/fs/cgroup/execbox/run-$A-*; do
    [ -d "$d" ] || continue
    rmdir "$d" 2>/dev/null || left=1
  done
  [ $left = 0 ] && break
  sleep 0.2
done

[ "$FAILURES" -eq 0 ] || exit 1
echo "ok [serve_nginx, runtime $RUNTIME]"
