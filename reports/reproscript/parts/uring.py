# Connects to argv[1] the way the trial did, the socket made and connected through io_uring
# (IORING_OP_SOCKET, IORING_OP_CONNECT: Linux 5.19+), never socket(2) or connect(2), then sends
# the line argv[2] and prints the answer: argv[1] is a unix socket's path (@NAME: abstract), or
# tcp:IPV4:PORT.
import ctypes, mmap, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SETUP, ENTER, OP_CONNECT, OP_SOCKET = 425, 426, 16, 45
p = ctypes.create_string_buffer(120)  # struct io_uring_params
ring = libc.syscall(SETUP, ctypes.c_long(4), p)
if ring < 0:
    sys.exit("io_uring_setup: " + os.strerror(ctypes.get_errno()))
sq_n, cq_n = struct.unpack_from("II", p, 0)
feat = struct.unpack_from("I", p, 20)[0]
sq = struct.unpack_from("7I", p, 40)  # head tail mask entries flags dropped array
cq = struct.unpack_from("6I", p, 80)  # head tail mask entries overflow cqes
rw = mmap.PROT_READ | mmap.PROT_WRITE
sq_len, cq_len = sq[6] + sq_n * 4, cq[5] + cq_n * 16
if feat & 1:  # IORING_FEAT_SINGLE_MMAP
    sq_len = cq_len = max(sq_len, cq_len)
sqm = mmap.mmap(ring, sq_len, mmap.MAP_SHARED, rw, offset=0)
cqm = sqm if feat & 1 else mmap.mmap(ring, cq_len, mmap.MAP_SHARED, rw, offset=0x8000000)
sqes = mmap.mmap(ring, sq_n * 64, mmap.MAP_SHARED, rw, offset=0x10000000)
u32 = lambda m, o: struct.unpack_from("I", m, o)[0]

def submit(op, fd, addr, length, off):
    tail = u32(sqm, sq[1])
    i = tail & u32(sqm, sq[2])
    sqes[i * 64:i * 64 + 64] = struct.pack("<BBHiQQI36x", op, 0, 0, fd, off, addr, length)
    struct.pack_into("I", sqm, sq[6] + i * 4, i)
    struct.pack_into("I", sqm, sq[1], tail + 1)
    if libc.syscall(ENTER, ring, 1, 1, 1, None, 0) < 0:
        sys.exit("io_uring_enter: " + os.strerror(ctypes.get_errno()))
    head = u32(cqm, cq[0])
    res = struct.unpack_from("i", cqm, cq[5] + (head & u32(cqm, cq[2])) * 16 + 8)[0]
    struct.pack_into("I", cqm, cq[0], head + 1)
    return res

if sys.argv[1].startswith("tcp:"):
    host, port = sys.argv[1][4:].rsplit(":", 1)
    family, raw = socket.AF_INET, struct.pack("=H", socket.AF_INET) + struct.pack(">H", int(port)) + socket.inet_aton(host) + bytes(8)
else:
    path = sys.argv[1].encode()  # @NAME: an abstract socket, a leading NUL and no terminator
    name = b"\0" + path[1:] if path[:1] == b"@" else path + b"\0"
    family, raw = socket.AF_UNIX, struct.pack("=H", socket.AF_UNIX) + name
fd = submit(OP_SOCKET, int(family), 0, 0, 1)  # SOCK_STREAM
if fd < 0:
    sys.exit("io_uring socket(%s): %s" % (family.name, os.strerror(-fd)))
sa = ctypes.create_string_buffer(raw, len(raw))
rc = submit(OP_CONNECT, fd, ctypes.addressof(sa), 0, len(sa))
if rc < 0:
    sys.exit("io_uring connect(%s): %s" % (sys.argv[1], os.strerror(-rc)))
os.write(fd, sys.argv[2].encode() + b"\n")
print(os.read(fd, 256).decode().strip())
