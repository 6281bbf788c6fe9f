"""A WHIP publisher built on aiortc (Debian's python3-aiortc): a client nobody on this team wrote.

Usage: aiortc-publisher.py WHIP_URL TOKEN SECONDS

POSTs aiortc's own offer for a video and an audio track (aiortc 1.4 gives each m-section of the
bundle its own ICE credentials and candidates), applies the answer and sends ffmpeg's lavfi test
sources (testsrc2, a sine tone) for SECONDS seconds. Prints one JSON object per line:
{"event": "posting", "at": ...} (wall clock in ms, just before the WHIP POST),
{"event": "answered", "status": ..., "location": ...}, each connection state as
{"event": "state", "state": ...} and each state of the bundle's DTLS transport as
{"event": "dtls", "state": ...}. Exits 1 when the peer connection does not connect.
"""

import asyncio
import json
import sys
import time
import urllib.request

import aioice.ice
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.contrib.media import MediaPlayer

# Test traffic stays on loopback: aioice offers every interface's addresses except 127.0.0.1.
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]


def say(**fields):
    print(json.dumps(fields), flush=True)


def post_offer(url, token, sdp):
    request = urllib.request.Request(
        url,
        data=sdp.encode(),
        method="POST",
        headers={"Content-Type": "application/sdp", "Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        return response.status, response.headers.get("Location"), response.read().decode()


async def main(url, token, seconds):
    pc = RTCPeerConnection()
    connected = asyncio.Event()

    @pc.on("connectionstatechange")
    def on_state():
        say(event="state", state=pc.connectionState)
        if pc.connectionState == "connected":
            connected.set()

    video = MediaPlayer("testsrc2=size=320x180:rate=15", format="lavfi")
    audio = MediaPlayer("sine=frequency=440:sample_rate=48000", format="lavfi")
    pc.addTransceiver(video.video, direction="sendonly")
    pc.addTransceiver(audio.audio, direction="sendonly")
    # aiortc gathers every candidate before the offer is set: no trickle, as WHIP wants.
    await pc.setLocalDescription(await pc.createOffer())
    loop = asyncio.get_running_loop()
    say(event="posting", at=time.time() * 1000)
    status, location, answer = await loop.run_in_executor(
        None, post_offer, url, token, pc.localDescription.sdp
    )
    say(event="answered", status=status, location=location)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    # aiortc 1.4 stays "connected" when the other side ends DTLS (close_notify); the bundle's
    # DTLS transport (the first transceiver's) reports it.
    transport = pc.getTransceivers()[0].sender.transport

    @transport.on("statechange")
    def on_dtls_state():
        say(event="dtls", state=transport.state)

    try:
        await asyncio.wait_for(connected.wait(), 10)
        await asyncio.sleep(seconds)
    except asyncio.TimeoutError:
        return 1
    finally:
        await pc.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]))))
