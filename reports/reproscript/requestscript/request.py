# One request, sent byte for byte through the proxy the sandbox gives the command (its
# environment), or straight to the destination: VIA (http: an absolute-URI request to the HTTP
# proxy; connect: CONNECT, then the request in the tunnel; socks: SOCKS5 CONNECT with the name as
# sent, then the request; socks-ip: the same with HOST an IPv4 address, sent as one), HOST as hex (it may hold any byte), PORT, METHOD, PATH, and AUTH
# (noauth: leave the proxy's credentials out, as a process that found its port would), and
# CARRY, optional: the secrets the request takes along, comma-separated (env:NAME a variable,
# file:~/PATH a file), each read here, inside the sandbox, and sent in a header of its own as a
# command taking them out would. Prints what came back.
import os, socket, struct, sys
from urllib.parse import urlsplit

via, host, port, method, path = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
with_auth = sys.argv[6] != "noauth"
carry = sys.argv[7].split(",") if len(sys.argv) > 7 and sys.argv[7] else []
authority = host + b":" + str(port).encode()

def carried():
    out = b""
    for i, src in enumerate(carry, 1):
        kind, _, what = src.partition(":")
        try:
            v = os.environ[what] if kind == "env" else open(os.path.expanduser(what)).read()
        except (KeyError, OSError) as e:
            print("carry %s: cannot read it: %r" % (src, e))
            continue
        print("carry %s: %d bytes" % (src, len(v)))
        # A header is one line: a file's lines are joined by spaces.
        out += b"X-Sandcheck-Carry-%d: %s\r\n" % (i, " ".join(v.split()).encode())
    return out

def proxy(names):
    for n in names:
        v = os.environ.get(n, "")
        if v and (n.lower().startswith("http") or v.startswith("socks")):
            u = urlsplit(v)
            if not with_auth:
                return u.hostname, u.port, None, None
            return u.hostname, u.port, u.username, u.password
    sys.exit("no proxy in the environment (%s)" % ", ".join(names))

def auth(user, pw):
    if not user:
        return b""
    import base64, urllib.parse
    cred = urllib.parse.unquote(user) + ":" + urllib.parse.unquote(pw or "")
    return b"Proxy-Authorization: Basic " + base64.b64encode(cred.encode()) + b"\r\n"

def request(target):
    body = b"" if method == "GET" else b"Content-Length: 0\r\n"
    return method.encode() + b" " + target + b" HTTP/1.1\r\nHost: " + authority + b"\r\n" + body + carried()

def first_line(c):
    data = b""
    while b"\r\n" not in data:
        chunk = c.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode("latin-1") or "(nothing came back)"

print("request.py: %s to port %d" % (via, port))  # the command ran
try:
    if via == "http":
        h, p, u, pw = proxy(["HTTP_PROXY", "http_proxy"])
        c = socket.create_connection((h, p), 10)
        c.sendall(request(b"http://" + authority + path.encode()) + auth(u, pw) + b"Connection: close\r\n\r\n")
        print(first_line(c))
    elif via == "connect":
        h, p, u, pw = proxy(["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"])
        c = socket.create_connection((h, p), 10)
        c.sendall(b"CONNECT " + authority + b" HTTP/1.1\r\nHost: " + authority + b"\r\n" + auth(u, pw) + b"\r\n")
        line = first_line(c)
        print("CONNECT: " + line)
        if " 200 " in line + " ":
            c.sendall(request(path.encode()) + b"Connection: close\r\n\r\n")
            print(first_line(c))
    elif via in ("socks", "socks-ip"):
        h, p, u, pw = proxy(["ALL_PROXY", "all_proxy", "FTP_PROXY", "ftp_proxy"])
        c = socket.create_connection((h, p), 10)
        if u:
            c.sendall(b"\x05\x01\x02")
            c.recv(2)
            from urllib.parse import unquote
            user, pwd = unquote(u).encode(), unquote(pw or "").encode()
            c.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(pwd)]) + pwd)
            c.recv(2)
        else:
            c.sendall(b"\x05\x01\x00")
            c.recv(2)
        if via == "socks-ip":
            c.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(host.decode()) + struct.pack(">H", port))
        else:
            c.sendall(b"\x05\x01\x00\x03" + bytes([len(host) % 256]) + host + struct.pack(">H", port))
        reply = c.recv(262)
        print("SOCKS5 reply %d" % (reply[1] if len(reply) > 1 else -1))
        if len(reply) > 1 and reply[1] == 0:
            c.sendall(request(path.encode()) + b"Connection: close\r\n\r\n")
            print(first_line(c))
    else:
        sys.exit("unknown way " + via)
except OSError as e:
    print("error: %s" % e)
