# The model behind Claude Code, scripted: a Messages API server on 127.0.0.1 that answers the
# first turn with one Bash tool call running COMMAND (with INPUT, more tool input as JSON), and
# the turn that carries its result with "done". It writes its port to DIR/model.port, the tool
# result to DIR/tool_result, and each request it does not expect (answered with an API error) to
# DIR/unexpected. It decides only what Claude Code is asked to run; Claude Code does the rest.
#   python3 model.py DIR COMMAND [INPUT]
import json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

out, command = sys.argv[1], sys.argv[2]
extra = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
TOOL_ID = "toolu_repro_01"
state = {"asked": False, "done": False}
lock = threading.Lock()

def result_of(body):
    for m in reversed(body.get("messages", [])):
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result" and b.get("tool_use_id") == TOOL_ID:
                c = b.get("content")
                if isinstance(c, list):
                    c = "\n".join(x.get("text", "") for x in c if x.get("type") == "text")
                return c or ""
    return None

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):  # Claude Code checks that the service answers before its first turn
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def error(self, why):
        with open(os.path.join(out, "unexpected"), "a") as f:
            f.write("%s %s: %s\n" % (self.command, self.path, why))
        data = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "scripted model: " + why}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self.path.startswith("/v1/messages"):
            return self.error("endpoint not scripted")
        result = result_of(body)
        tools = [t.get("name") for t in body.get("tools", [])]
        with lock:
            if result is not None and state["asked"] and not state["done"]:
                state["done"] = True
                with open(os.path.join(out, "tool_result"), "w") as f:
                    f.write(result)
                block, stop = {"type": "text", "text": "done"}, "end_turn"
            elif result is None and not state["asked"] and "Bash" in tools:
                state["asked"] = True
                block = {"type": "tool_use", "id": TOOL_ID, "name": "Bash",
                         "input": dict(extra, command=command, description="reproducer")}
                stop = "tool_use"
            else:
                return self.error("a turn the script does not answer (%d messages)" % len(body.get("messages", [])))
        self.answer(block, stop, body.get("stream", False))

    def answer(self, block, stop, stream):
        usage = {"input_tokens": 1, "output_tokens": 1}
        msg = {"id": "msg_repro", "type": "message", "role": "assistant", "model": "scripted",
               "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not stream:
            data = json.dumps(msg).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        events = [
            ("message_start", {"type": "message_start", "message": dict(msg, content=[], stop_reason=None)}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        data = "".join("event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(out, "model.port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(out, "model.port.tmp"), os.path.join(out, "model.port"))
server.serve_forever()
