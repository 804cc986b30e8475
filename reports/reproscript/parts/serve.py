# The fixture hosts: each ROLE@ADDR:PORT argument a TCP listener that logs every connection, the
# first line of every request and what it carries (X-Sandcheck-Carry-N headers, a request's
# secrets) to LOG ("ROLE@PORT accepted" / "ROLE@PORT GET /path" / "ROLE@PORT carried VALUE"),
# then answers 200 with its role. It writes "ready" when every listener is up.
import socket, sys, threading

log = open(sys.argv[1], "a", buffering=1)
lock = threading.Lock()

def note(s):
    with lock:
        log.write(s + "\n")

def serve(label, sock):
    while True:
        c, _ = sock.accept()
        threading.Thread(target=answer, args=(label, c), daemon=True).start()

def answer(label, c):
    note(label + " accepted")
    c.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    if data:
        note(label + " " + data.split(b"\r\n", 1)[0].decode("latin-1"))
        for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.lower().startswith(b"x-sandcheck-carry-"):
                note(label + " carried " + value.strip().decode("latin-1"))
        body = label.encode()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    c.close()

for arg in sys.argv[2:]:
    role, addr = arg.split("@", 1)
    host, port = addr.rsplit(":", 1)
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port)))
    s.listen(16)
    threading.Thread(target=serve, args=(role + "@" + port, s), daemon=True).start()
note("ready")
threading.Event().wait()
