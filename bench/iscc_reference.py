"""The ISCC reference's Image-Code timed in its own loop, for bench/iscc.bench.ts:
iscc-core (ISCC_CORE_SRC: a checkout of iscc/iscc-core, 1.3.0) gen_image_code_v0 over the
ISCC SDK's normalisation on Pillow (test/helpers/pillow_iscc.py, Debian's python3-pil).

iscc-core imports at start modules that only its Meta-Code (jcs, data_url), its
Instance-Code (blake3) and its ISCC-ID explanations (uvarint, pybase64) use; Debian has
no package for them, so where they are missing empty stand-ins are registered: nothing
timed here reaches them. Its other dependencies are Debian's (python3-bitarray,
python3-more-itertools, python3-pydantic, python3-loguru, python3-base58, python3-xxhash).

  python3 iscc_reference.py decoded PATH N   best of N: normalisation + Image-Code of the decoded image
  python3 iscc_reference.py file PATH N      best of N: open + decode + normalisation + Image-Code
  python3 iscc_reference.py data PATH N      best of N: the Data-Code of the file (read in the reference's 2 MiB pieces)
  python3 iscc_reference.py text PATH N      best of N: the Text-Code of the file's text (read once, outside the loop)
Prints {"seconds": ..., "cpu_seconds": ..., "iscc": ...}.
"""
import json
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "helpers"))
from pillow_iscc import normalize  # noqa: E402
from PIL import Image  # noqa: E402


def load_iscc_core():
    src = os.environ.get("ISCC_CORE_SRC")
    if not src:
        raise SystemExit("set ISCC_CORE_SRC to an iscc-core checkout (iscc_core/ inside it)")
    sys.path.insert(0, src)
    for name, attrs in {
        "jcs": {"canonicalize": None},
        "data_url": {"DataURL": type("DataURL", (), {})},
        "blake3": {"blake3": type("blake3", (), {"AUTO": -1})},
        "uvarint": {},
        "pybase64": {},
    }.items():
        try:
            __import__(name)
        except ImportError:
            mod = types.ModuleType(name)
            for k, v in attrs.items():
                setattr(mod, k, v)
            if name == "pybase64":
                import base64

                mod.urlsafe_b64encode = base64.urlsafe_b64encode
                mod.urlsafe_b64decode = base64.urlsafe_b64decode
            sys.modules[name] = mod
    import iscc_core

    return iscc_core


def main(argv):
    what, path, n = argv[1], argv[2], int(argv[3])
    ic = load_iscc_core()
    best = best_cpu = float("inf")
    code = None
    decoded = None
    if what == "decoded":
        decoded = Image.open(path)
        decoded.load()
    text = open(path, encoding="utf-8").read() if what == "text" else None
    for _ in range(n):
        t, c = time.perf_counter(), time.process_time()
        if what == "data":
            with open(path, "rb") as f:
                code = ic.gen_data_code_v0(f, bits=64)["iscc"]
        elif what == "text":
            code = ic.gen_text_code_v0(text, bits=64)["iscc"]
        else:
            img = decoded if decoded is not None else Image.open(path)
            code = ic.gen_image_code_v0(normalize(img)["grey"], bits=64)["iscc"]
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    print(json.dumps({"seconds": best, "cpu_seconds": best_cpu, "iscc": code}))


if __name__ == "__main__":
    main(sys.argv)
