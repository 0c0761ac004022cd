# Sourced by the bench shell scripts that start inferd with --port-file and --http-port 0.
#
#   inferd_ready PORT_FILE LOG_FILE   # prints the HTTP port once inferd is ready
#
# Waits up to 120 s for the port file inferd writes once it listens ({"http": N, ...}), then
# for /v2/health/ready; on no port file it prints the server's log to stderr and fails.
inferd_ready() {
  local port_file=$1 log_file=$2 port=""
  for _ in $(seq 1200); do
    port="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["http"])' \
      "$port_file" 2>/dev/null)" && break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "inferd wrote no port file ($port_file); its log:" >&2
    cat "$log_file" >&2
    return 1
  fi
  until curl -sf "http://127.0.0.1:$port/v2/health/ready" > /dev/null; do sleep 0.1; done
  echo "$port"
}
