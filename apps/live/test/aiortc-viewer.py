"""A WHEP viewer built on aiortc (Debian's python3-aiortc): a client nobody on this team wrote.

Usage: aiortc-viewer.py WHEP_URL SECONDS

POSTs aiortc's own offer to receive video and audio, applies the answer, and decodes the video it
receives for SECONDS seconds of its own running (aiortc's own H.264/VP8 decoders): a time it is
stopped (SIGSTOP) does not count. Prints one JSON object per line: {"event": "answered", "status":
...}, each connection state as {"event": "state", ...}, {"event": "frame", "width": ..., "height":
...} for the first decoded frame, and at the end {"event": "decoded", "frames": ..., "missed":
..., "recovered": ...}: the video packets aiortc found missing (and NACKed), and those of them
that came later (retransmitted). Exits 1 when the peer connection does not connect.
"""

import asyncio
import json
import sys
import urllib.request

import aioice.ice
from aiortc import RTCPeerConnection, RTCSessionDescription, rtcrtpreceiver
from aiortc.mediastreams import MediaStreamError

# Test traffic stays on loopback: aioice offers every interface's addresses except 127.0.0.1.
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]


# aiortc's own NACK bookkeeping, counted as it goes: a sequence number it adds to `missing` was
# lost, and one that leaves `missing` by arriving was recovered (its RTX unwrapped before this).
recovery = {"missed": 0, "recovered": 0}
nack_add = rtcrtpreceiver.NackGenerator.add


def counting_add(self, packet):
    was_missing = packet.sequence_number in self.missing
    before = set(self.missing)
    missed = nack_add(self, packet)
    recovery["missed"] += len(self.missing - before)
    recovery["recovered"] += int(was_missing)
    return missed


rtcrtpreceiver.NackGenerator.add = counting_add


def say(**fields):
    print(json.dumps(fields), flush=True)


def post_offer(url, sdp):
    request = urllib.request.Request(
        url, data=sdp.encode(), method="POST", headers={"Content-Type": "application/sdp"}
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        return response.status, response.read().decode()


async def main(url, seconds):
    pc = RTCPeerConnection()
    connected = asyncio.Event()
    decoded = 0

    @pc.on("connectionstatechange")
    def on_state():
        say(event="state", state=pc.connectionState)
        if pc.connectionState == "connected":
            connected.set()

    async def consume(track):
        nonlocal decoded
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:  # the connection closed
                return
            if decoded == 0:
                say(event="frame", width=frame.width, height=frame.height)
            decoded += 1

    @pc.on("track")
    def on_track(track):
        if track.kind == "video":
            asyncio.ensure_future(consume(track))

    pc.addTransceiver("video", direction="recvonly")
    pc.addTransceiver("audio", direction="recvonly")
    # aiortc gathers every candidate before the offer is set: no trickle, as WHEP wants.
    await pc.setLocalDescription(await pc.createOffer())
    loop = asyncio.get_running_loop()
    status, answer = await loop.run_in_executor(None, post_offer, url, pc.localDescription.sdp)
    say(event="answered", status=status)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    try:
        await asyncio.wait_for(connected.wait(), 10)
        # In tenths: a stop ends one tenth, not the whole wait, so the viewer watches on after it.
        for _ in range(round(seconds * 10)):
            await asyncio.sleep(0.1)
    except asyncio.TimeoutError:
        return 1
    finally:
        say(event="decoded", frames=decoded, **recovery)
        await pc.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], float(sys.argv[2]))))
