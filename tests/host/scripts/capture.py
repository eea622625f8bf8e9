"""Record every frame one switch port carries, until SIGTERM: `capture.py IFACE OUTFILE`.

Run in the switch namespace (an AF_PACKET socket bound to the host's port sees all it sends
and receives); the frames, concatenated, are written to OUTFILE when it is told to stop.
"""
import signal
import socket
import sys

ETH_P_ALL = 0x0003
iface, out = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
sock.bind((iface, 0))
frames = []
signal.signal(signal.SIGTERM, lambda *_: (open(out, "wb").write(b"".join(frames)), sys.exit(0)))
print("capturing", flush=True)
while True:
    frames.append(sock.recv(65535))
