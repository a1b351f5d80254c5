#!/usr/bin/env python3
"""Forgotten Adventures-style file names for Hoard: an out-of-process naming plugin (protocol 1, Plugins/README.md).

  Objects/Table_Wood_A1_2x1.png                  -> object "Table Wood A1", 2x1
  Creatures/Goblin_Archer_Large_Scale150_03.png  -> token "Goblin Archer 03", 2x2 (size word; Scale150 dropped)
  FA_Tokens/Humanoids/Bandit_Medium_01.webp      -> token "Humanoids/Bandit 01", 1x1

The first folder that names a kind (ignoring case and an FA_ prefix) gives the kind; the folders below it and the
words of the file name give the name; a trailing _NN (two digits) is a colour variant and stays in the name; _WxH on
objects and size words on tokens give the footprint; ScaleNN on tokens (art drawn larger than its square) is
dropped. Paths it does not recognise get null, so Hoard asks its next convention.
"""
import json
import re
import sys

PLUGIN_ID = "fa-naming"
FOLDERS = {"tokens": "token", "creatures": "token", "objects": "object", "props": "object", "textures": "texture",
           "terrain": "texture", "walls": "wall", "backgrounds": "background", "maps": "background"}
SIZES = {"tiny": 1, "small": 1, "medium": 1, "large": 2, "huge": 3, "gargantuan": 4}
EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp")


def name(path, kinds):
    parts = path.split("/")
    if len(parts) < 2 or not parts[-1].lower().endswith(EXTENSIONS):
        return None
    for index, folder in enumerate(parts[:-1]):
        kind = FOLDERS.get(folder.lower().removeprefix("fa_"))
        if kind:
            break
    else:
        return None
    if kind not in kinds:
        return None
    words = parts[-1].rsplit(".", 1)[0].split("_")
    colour = words.pop() if len(words) > 1 and re.fullmatch(r"\d{2}", words[-1]) else None
    footprint = None
    if kind == "object" and len(words) > 1:
        match = re.fullmatch(r"(\d+)x(\d+)", words[-1])
        if match:
            footprint = (int(match.group(1)), int(match.group(2)))
            words.pop()
    if kind == "token":
        kept = []
        for word in words:
            lower = word.lower()
            if lower in SIZES and footprint is None:
                footprint = (SIZES[lower], SIZES[lower])
            elif not re.fullmatch(r"scale\d+", lower):
                kept.append(word)
        words = kept
    if not words:
        return None
    stem = " ".join(words) + (f" {colour}" if colour else "")
    answer = {"kind": kind, "name": "/".join(parts[index + 1:-1] + [stem]), "scale": 1}
    if footprint:
        answer["footprint"] = {"width": footprint[0], "height": footprint[1]}
    return answer


def main():
    for line in sys.stdin:
        request = json.loads(line)
        method, params = request.get("method"), request.get("params") or {}
        reply = {"id": request.get("id")}
        if method == "hello":
            reply["result"] = {"protocol": 1, "id": PLUGIN_ID, "version": "1.0.0"}
        elif method == "name":
            reply["result"] = name(params["path"], set(params.get("kinds", [])))
        else:
            reply["error"] = {"code": "PLUGIN_FAILURE", "message": f"{PLUGIN_ID} does not serve '{method}'"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
