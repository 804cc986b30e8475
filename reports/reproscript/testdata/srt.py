#!/usr/bin/env python3
# A stand-in for srt in the condition reproducers' tests: `srt --settings FILE -c CMD` runs CMD
# with HTTP_PROXY/http_proxy pointing at a forwarding proxy (absolute-URI requests only). What it
# is called decides how it behaves:
#   adopt-srt  the proxy's upstream is the caller's HTTP_PROXY when one is set (502 when it is
#              dead), and settings' httpProxyPort is given to the command unchecked
#   plain-srt  the proxy goes direct whatever the caller's environment says, and an
#              httpProxyPort that does not answer as a proxy is refused before CMD runs
#   no-srt     runs nothing, as a sandbox that refuses everything
import json, os, socket, subprocess, sys, threading
from urllib.parse import urlsplit

mode = os.path.basename(sys.argv[0])
settings, cmd = json.load(open(sys.argv[2])), sys.argv[4]
upstream = os.environ.get("HTTP_PROXY") if mode == "adopt-srt" else None

def serve(c):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(4096)
        if not chunk:
            return c.close()
        data += chunk
    method, url, rest = data.split(b" ", 2)
    u = urlsplit(url.decode())
    try:
        if upstream:
            p = urlsplit(upstream)
            up = socket.create_connection((p.hostname, p.port), 5)
            up.sendall(data)
        else:
            up = socket.create_connection((u.hostname, u.port or 80), 5)
            up.sendall(method + b" " + (u.path or "/").encode() + b" " + rest)
    except OSError:
        c.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return c.close()
    while True:
        chunk = up.recv(4096)
        if not chunk:
            break
        c.sendall(chunk)
    c.close()

def listen(ln):
    while True:
        c, _ = ln.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def answers_as_proxy(port):
    try:
        c = socket.create_connection(("127.0.0.1", port), 2)
        c.sendall(b"CONNECT allowed.sandcheck.test:80 HTTP/1.1\r\n\r\n")
        return c.recv(12).startswith(b"HTTP/1.")
    except OSError:
        return False

if mode == "no-srt":
    sys.exit("refused")
port = settings.get("network", {}).get("httpProxyPort")
if port and mode == "plain-srt" and not answers_as_proxy(port):
    sys.exit("Error: the proxy at httpProxyPort %d does not answer as a proxy" % port)
if not port:
    ln = socket.socket()
    ln.bind(("127.0.0.1", 0))
    ln.listen(8)
    port = ln.getsockname()[1]
    threading.Thread(target=listen, args=(ln,), daemon=True).start()
proxy = "http://127.0.0.1:%d" % port
env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
env.update(http_proxy=proxy, HTTP_PROXY=proxy)
sys.exit(subprocess.run(["sh", "-c", cmd], env=env).returncode)
