"""The loopback HTTP ceiling: nginx answering POST /predict with a constant, body read in full.

DESIGN.md asks for inferd next to "a plain HTTP server (the loopback ceiling)". nginx is
the fastest plain server on these machines, so what inferd keeps of nginx's requests/s on
the same body, the same wrk and the same cores is the share of the ceiling it reaches.

For that ratio to be honest nginx must do the HTTP work inferd does short of inference:
accept the same keep-alive connections, parse the request and take the whole ~2 KB body
off the socket. Two ways to answer, chosen with `mode`:

  * "echo" (default when Debian's libnginx-mod-http-echo is installed, which nginx-light
    pulls in): `echo_read_request_body` reads the whole body into one memory buffer
    (client_body_buffer_size is larger than the body, client_body_in_single_buffer on, so
    nothing goes to a temp file), then `echo -n` sends the constant (chunked encoding);
  * "return": `return 200 '<constant>'`. nginx then *discards* the body: it still reads
    every byte off the socket (it must, to keep the connection alive) but into a small
    scratch buffer, never assembled; sends Content-Length. Slightly less work than inferd.

One single process (`daemon off; master_process off;` so worker_processes is 1), no access
log (inferd logs at warn), `keepalive_requests` unlimited like inferd, every path (pid,
error log, temp folders) inside the benchmark's temp folder, so it runs as root without
touching /etc/nginx or /var.
"""

import os
import shutil
from typing import List, Tuple

ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
ANSWER = '{"output":[0.5]}'


def find_binary(name: str = "nginx") -> str:
    """nginx's path, or "" (install with: apt-get install -y nginx-light)."""
    for candidate in (name, "/usr/sbin/nginx"):
        path = shutil.which(candidate)
        if path:
            return path
    return ""


def pick_mode(mode: str) -> str:
    if mode == "auto":
        return "echo" if os.path.exists(ECHO_MODULE) else "return"
    if mode == "echo" and not os.path.exists(ECHO_MODULE):
        raise RuntimeError(f"nginx mode echo needs {ECHO_MODULE} (Debian libnginx-mod-http-echo)")
    return mode


def write_config(work_dir: str, port: int, mode: str, body_bytes: int) -> Tuple[str, str]:
    """Writes <work_dir>/nginx/nginx.conf; returns (its path, its text) for the report."""
    prefix = os.path.join(work_dir, "nginx")
    os.makedirs(prefix, exist_ok=True)
    buffer_kb = max(16, body_bytes // 1024 + 8)  # whole body in one memory buffer
    if mode == "echo":
        head, answer = f"load_module {ECHO_MODULE};\n", \
            f"echo_read_request_body;\n      echo -n '{ANSWER}';"
    else:
        head, answer = "", f"return 200 '{ANSWER}';"
    temp = "\n".join(f"  {kind}_temp_path {prefix}/{kind}_temp;"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    text = f"""{head}daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
{temp}
  default_type application/json;
  keepalive_requests 2147483647;
  keepalive_timeout 300s;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location = /predict {{
      client_max_body_size 64m;
      client_body_buffer_size {buffer_kb}k;
      client_body_in_single_buffer on;
      {answer}
    }}
  }}
}}
"""
    path = os.path.join(prefix, "nginx.conf")
    with open(path, "w") as f:
        f.write(text)
    return path, text


def command(binary: str, config_path: str) -> List[str]:
    """-e and -p keep nginx's startup error log and prefix out of /var/log and /usr/share."""
    prefix = os.path.dirname(config_path)
    return [binary, "-e", os.path.join(prefix, "error.log"), "-p", prefix, "-c", config_path]
