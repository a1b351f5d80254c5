"""A TCP proxy that behaves like a slow Internet link: a shared bandwidth in each direction (every connection queues on
the same link, first come first served) and a fixed one-way delay. Used by Benchmarks/join.py to time joins as a remote
player sees them. Runs in a thread of the calling process:

    with SlowLink(target_port, mbit=20, rtt_ms=40) as link:
        ... connect to 127.0.0.1:link.port ...
"""
import asyncio, threading

from benchlib import free_port


class Link:
    """One direction of the link: a virtual clock of when the wire is free again."""

    def __init__(self, bytes_per_second):
        self.rate = bytes_per_second
        self.free_at = 0.0
        self.bytes = 0

    async def send(self, n):
        loop = asyncio.get_running_loop()
        start = max(self.free_at, loop.time())
        self.free_at = start + n / self.rate
        self.bytes += n
        await asyncio.sleep(self.free_at - loop.time())


class SlowLink:
    def __init__(self, target_port, mbit=20.0, rtt_ms=40.0):
        self.target_port = target_port
        self.port = free_port()
        self.delay = rtt_ms / 2000
        self.down = Link(mbit * 1e6 / 8)
        self.up = Link(mbit * 1e6 / 8)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *_):
        async def shut():
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        asyncio.run_coroutine_threadsafe(shut(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    def reset(self):
        """Zeroes the byte counters (between two measured runs)."""
        self.down.bytes = self.up.bytes = 0

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", self.port))
        self.ready.set()
        self.loop.run_forever()

    async def _connection(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(self._pipe(client_reader, server_writer, self.up), self._pipe(server_reader, client_writer, self.down),
                             return_exceptions=True)

    async def _pipe(self, reader, writer, link):
        """Forwards in order: each chunk leaves after the one-way delay, at the link's pace."""
        queue = asyncio.Queue()
        loop = asyncio.get_running_loop()

        async def feed():
            while data := await reader.read(16384):
                queue.put_nowait((loop.time() + self.delay, data))
            queue.put_nowait(None)

        async def drain():
            while (item := await queue.get()) is not None:
                due, data = item
                if due > loop.time():
                    await asyncio.sleep(due - loop.time())
                await link.send(len(data))
                writer.write(data)
                await writer.drain()
            writer.close()

        await asyncio.gather(feed(), drain(), return_exceptions=True)
        writer.close()
