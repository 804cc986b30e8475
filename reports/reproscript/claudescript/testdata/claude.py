#!/usr/bin/env python3
# A stand-in for Claude Code in the reproducers' tests: it talks to the script's model as Claude
# Code does (the first turn offering Bash, then the tool's result) and runs the command it is
# asked for with http_proxy/HTTP_PROXY pointing at a forwarding proxy of its own. What it is
# called decides how it behaves:
#   open-claude    the proxy forwards to any host, listening before the command runs
#   strict-claude  the proxy forwards to allowed.sandcheck.test only (403 for the rest)
#   adopt-claude   as strict-claude, but through the caller's HTTP_PROXY when one is set (502
#                  when it is dead)
#   late-claude    as open-claude, but the proxy listens half a second after the command started
#   slow-claude    as open-claude, but the proxy answers its first request four seconds late
#   residue-claude as open-claude, and leaves .claude/.cc-writes in its working directory
#   no-claude      runs nothing, as a sandbox that refuses everything
import json, os, socket, subprocess, sys, threading, time, urllib.request
from urllib.parse import urlsplit

mode = os.path.basename(sys.argv[0])

first = threading.Lock()

def serve(c):
    if mode == "slow-claude" and first.acquire(blocking=False):
        time.sleep(4)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(4096)
        if not chunk:
            return c.close()
        data += chunk
    method, url, rest = data.split(b" ", 2)
    u = urlsplit(url.decode())
    if mode in ("strict-claude", "adopt-claude") and u.hostname != "allowed.sandcheck.test":
        c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return c.close()
    if mode == "adopt-claude" and os.environ.get("HTTP_PROXY"):
        p = urlsplit(os.environ["HTTP_PROXY"])
        try:
            up = socket.create_connection((p.hostname, p.port), 5)
        except OSError:
            c.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return c.close()
        up.sendall(data)
        while True:
            chunk = up.recv(4096)
            if not chunk:
                break
            c.sendall(chunk)
        return c.close()
    up = socket.create_connection((u.hostname, u.port or 80), 5)
    up.sendall(method + b" " + (u.path or "/").encode() + b" " + rest)
    while True:
        chunk = up.recv(4096)
        if not chunk:
            break
        c.sendall(chunk)
    c.close()

def listen(port, ready):
    if mode == "late-claude":
        time.sleep(0.5)
    ln = socket.socket()
    ln.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ln.bind(("127.0.0.1", port))
    ln.listen(8)
    ready.set()
    while True:
        c, _ = ln.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

base = os.environ["ANTHROPIC_BASE_URL"]

def post(messages):
    body = {"model": "x", "messages": messages, "tools": [{"name": "Bash"}]}
    req = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))

ask = [{"role": "user", "content": "go"}]
use = post(ask)["content"][0]
out = "refused"
if mode != "no-claude":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ready = threading.Event()
    threading.Thread(target=listen, args=(port, ready), daemon=True).start()
    if mode != "late-claude":
        ready.wait(30)
    proxy = "http://127.0.0.1:%d" % port
    env = dict(os.environ, http_proxy=proxy, HTTP_PROXY=proxy)
    r = subprocess.run(["sh", "-c", use["input"]["command"]], capture_output=True, text=True, env=env)
    out = r.stdout + r.stderr
if mode == "residue-claude":
    os.makedirs(".claude", exist_ok=True)
    open(".claude/.cc-writes", "w").close()
post(ask + [{"role": "assistant", "content": [use]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": out}]}])
print("done")
