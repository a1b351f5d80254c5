#!/usr/bin/env python3
"""Sound at the table in real browsers: the host's jukebox plays, two players' tables play the same moment.

Usage: Tests/browser/test_sound.py PATH/TO/hoard [--artefacts DIR] [--keep]

A 40 s tone (ffmpeg) is imported as a pack's Music/; the host opens the table and plays it from the jukebox; two
players, each in a headless Chromium with `--autoplay-policy=no-user-gesture-required`, have joined by the code.
Checked: 10 s after the host's play both players' `currentTime`s agree within 100 ms (each read with the machine's
clock beside it, so the time between the two reads does not count) and match the server's position; after a pause
both stop at the same place, and after play again they agree within 100 ms once more; an ambient sound plays for a
player while their token is within its radius (started as it moves in, in step with the host, stopped as it leaves)
and never for the other; the browse page lists the sound under its kind and plays it from its tile. The pack is
imported with Plugins/aac-rendition, so the Ogg tone gets an AAC rendition: Quinn's browser says it cannot play Ogg
(`canPlayType` stubbed before the page loads) and plays the rendition, in step with Pia, who plays the Ogg. Fails on
any script error.
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium) and ffmpeg.
"""
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from selenium.webdriver.support.ui import Select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_table import Seat  # noqa: E402
from test_web import TABLET, browser, png, start  # noqa: E402

AUTOPLAY = ("--autoplay-policy=no-user-gesture-required",)
PLUGINS = str(Path(__file__).resolve().parents[2] / "Plugins")
# A browser that cannot play Ogg, as Safari on an iPad: what the page asks before it chooses a sound's file.
NO_OGG = """const canPlay = HTMLMediaElement.prototype.canPlayType;
HTMLMediaElement.prototype.canPlayType = function (type) { return /ogg/.test(type) ? '' : canPlay.call(this, type); };"""


class Player(Seat):
    """A seat whose browser may play sound without a click (what the test allows in place of the one click)."""

    def __init__(self, name, size, shots):
        super().__init__(name, size, shots)
        self.driver.quit()
        self.driver = browser(*size, logs=("browser",), extra=AUTOPLAY)
        from selenium.webdriver.support.ui import WebDriverWait
        self.wait = WebDriverWait(self.driver, 30)

    def channel(self, name):
        """A channel's player: its currentTime, whether paused, and this machine's clock when read (s); None without."""
        return self.js("""const p = window.hoardTable?.sound?.players.get(arguments[0])?.audio;
            return p ? {time: p.currentTime, paused: p.paused, at: Date.now() / 1000, seeking: p.seeking} : null""", name)

    def music(self):
        """The music channel's player."""
        return self.channel("music")

    def settled(self, name="music"):
        """A channel once no seek is under way (a seek's currentTime is its target, not where it plays)."""
        for _ in range(20):
            reading = self.channel(name)
            if reading and not reading["seeking"]:
                return reading
            time.sleep(0.05)
        return self.channel(name)


def apart(a, b):
    """How far apart two seats play, from readings taken a moment apart: each reading's place at one instant."""
    if a["paused"] and b["paused"]:
        return abs(a["time"] - b["time"])
    return abs((a["time"] - a["at"]) - (b["time"] - b["at"]))


