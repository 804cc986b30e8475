# One request that uses no proxy, as the trial's command made it: `python3 -c DIRECT VIA ADDR
# [NAME]`. VIA: direct (TCP to ADDR, IPv4 or [IPv6], then a GET), udp (one datagram to ADDR),
# icmp (an echo request to the address ADDR: a ping socket, else a raw one), dns-udp or dns-tcp
# (a TXT query for NAME to the resolver at ADDR). Prints what came back.
import socket, struct, sys

via, addr = sys.argv[1], sys.argv[2]
name = sys.argv[3] if len(sys.argv) > 3 else ""

def split(a):
    host, port = a.rsplit(":", 1)
    return host.strip("[]"), int(port)

def query():
    q = struct.pack(">HHHHHH", 0x5ca1, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 16, 1)  # TXT, IN

print("direct.py: %s to %s" % (via, addr))  # the command ran
try:
    if via == "direct":
        host, port = split(addr)
        c = socket.create_connection((host, port), 5)
        c.sendall(b"GET /repro/case HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n")
        print(c.recv(256).split(b"\r\n", 1)[0].decode("latin-1") or "(nothing came back)")
    elif via == "udp":
        host, port = split(addr)
        c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        c.settimeout(3)
        c.sendto(b"repro-case", (host, port))
        print("answer: %r" % c.recv(256))
    elif via == "icmp":
        try:
            c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
        except OSError:
            c = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        c.settimeout(3)
        body = struct.pack(">BBHHH", 8, 0, 0, 0x5ca1, 1) + b"repro-case"
        s = sum(struct.unpack(">%dH" % (len(body) // 2), body))
        s = (s >> 16) + (s & 0xffff)
        body = body[:2] + struct.pack(">H", ~(s + (s >> 16)) & 0xffff) + body[4:]
        c.sendto(body, (addr, 0))
        print("answer: %d bytes" % len(c.recv(256)))
    elif via in ("dns-udp", "dns-tcp"):
        host, port = split(addr)
        if via == "dns-udp":
            c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            c.settimeout(3)
            c.sendto(query(), (host, port))
            reply = c.recv(512)
        else:
            c = socket.create_connection((host, port), 3)
            q = query()
            c.sendall(struct.pack(">H", len(q)) + q)
            reply = c.recv(514)[2:]
        print("answer: rcode %d" % (reply[3] & 15) if len(reply) > 3 else "answer: none")
    else:
        sys.exit("unknown way " + via)
except OSError as e:
    print("error: %s" % e)
