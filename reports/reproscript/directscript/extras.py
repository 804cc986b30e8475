# The fixture's hosts for requests that use no proxy, besides serve.py's TCP listeners: `python3
# extras.py LOG DENIED RESOLVER`, in the fixture's namespace, as root. It logs to LOG a datagram
# to DENIED's UDP port 7 ("denied@7/udp ..."), answering it; an ICMP echo request to DENIED
# ("denied@icmp ..."), which the kernel answers; a query to RESOLVER's port 53, over UDP or TCP
# ("resolver@53/udp query NAME"), answered NXDOMAIN. It writes "ready" when all listen.
import socket, struct, sys, threading

log = open(sys.argv[1], "a", buffering=1)
denied, resolver = sys.argv[2], sys.argv[3]
lock = threading.Lock()

def note(s):
    with lock:
        log.write(s + "\n")

def qname(q):
    labels, i = [], 12
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("latin-1"))
        i += 1 + q[i]
    return ".".join(labels)

def nxdomain(q):
    return q[:2] + struct.pack(">H", 0x8183) + q[4:]

def udp_echo():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((denied, 7))
    ready.release()
    while True:
        data, peer = s.recvfrom(2048)
        note("denied@7/udp datagram %r from %s" % (data[:64], peer[0]))
        s.sendto(data, peer)

def icmp():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ready.release()
    while True:
        pkt, _ = s.recvfrom(2048)
        ihl = (pkt[0] & 15) * 4
        if socket.inet_ntoa(pkt[16:20]) == denied and len(pkt) > ihl and pkt[ihl] == 8:
            note("denied@icmp echo request from %s" % socket.inet_ntoa(pkt[12:16]))

def dns_udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((resolver, 53))
    ready.release()
    while True:
        q, peer = s.recvfrom(512)
        note("resolver@53/udp query %s" % qname(q))
        s.sendto(nxdomain(q), peer)

def dns_tcp():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((resolver, 53))
    s.listen(8)
    ready.release()
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        try:
            q = c.recv(514)[2:]
            note("resolver@53/tcp query %s" % qname(q))
            a = nxdomain(q)
            c.sendall(struct.pack(">H", len(a)) + a)
        except OSError:
            pass
        c.close()

ready = threading.Semaphore(0)
for f in (udp_echo, icmp, dns_udp, dns_tcp):
    threading.Thread(target=f, daemon=True).start()
for _ in range(4):
    ready.acquire()
note("ready")
threading.Event().wait()