def main():
    arguments, shots, check, work, server = start(__doc__, "hoard-sound-")
    seats = []
    begun = time.monotonic()
    try:
        tone = work / "theme.ogg"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=44100:duration=40",
                        "-c:a", "libvorbis", "-q:a", "0", str(tone)], check=True)
        pack = work / "sounds.zip"
        with zipfile.ZipFile(pack, "w") as z:
            z.writestr("pack.json", '{"name": "sounds", "version": "1.0.0"}')
            z.write(tone, "Music/Theme.ogg")
            z.writestr("Tokens/walker.png", png(64, 64, (180, 40, 40, 255)))
        server.run("import", "--group", "default", "--plugins-dir", PLUGINS, str(pack))
        theme = server.call("GET", "/v1/assets?kind=audio&limit=10")["assets"]
        check.that(len(theme) == 1 and theme[0]["variants"][0]["mediaType"] == "audio/ogg", "the tone imports as a sound")
        compatible = (theme[0].get("compatible") or {}).get("digest")
        check.that(compatible and theme[0]["compatible"]["mediaType"] == "audio/mp4", "the import made its AAC rendition")
        created = server.call("POST", "/v1/sessions", {"name": "Tavern", "map": {"schema": "hoard.map/v1", "grid": {"width": 8, "height": 6}}})

        host = Player("host", (1280, 860), shots)
        seats.append(host)
        host.host_table(server, created["id"])
        host.visible("#jukebox")
        players = []
        for name in ("Pia", "Quinn"):
            player = Player(name.lower(), TABLET, shots)
            seats.append(player)
            players.append(player)
            if name == "Quinn":
                player.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_OGG})
            player.driver.get(server.base + f"/join/{created['code']}")
            player.visible("#join-name").send_keys(name)
            player.visible("#join-form button").click()
            player.until(lambda p=player: p.js("return document.body.dataset.live") == "connected", f"{name}'s channel")
        host.until(lambda: host.js("return document.querySelectorAll('#jukebox-track option').length") == 1, "the jukebox's list")
        Select(host.visible("#jukebox-track")).select_by_value(theme[0]["digest"])

        started = time.monotonic()
        host.visible("#jukebox-play").click()
        for player in players:
            player.until(lambda p=player: (p.music() or {}).get("paused") is False, f"{player.name}'s table to play")
        time.sleep(max(0, 10 - (time.monotonic() - started)))
        a, b = players[0].settled(), players[1].settled()
        check.that(apart(a, b) <= 0.1, f"10 s after play the players are {apart(a, b) * 1000:.0f} ms apart (at {a['time']:.2f} s)")
        check.that(9.5 <= a["time"] <= 11.5, f"and at about 10 s of the track ({a['time']:.2f} s)")
        fetched = "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/v1/blobs/'))"
        pia_got, quinn_got = (" ".join(player.js(fetched)) for player in players)
        ogg = theme[0]["variants"][0]["digest"]
        check.that(ogg in pia_got and compatible not in pia_got, "Pia, whose browser plays Ogg, plays the Ogg")
        check.that(compatible in quinn_got and ogg not in quinn_got, "Quinn, whose browser cannot, plays the AAC rendition")
        players[0].shot("sound-01-playing")

        host.visible("#jukebox-pause").click()
        for player in players:
            player.until(lambda p=player: (p.music() or {}).get("paused") is True, f"{player.name}'s table to pause")
        a, b = players[0].settled(), players[1].settled()
        check.that(apart(a, b) <= 0.1, f"paused, the players are {apart(a, b) * 1000:.0f} ms apart (at {a['time']:.2f} s)")
        time.sleep(1)
        host.visible("#jukebox-resume").click()
        for player in players:
            player.until(lambda p=player: (p.music() or {}).get("paused") is False, f"{player.name}'s table to play again")
        time.sleep(2)
        a, b = players[0].settled(), players[1].settled()
        check.that(apart(a, b) <= 0.1, f"after pause and play the players are {apart(a, b) * 1000:.0f} ms apart (at {a['time']:.2f} s)")
        # An ambient rain at (6.5, 1.5), radius 2: Pia hears it while her token is within the radius, told as it moves in
        # and out (at the position every seat plays), and Quinn, who has no token there, never has it.
        pia, quinn = players
        pia_id = pia.js("return window.hoardTable.me")
        art = server.call("GET", "/v1/assets?kind=token&limit=10")["assets"][0]["digest"]
        send = "return window.hoardTable.send(arguments[0]).then(() => true, (e) => String(e.message))"
        token = {"id": "pia-t", "asset": art, "x": 1, "y": 1, "number": 1, "owner": pia_id}
        check.that(host.js(send, {"kind": "add", "token": token}) is True, "the host gives Pia a token")
        pia.until(lambda: pia.token("pia-t") is not None, "Pia's token on her table")
        rain = {"kind": "play", "channel": "rain", "track": theme[0]["digest"], "loop": True, "at": [6.5, 1.5], "radius": 2}
        check.that(host.js(send, rain) is True, "the host plays the rain")
        host.until(lambda: (host.channel("rain") or {}).get("paused") is False, "the host's rain to play")
        time.sleep(1)
        check.that(pia.channel("rain") is None, "Pia, out of the radius, does not hear the rain")
        check.that(pia.js(send, {"kind": "move", "token": "pia-t", "x": 5, "y": 1}) is True, "Pia moves into the rain")
        pia.until(lambda: (pia.channel("rain") or {}).get("paused") is False, "Pia's table to play the rain")
        time.sleep(2)
        a, b = pia.settled("rain"), host.settled("rain")
        check.that(apart(a, b) <= 0.1, f"Pia plays the rain {apart(a, b) * 1000:.0f} ms apart from the host (at {a['time']:.2f} s)")
        check.that(pia.js(send, {"kind": "move", "token": "pia-t", "x": 1, "y": 1}) is True, "Pia walks out of it")
        pia.until(lambda: pia.channel("rain") is None, "Pia's table to stop the rain")
        check.that(quinn.channel("rain") is None, "Quinn never had the rain")
        # The browse page lists sounds under their kind, and plays one from its tile.
        host.driver.get(server.base + "/#/?kind=audio")
        host.visible(".tile .play-sound").click()
        host.until(lambda: host.js("return document.querySelector('.tile .play-sound').textContent") == "■", "the tile's sound to play")
        check.that(host.js("return [...document.querySelectorAll('.tile .name')].map((n) => n.textContent)") == ["Theme"],
                   "the browse page lists the sound, and only it, under audio")
        # Its page says what the sound is, as its descriptor does (the listing alone does not say).
        host.driver.get(server.base + "/#/asset/" + theme[0]["digest"])
        facts = lambda: host.js("return document.querySelector('.variants td[data-label=Sound]')?.textContent ?? ''")
        host.until(lambda: facts() != "", "the sound's page")
        check.that(facts() == "vorbis · mono · 44.1 kHz · 0:40", f"the sound's page tells its codec, channels, rate and length ({facts()!r})")
        for seat in seats:
            errors = [entry for entry in seat.driver.get_log("browser") if entry["level"] == "SEVERE"]
            check.that(not errors, f"{seat.name}'s console has no error" + "".join(f"\n      {e['message'][:200]}" for e in errors))
        print(f"sound test: {time.monotonic() - begun:.1f} s wall time")
    finally:
        for seat in seats:
            seat.driver.quit()
        server.stop()
        if not arguments.keep:
            subprocess.run(["rm", "-rf", str(work)], check=False)
    return check.report(shots, "sound")


if __name__ == "__main__":
    sys.exit(main())
