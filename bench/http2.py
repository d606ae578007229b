"""Would HTTP/2 make toolwire's ``https://`` requests faster? A loopback measurement.

Run: ``python bench/http2.py [--requests 300] [--concurrent 32] [--chunks 60]``.
Needs ``h2`` (httpx2's HTTP/2 support) and ``cryptography`` (for a throwaway certificate).

One TLS server on 127.0.0.1 with a self-signed certificate answers over HTTP/2 (the ``h2``
library) or HTTP/1.1 (the emulator's own server), whichever the client's ALPN asks for. Every
request is answered with a streamed body of ``--chunks`` server-sent events, as a model's reply
comes. httpx2's client (what toolwire sends ``https://`` with) makes the same requests both
ways: one after another on a warm connection (a run's turns), and ``--concurrent`` at once
(many runs sharing a model); plus the first request of a fresh client, which pays the TCP and
TLS handshakes. Medians of the per-request time are reported, HTTP/1.1 against HTTP/2.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import ipaddress
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files in ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def sse_chunks(count: int) -> list[bytes]:
    return [b'data: {"type":"delta","text":"' + b"x" * 80 + b'"}\n\n' for _ in range(count)]


async def serve_h2(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   chunks: list[bytes]) -> None:
    import h2.config
    import h2.connection
    import h2.events

    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    writer.write(conn.data_to_send())
    while True:
        data = await reader.read(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.StreamEnded):
                sid = event.stream_id
                conn.send_headers(sid, [(":status", "200"),
                                        ("content-type", "text/event-stream")])
                for n, chunk in enumerate(chunks):
                    conn.send_data(sid, chunk, end_stream=n == len(chunks) - 1)
                    writer.write(conn.data_to_send())
        writer.write(conn.data_to_send())
        await writer.drain()
    writer.close()


async def start_server(cert: Path, key: Path, chunks: list[bytes]) -> tuple[Any, int]:
    from toolwire.emulator._http import HttpResponse, _connection

    async def handle(_: Any) -> HttpResponse:
        async def body() -> Any:
            for chunk in chunks:
                yield chunk

        return HttpResponse(200, {"content-type": "text/event-stream"}, chunks=body())

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tls = writer.get_extra_info("ssl_object")
        if tls is None or tls.selected_alpn_protocol() != "h2":
            await _connection(handle, reader, writer)
            return
        try:
            await serve_h2(reader, writer, chunks)
        except (ConnectionError, asyncio.CancelledError):  # the client went, or the bench ended
            writer.close()

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    server = await asyncio.start_server(on_connect, "127.0.0.1", 0, ssl=ctx, backlog=1024)
    return server, int(server.sockets[0].getsockname()[1])


async def one(client: Any, url: str) -> float:
    started = time.perf_counter()
    async with client.stream("POST", url, content=b'{"stream": true}') as resp:
        async for _ in resp.aiter_raw():
            pass
    return time.perf_counter() - started


async def measure(url: str, cert: Path, http2: bool, requests: int, concurrent: int
                  ) -> dict[str, float]:
    import httpx2

    def client() -> Any:
        return httpx2.AsyncClient(http1=not http2, http2=http2, verify=str(cert),
                                  limits=httpx2.Limits(max_connections=concurrent * 2))

    firsts = []
    for _ in range(20):
        async with client() as fresh:
            firsts.append(await one(fresh, url))
    async with client() as warm:
        version = (await warm.post(url)).http_version
        sequential = [await one(warm, url) for _ in range(requests)]
        rounds = max(1, requests // concurrent)
        await asyncio.gather(*(one(warm, url) for _ in range(concurrent)))  # open them all
        started = time.perf_counter()
        for _ in range(rounds):
            await asyncio.gather(*(one(warm, url) for _ in range(concurrent)))
        together = (time.perf_counter() - started) / (rounds * concurrent)
    return {"version": version, "first": statistics.median(firsts),  # type: ignore[dict-item]
            "sequential": statistics.median(sequential), "concurrent": together}


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cert, key = certificate(Path(folder))
        server, port = await start_server(cert, key, sse_chunks(args.chunks))
        url = f"https://127.0.0.1:{port}/v1/messages"
        try:
            found = {}
            for http2 in (False, True, False, True):  # in turn; the second of each is kept
                found[http2] = await measure(url, cert, http2, args.requests, args.concurrent)
        finally:
            server.close()
    one1, two = found[False], found[True]
    rows = []
    for key, what in (("first", "first request of a new client (TCP + TLS + request)"),
                      ("sequential", "one after another on a warm connection"),
                      ("concurrent", f"{args.concurrent} at once, per request")):
        rows.append([what, f"{one1[key] * 1000:.2f}", f"{two[key] * 1000:.2f}",
                     f"{one1[key] / two[key]:.2f}x"])
    print(f"served as {one1['version']} and {two['version']}; {args.chunks} events a reply")
    print(table(["request", "HTTP/1.1 ms", "HTTP/2 ms", "HTTP/2 speed-up"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=32)
    parser.add_argument("--chunks", type=int, default=60)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
