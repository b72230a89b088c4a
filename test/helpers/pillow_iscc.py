"""The ISCC SDK's image normalisation (iscc-sdk image.py image_normalize) run on Pillow,
for test/media/iscc.test.ts and bench/iscc.bench.ts to compare ours with.

Written here from the SDK's steps (EXIF transpose, transparency over white, border trim
by the top-left pixel, convert("L"), resize((32, 32), BICUBIC)); it imports only Pillow.

  python3 pillow_iscc.py file PATH...           one JSON line per file: {"grey": [1024], "box": [...], "mode": ...}
  python3 pillow_iscc.py pixels W H C < raw      the same for raw 8-bit pixels (C = 1, 3, 4), no EXIF step
  python3 pillow_iscc.py time PATH N             seconds per normalisation of the decoded image, best of N (stdout JSON)
"""
import json
import sys
import time

from PIL import Image, ImageChops, ImageOps

WHITE = (255, 255, 255)


def fill_transparency(img):
    if img.mode == "RGB":
        return img
    if img.mode in ("RGBA", "LA"):
        out = Image.new("RGB", img.size, WHITE)
        out.paste(img, mask=img.getchannel("A"))
        return out
    if img.mode == "P" and "transparency" in img.info:
        rgba = img.convert("RGBA")
        out = Image.new("RGB", img.size, WHITE)
        out.paste(rgba, mask=rgba.getchannel("A"))
        return out
    return img.convert("RGB")


def trim_border(img):
    bg = Image.new(img.mode, img.size, img.getpixel((0, 0)))
    diff = ImageChops.difference(img, bg)
    diff = ImageChops.add(diff, diff)
    bbox = diff.getbbox()
    if bbox != (0, 0) + img.size:
        # a uniform image has no box (None) and crop(None) is the whole image
        return img.crop(bbox), bbox or (0, 0) + img.size
    return img, (0, 0) + img.size


def normalize(img, exif=True):
    mode = img.mode
    if exif:
        img = ImageOps.exif_transpose(img)
    img = fill_transparency(img)
    img, box = trim_border(img)
    img = img.convert("L")
    img = img.resize((32, 32), Image.BICUBIC)
    return {"grey": list(img.getdata()), "box": list(box) if box else None, "mode": mode}


def main(argv):
    what = argv[1]
    if what == "file":
        for path in argv[2:]:
            try:
                with Image.open(path) as img:
                    print(json.dumps(normalize(img)), flush=True)
            except Exception as e:  # one line per file, whatever happens
                print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)
    elif what == "pixels":
        w, h, c = int(argv[2]), int(argv[3]), int(argv[4])
        raw = sys.stdin.buffer.read()
        img = Image.frombytes({1: "L", 3: "RGB", 4: "RGBA"}[c], (w, h), raw)
        print(json.dumps(normalize(img, exif=False)))
    elif what == "time":
        path, n = argv[2], int(argv[3])
        with Image.open(path) as img:
            img.load()
            best = float("inf")
            for _ in range(n):
                t = time.perf_counter()
                normalize(img)
                best = min(best, time.perf_counter() - t)
        print(json.dumps({"seconds": best}))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
