# A parent proxy, as a company's or a local forwarding one would be: it enforces nothing. Each
# request it is asked for (CONNECT HOST:PORT, or an absolute-URI one) is logged to LOG as
# "parent@PORT FIRST-LINE" and forwarded, the name resolved here as this host resolves it. It
# writes "ready" when it listens on ADDR:PORT.
import socket, sys, threading

log = open(sys.argv[1], "a", buffering=1)
host, port = sys.argv[2].rsplit(":", 1)
lock = threading.Lock()

def note(s):
    with lock:
        log.write(s + "\n")

def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

def handle(c):
    c.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = c.recv(4096)
        if not chunk:
            return c.close()
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    line, _, headers = head.partition(b"\r\n")
    note("parent@" + port + " " + line.decode("latin-1"))
    method, target, version = line.decode("latin-1").split(" ", 2)
    if method == "CONNECT":
        authority, first = target, b""
    else:
        authority, _, path = target.split("://", 1)[1].partition("/")
        first = ("%s /%s %s\r\n" % (method, path, version)).encode() + headers + b"\r\n\r\n" + rest
    name, _, p = authority.rpartition(":") if ":" in authority else (authority, "", "80")
    try:
        up = socket.create_connection((name.strip("[]"), int(p or 80)), timeout=5)
    except OSError as e:
        c.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return c.close()
    up.settimeout(None)
    c.settimeout(None)
    if method == "CONNECT":
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            up.sendall(rest)
    else:
        up.sendall(first)
    threading.Thread(target=pipe, args=(up, c), daemon=True).start()
    pipe(c, up)

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host, int(port)))
s.listen(16)
note("ready")
while True:
    conn, _ = s.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
