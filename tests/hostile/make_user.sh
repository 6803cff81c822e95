#!/bin/sh
# Creates the unprivileged user the hostile battery runs execbox as. Needs
# root; as anyone else the ".user" cases skip themselves (exit 77).
user=${1:-execbox-test}
if id "$user" >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "not root: cannot create $user; the unprivileged cases will be skipped"
  exit 0
fi
useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
